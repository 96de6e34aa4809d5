"""Kueue's pod-readiness wait: a job admitted onto nodes that never come gives its quota back.

Kueue v0.19.2 (config v1beta2) always runs `waitForPodsReady`; left out of the configuration it
times out after 30 minutes, with a 30-minute recovery timeout and endless requeues. The
platform writes its own: a timeout a cold GPU node fits in, no recovery timeout (with KubeRay
1.6.2 only a RayService can lose readiness once it had it, and an evicted endpoint is down whole),
and a requeue limit after which Kueue deactivates the job for good. The rehearsal rig runs the
same settings with its times scaled down.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import RunResult, run_program
from aksray.rehearse.rig.controllers.kueue import pods_ready_note, rig_kueue_config
from manifests.helm_values import kueue_manager_config
from settings import defaults
from settings.model import PodsReady
from tests.support.harness import assert_rejected, mutated, one, planned, write_stack
from tests.support.reference import chart as reference_chart

P = "aks-ray-platform:"
DEFAULT = PodsReady(defaults.DEFAULT_PODS_READY_TIMEOUT_MINUTES, defaults.DEFAULT_REQUEUE_LIMIT)


def pods_ready(result: RunResult) -> dict[str, Any]:
    release = one(result, "kubernetes:helm.sh/v3:Release", "aksray-operators-kueue")
    text = release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"]
    waiting = yaml.safe_load(text)["waitForPodsReady"]
    assert isinstance(waiting, dict)
    return waiting


def with_scheduling(tmp_path: Path, **keys: Any) -> Path:
    def change(config: dict[str, Any]) -> None:
        config[P + "scheduling"].update(keys)

    return write_stack(tmp_path, mutated("dev", change))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_kueue_gives_a_job_whose_pods_never_get_ready_its_quota_back(stack: str) -> None:
    assert pods_ready(planned(stack)) == {
        "timeout": "45m",
        "recoveryTimeout": "0s",
        "blockAdmission": False,
        "requeuingStrategy": {
            "timestamp": "Eviction",
            "backoffLimitCount": 3,
            "backoffBaseSeconds": 60,
            "backoffMaxSeconds": 1800,
        },
    }


@pytest.mark.reference
def test_the_keys_are_the_ones_the_chart_documents() -> None:
    """The chart's values.yaml carries Kueue's waitForPodsReady example as a comment."""
    text = (reference_chart("kueue") / "values.yaml").read_text()
    block = re.search(r"(?m)^(\s*)#waitForPodsReady:\n((?:\1#  .*\n)+)", text)
    assert block is not None
    example = yaml.safe_load(re.sub(r"(?m)^\s*#", "", block.group(2)))
    ours = kueue_manager_config(metrics=False, pods_ready=DEFAULT)["waitForPodsReady"]
    assert set(ours) == set(example)
    assert set(ours["requeuingStrategy"]) == set(example["requeuingStrategy"])


def test_the_timeout_and_the_requeue_limit_are_the_stacks(tmp_path: Path) -> None:
    result = run_program(with_scheduling(tmp_path, podsReadyTimeoutMinutes=90, requeueLimit=0))
    assert result.ok, result.problems
    waiting = pods_ready(result)
    assert waiting["timeout"] == "90m"
    assert waiting["requeuingStrategy"]["backoffLimitCount"] == 0
    assert waiting["recoveryTimeout"] == "0s"  # not a setting: the endpoint must never be evicted


def test_the_defaults_live_in_the_defaults_table() -> None:
    settings = planned("dev").settings.scheduling.pods_ready
    assert settings.timeout_minutes == defaults.DEFAULT_PODS_READY_TIMEOUT_MINUTES == 45
    assert settings.requeue_limit == defaults.DEFAULT_REQUEUE_LIMIT == 3


@pytest.mark.parametrize(
    ("key", "value"),
    [
        # Below 15 minutes a cold GPU node (boot, driver, the Ray image) does not make it.
        ("podsReadyTimeoutMinutes", 14),
        ("podsReadyTimeoutMinutes", 1441),
        ("podsReadyTimeoutMinutes", "45m"),
        ("requeueLimit", -1),
        ("requeueLimit", 101),
        ("requeueLimit", "unlimited"),
    ],
)
def test_out_of_range_values_are_refused_at_their_path(
    tmp_path: Path, key: str, value: Any
) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "scheduling"][key] = value

    assert_rejected(tmp_path, mutated("dev", change), f"scheduling.{key}")


def test_a_misspelt_key_is_refused_with_the_right_one(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "scheduling"]["podsReadyTimeout"] = 30

    run = assert_rejected(tmp_path, mutated("dev", change), "scheduling.podsReadyTimeout")
    assert "podsReadyTimeoutMinutes" in run.stderr


# --------------------------------------------------------------------------------------------
# The rehearsal rig: the same settings, the times scaled down
# --------------------------------------------------------------------------------------------


def test_the_rig_keeps_the_stacks_pod_readiness_rules_and_scales_only_the_times(
    tmp_path: Path,
) -> None:
    platform = kueue_manager_config(
        metrics=False, pods_ready=planned("prod").settings.scheduling.pods_ready
    )
    rig = rig_kueue_config(platform, tmp_path, 9443, 18081)["waitForPodsReady"]
    assert rig == {
        "timeout": "90s",
        "recoveryTimeout": "0s",  # off stays off: the rig must not evict what AKS would keep
        "blockAdmission": False,
        "requeuingStrategy": {
            "timestamp": "Eviction",
            "backoffLimitCount": 3,
            "backoffBaseSeconds": 5,
            "backoffMaxSeconds": 30,
        },
    }
    assert platform["waitForPodsReady"]["timeout"] == "45m"  # the platform's copy is untouched


def test_the_rig_runs_a_stacks_own_requeue_limit(tmp_path: Path) -> None:
    result = run_program(with_scheduling(tmp_path, requeueLimit=1))
    platform = kueue_manager_config(metrics=False, pods_ready=result.settings.scheduling.pods_ready)
    rig = rig_kueue_config(platform, tmp_path, 9443, 18081)["waitForPodsReady"]
    assert rig["requeuingStrategy"]["backoffLimitCount"] == 1


def test_every_report_says_what_the_rig_scaled() -> None:
    platform = kueue_manager_config(
        metrics=False, pods_ready=planned("dev").settings.scheduling.pods_ready
    )
    assert pods_ready_note(platform) == (
        "Kueue waitForPodsReady timeout 45m (the platform's) runs as 90s on the rig, "
        "recoveryTimeout 0s (off) as on AKS, requeue backoff 60-1800s as 5-30s, "
        "deactivated after 3 requeues as on AKS"
    )

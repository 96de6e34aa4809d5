"""Tier T5: `aksray verify` on the rig, after the real engine applied prod's queues.

The rig stands in for its host-process controllers as a deployed cluster shows them
(aksray/rehearse/rig/stand_ins.py). Right after `pulumi up`, verify finds no drift (exit 0) and
notes the rig's own differences (KAI v0.12.0, Kueue's scaled times); after three drifts made by
hand, a LocalQueue deleted, a ClusterQueue's quota changed and an action added to KAI's
configuration, it names each of them, one line each (exit 1).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT
from aksray.rehearse.rig.engine import EngineStack
from aksray.rehearse.rig.prerequisites import engine_toolchain
from aksray.rehearse.scenarios.context import all_off
from aksray.rehearse.stack import read_stack_file, rehearsal_config, stack_workloads
from tests.support.harness import cli

pytestmark = [pytest.mark.rehearsal, pytest.mark.reference]

STACK: Final = PROJECT_ROOT / "stacks" / "Pulumi.prod.yaml"
KUEUE: Final = "/apis/kueue.x-k8s.io/v1beta2"
KAI_CONFIG: Final = "/api/v1/namespaces/kai-scheduler/configmaps/kai-scheduler-default"


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A rig with prod's objects applied by the real engine, and the stack file it applied."""
    from aksray.offline.runner import run_program
    from aksray.rehearse.rig.bringup import start_rig
    from aksray.rehearse.rig.controllers.kai import KaiSetup
    from aksray.rehearse.rig.controlplane import remove_run_data, rig_run_dir
    from aksray.rehearse.rig.prerequisites import rig_toolchain
    from manifests.helm_values import kueue_manager_config

    settings = run_program(STACK, stack="prod").settings
    run_dir = rig_run_dir()
    kueue = kueue_manager_config(metrics=False, pods_ready=settings.scheduling.pods_ready)
    plane = start_rig(rig_toolchain(), run_dir, kueue, KaiSetup.of(settings))
    stack = read_stack_file(STACK)
    context = str(yaml.safe_load(Path(plane.kubeconfig).read_text())["current-context"])
    config = rehearsal_config(stack, context, all_off(stack_workloads(stack)))
    # As a stack on a cluster whose operators it does not install declares them (README,
    # "Queues and quotas"): the actions the cluster's KAI runs.
    config["aks-ray-platform:operators"]["kaiActions"] = ["allocate"]
    engine = EngineStack(
        engine_toolchain(), run_dir / "verify", "verify", Path(plane.kubeconfig),
        Path(sys.executable).parent,
    )  # fmt: skip
    engine.init()
    took = engine.up(config, "verify")
    stack_file = tmp_path_factory.mktemp("verify") / "Pulumi.verify.yaml"
    stack_file.write_text(yaml.safe_dump({"config": config}))
    yield plane, stack_file, took
    engine.destroy()
    plane.stop()
    remove_run_data(run_dir)


def _verify(stack_file: Path, kubeconfig: Path) -> Any:
    started = time.monotonic()
    run = cli("verify", "--config", stack_file, "--kubeconfig", kubeconfig)
    print(f"verify in {time.monotonic() - started:.1f}s: {run.stdout}")  # the measurement, -s
    return run


def test_after_pulumi_up_everything_matches(applied: Any) -> None:
    plane, stack_file, took = applied
    run = _verify(stack_file, Path(plane.kubeconfig))
    assert run.code == 0, run.output
    lines = run.stdout.splitlines()
    assert not [line for line in lines if line.startswith("drift: ")]
    notes = [line for line in lines if line.startswith("note: ")]
    assert any(
        "kai-scheduler" in n and "v0.12.0" in n and "rehearsal rig's own" in n for n in notes
    )
    assert any("waitForPodsReady.timeout" in n and "rehearsal rig's own" in n for n in notes)
    assert not [n for n in notes if "KAI's actions" in n]  # declared, and as declared
    assert lines[-1].endswith(": no drift")
    print(f"pulumi up of prod's objects in {took:.1f}s")


def test_each_drift_made_by_hand_is_found(applied: Any) -> None:
    plane, stack_file, _ = applied
    kube = plane.kube
    kube.delete(f"{KUEUE}/namespaces/nlp/localqueues/nlp")
    training = kube.get(f"{KUEUE}/clusterqueues/training")
    h100 = training["spec"]["resourceGroups"][0]["flavors"][1]
    # The API server keeps a quantity as a string.
    assert (h100["name"], h100["resources"][2]["nominalQuota"]) == ("h100", "24")
    h100["resources"][2]["nominalQuota"] = "16"
    kube.request("PUT", f"{KUEUE}/clusterqueues/training", training)
    kai = kube.get(KAI_CONFIG)
    config = yaml.safe_load(kai["data"]["config.yaml"])
    config["actions"] = "allocate, reclaim"
    kai["data"]["config.yaml"] = yaml.safe_dump(config)
    kube.request("PUT", KAI_CONFIG, kai)
    deadline = time.monotonic() + 30  # the LocalQueue's deletion, through its finalizer
    while (
        kube.get_or_none(f"{KUEUE}/namespaces/nlp/localqueues/nlp") and time.monotonic() < deadline
    ):
        time.sleep(0.5)
    run = _verify(stack_file, Path(plane.kubeconfig))
    assert run.code == 1, run.output
    drifts = [line for line in run.stdout.splitlines() if line.startswith("drift: ")]
    assert drifts == [
        "drift: KAI's actions (ConfigMap kai-scheduler/kai-scheduler-default, config.yaml): the "
        "scheduler runs allocate, reclaim, the plan says allocate: any action besides allocate "
        "evicts pods Kueue admitted",
        "drift: ClusterQueue training: spec.resourceGroups[0].flavors[1].resources[2]."
        "nominalQuota is 16, the plan says 24",
        "drift: LocalQueue nlp/nlp: is missing",
    ]
    assert run.stdout.splitlines()[-1].endswith(": 3 drifts")

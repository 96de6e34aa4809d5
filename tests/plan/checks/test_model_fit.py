"""A workload's model against its GPUs' memory: each GPU workload declares what it needs, and
a pool whose GPUs hold less is refused where the workload lands on it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from catalog.vm_sizes import VM_SIZES
from tests.support.harness import P, plan_findings
from tests.support.minimal_stack import config, minimal, teams
from workloads.catalog import WORKLOADS

G = "cluster.gpuPools"


def _on(vm_size: str, workload: str = "llm-serve") -> dict[str, Any]:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["vmSize"] = vm_size
    if workload != "llm-serve":
        config(document)[P + "workloads"] = {
            "llm-serve": {"enabled": False},
            workload: {"enabled": True, "team": "team-a"},
        }
    return document


def test_the_endpoint_on_a_16_gb_t4_is_refused(tmp_path: Path) -> None:
    code, errors, _ = plan_findings(tmp_path, _on("Standard_NC16as_T4_v3"))
    assert code == 1
    assert errors == [
        f"error: {G}[0].vmSize: llm-serve needs a GPU with 20 GB of memory for its model, but "
        "pool a100's Standard_NC16as_T4_v3 has T4 GPUs with 16 GB: it would start and fail "
        "loading the model; use a size with larger GPUs (e.g. Standard_NV36adms_A10_v5, "
        "Standard_NV36ads_A10_v5, Standard_NC24ads_A100_v4), or move team team-a's quota "
        "(scheduling.departments[0].teams[0].quota.a100) to a pool that has them"
    ]


def test_aurora_on_a_24_gb_a10_is_refused(tmp_path: Path) -> None:
    code, errors, _ = plan_findings(tmp_path, _on("Standard_NV36ads_A10_v5", "aurora-finetune"))
    assert code == 1
    assert errors == [
        f"error: {G}[0].vmSize: aurora-finetune needs a GPU with 80 GB of memory for its "
        "model, but pool a100's Standard_NV36ads_A10_v5 has A10 GPUs with 24 GB: it would "
        "start and fail loading the model; use a size with larger GPUs (e.g. "
        "Standard_NC24ads_A100_v4, Standard_NC40ads_H100_v5, Standard_NC48ads_A100_v4), or "
        "move team team-a's quota (scheduling.departments[0].teams[0].quota.a100) to a pool "
        "that has them"
    ]


def test_the_endpoint_on_a_24_gb_a10_plans(tmp_path: Path) -> None:
    code, errors, _ = plan_findings(tmp_path, _on("Standard_NV36ads_A10_v5"))
    assert (code, errors) == (0, [])


def test_a_fallback_flavor_with_small_gpus_is_a_warning(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"].append(
        {"name": "t4", "vmSize": "Standard_NC16as_T4_v3", "maxCount": 2}
    )
    teams(document)[0]["quota"]["t4"] = {"gpu": 2}
    code, errors, warnings = plan_findings(tmp_path, document)
    assert (code, errors) == (0, [])
    assert warnings == [
        f"warning: {G}[1].vmSize: llm-serve needs a GPU with 20 GB of memory for its model, but "
        "pool t4's Standard_NC16as_T4_v3 has T4 GPUs with 16 GB: Kueue gives it this flavor "
        "when a100 is full, and then it fails loading the model; take team team-a's quota off "
        "this flavor (scheduling.departments[0].teams[0].quota.t4) or use a size with larger "
        "GPUs"
    ]


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_gpu_workload_declares_what_its_model_needs(name: str) -> None:
    spec = WORKLOADS[name]
    uses_gpus = any(group.pod.gpus for group in spec.workers)
    assert (spec.gpu_memory_gb > 0) == uses_gpus
    # Something in the catalog holds it, or the workload could never run anywhere.
    assert not uses_gpus or max(s.gpu_memory_gb for s in VM_SIZES.values()) >= spec.gpu_memory_gb


def test_what_a_model_needs_stays_out_of_the_run() -> None:
    """A planner fact is no new run: finished jobs do not run again when it changes."""
    spec = WORKLOADS["qwen-lora"]
    assert "gpu_memory_gb" not in spec.run_fields()
    assert replace(spec, gpu_memory_gb=999).run_fields() == spec.run_fields()
    assert replace(spec, default_priority="inference").run_fields() != spec.run_fields()

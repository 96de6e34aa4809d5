"""The base model in Blob: a workload that streams it needs model-stage's copy first."""

from __future__ import annotations

from collections.abc import Iterable

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import Plan
from manifests.ray import model_path
from settings.model import WorkloadSettings, workload_path
from settings.workloads import STAGING_WORKLOAD


def check_model_staged(plan: Plan, out: Findings) -> None:
    """A workload the stack starts that streams the base model from Blob, while the stack does
    not start model-stage, which copies it there (disabled, or staged without a `run`)."""
    stage = next((w for w in plan.settings.workloads if w.name == STAGING_WORKLOAD), None)
    if stage is None:
        # A MultiKueue worker that model-stage is never sent to: the stack's own model-stage
        # decides (aksray/plan/checks/multikueue.py runs this with it).
        return
    staged_model_warnings(stage, [reader.workload for reader in plan.workloads], out)


def staged_model_warnings(
    stage: WorkloadSettings, readers: Iterable[WorkloadSettings], out: Findings
) -> None:
    """The check above, with model-stage's settings and the workloads started given."""
    if stage.enabled and not stage.staged:
        return
    for settings in readers:
        path = model_path(settings)
        if path is None or settings.staged:
            continue
        out.warning(
            f"{workload_path(settings.name)}.modelSource",
            f"{settings.name} streams the base model from Blob (models/{path}), which "
            f"{STAGING_WORKLOAD} copies there, but this stack does not start {STAGING_WORKLOAD}: "
            f"it fails to load until a {STAGING_WORKLOAD} run has finished once. Set "
            f"{workload_path(STAGING_WORKLOAD)}.run (the copy is made once and skipped after), "
            "or set modelSource: huggingface",
        )

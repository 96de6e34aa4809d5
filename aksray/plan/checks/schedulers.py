"""The two schedulers' vocabulary: priority classes and Kueue's integrations."""

from __future__ import annotations

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import Plan
from catalog.priorities import PRIORITY_CLASSES
from manifests.helm_values import KUEUE_FRAMEWORK_BY_KIND
from settings.model import workload_path


def check_priority_classes(plan: Plan, out: Findings) -> None:
    """Both schedulers know every workload's priority, from one table (catalog/priorities.py).

    Kueue never admits a workload whose WorkloadPriorityClass is missing; KAI, missing its
    PriorityClass, falls back to `train` and orders the gang's pods unlike Kueue does.
    """
    reg = plan.registered
    for workload in plan.workloads:
        priority = workload.workload.priority
        missing = [
            (what, consequence)
            for what, names, consequence in (
                (
                    "Kueue WorkloadPriorityClass",
                    reg.kueue_priority_classes,
                    "Kueue never admits the workload",
                ),
                (
                    "KAI PriorityClass",
                    reg.kai_priority_classes,
                    "KAI would place it as train, out of Kueue's order",
                ),
            )
            if priority not in names
        ]
        if missing:
            out.error(
                f"{workload_path(workload.spec.name)}.priority",
                f"priority {priority!r} has no {' and no '.join(w for w, _ in missing)}: "
                f"{'; '.join(c for _, c in missing)}; both schedulers need the class "
                f"({', '.join(PRIORITY_CLASSES)})",
            )


def check_kueue_integrations(plan: Plan, out: Findings) -> None:
    reg = plan.registered
    source = (
        "the Kueue release's configuration"
        if reg.installed_kueue
        else "the integrations an existing cluster's Kueue must enable"
    )
    for workload in plan.workloads:
        kind = workload.spec.kind
        framework = KUEUE_FRAMEWORK_BY_KIND.get(kind)
        if framework is not None and framework in reg.kueue_frameworks:
            continue
        out.error(
            f"{workload_path(workload.spec.name)}.enabled",
            f"{workload.spec.name} is a {kind}, but {source} does not enable "
            f"{framework or 'an integration for it'} (enabled: "
            f"{', '.join(reg.kueue_frameworks) or 'none'}): Kueue would never suspend or "
            "admit it, so it would bypass the team's quota; enable the integration or disable "
            "the workload",
        )

"""KAI only places: its queues hold no quota and its scheduler evicts nothing Kueue admitted.

One scheduling authority (manifests/kai.py, manifests/helm_values.py): Kueue decides who runs,
KAI where. These checks catch what would bring a second authority back: a KAI queue with a
quota or limit of its own (a second admission gate, and reclaim), a KAI scheduler that keeps an
eviction action, a cluster's own KAI whose actions the stack cannot see, and a team setting
that no longer does anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aksray.plan.checks.findings import Findings, listed
from aksray.plan.model.kai_queues import kai_amount, parent_queue
from aksray.plan.model.plan import Plan
from catalog.kai import EVICTING_ACTIONS, KAI_ACTIONS, KAI_RESOURCES, PLACING_ACTION
from catalog.quantities import UNLIMITED
from settings.defaults import DEFAULT_OVER_QUOTA_WEIGHT

_TURN_OFF = ", ".join(f"scheduler.actions.{name}.enabled: false" for name in EVICTING_ACTIONS)


def check_kai_queues_unlimited(plan: Plan, out: Findings) -> None:
    """Every KAI queue, department and team, has quota and limit -1 for cpu, gpu and memory."""
    scheduling = plan.settings.scheduling
    departments = {d.name for d in scheduling.departments}
    teams = {t.name for t in scheduling.teams}
    for name, queue in plan.registered.kai_queues.items():
        finite = _finite(queue)
        if not finite:
            continue
        if parent_queue(queue) is None and name in departments:
            path = scheduling.department_path(name)
        else:
            path = scheduling.team_path(name) if name in teams else "scheduling"
        out.error(
            path,
            f"KAI queue {name} is not unlimited ({'; '.join(finite)}): Kueue alone holds the "
            "quota, and a KAI quota or limit of its own is a second gate that can leave a gang "
            "Kueue admitted Pending (OverLimit, NonPreemptibleOverQuota; a limit left out counts "
            "as 0) and lets KAI reclaim; every KAI queue must have quota and limit -1 "
            "(manifests/kai.py)",
        )


def _finite(queue: Mapping[str, Any]) -> list[str]:
    """`gpu quota 4`, `cpu limit missing`: what keeps a KAI queue from being unlimited."""
    resources = queue["spec"].get("resources") or {}
    found = []
    for resource in KAI_RESOURCES:
        for key in ("quota", "limit"):
            if key not in (resources.get(resource) or {}):
                found.append(f"{resource} {key} missing")
            elif (value := kai_amount(queue, resource, key)) != UNLIMITED:
                found.append(f"{resource} {key} {value}")
    return found


def check_kai_never_evicts(plan: Plan, out: Findings) -> None:
    """KAI's scheduler runs no action that evicts (catalog/kai.py): allocate alone."""
    reg = plan.registered
    if reg.kai_actions is None:
        _unknown_actions(plan, out)
        return
    evicting = [a for a in reg.kai_actions if a in EVICTING_ACTIONS]
    strange = [a for a in reg.kai_actions if a not in KAI_ACTIONS]
    if not evicting and not strange:
        return
    found = []
    if evicting:
        found.append(
            f"runs {listed(evicting)}, which evict{'s' if len(evicting) == 1 else ''} running "
            "pods of workloads Kueue admitted, behind Kueue's back and without waiting for the "
            "autoscaler's nodes"
        )
    if strange:
        found.append(f"names {listed(strange)}, which KAI does not have, so it would not start")
    if reg.kai_unknown_actions:
        found.append(
            f"scheduler.actions names {listed(list(reg.kai_unknown_actions))}, no KAI action: a "
            "misspelt name leaves the real action on"
        )
    if reg.installed_kai:
        where, fix = "the KAI release's scheduler", f"set {_TURN_OFF} in its values"
    else:
        where, fix = (
            "the cluster's KAI scheduler, as operators.kaiActions declares it,",
            f"install it with {_TURN_OFF}, then declare operators.kaiActions: [{PLACING_ACTION}]",
        )
    out.error(
        _actions_path(plan),
        f"{where} {'; '.join(found)}: Kueue alone preempts and reclaims, KAI only places "
        f"({PLACING_ACTION}); {fix}",
    )


def _actions_path(plan: Plan) -> str:
    return "operators" if plan.registered.installed_kai else "operators.kaiActions"


def _unknown_actions(plan: Plan, out: Findings) -> None:
    if plan.registered.installed_kai:
        out.error(
            _actions_path(plan),
            "the KAI release renders no default SchedulingShard (defaultShard.enabled is not "
            "true), so the stack does not decide which actions KAI's scheduler runs; keep "
            f"defaultShard.enabled: true with {_TURN_OFF}",
        )
        return
    out.warning(
        _actions_path(plan),
        "the stack does not install KAI (operators.install: false), so it cannot turn off the "
        "cluster's KAI eviction actions, and KAI may evict gangs Kueue admitted: run the "
        f"cluster's KAI with {_TURN_OFF} (its scheduler then runs {PLACING_ACTION} alone) and "
        f"declare operators.kaiActions: [{PLACING_ACTION}]",
    )


def check_over_quota_weight(plan: Plan, out: Findings) -> None:
    """A team's overQuotaWeight does nothing while every KAI queue is unlimited."""
    scheduling = plan.settings.scheduling
    for team in scheduling.teams:
        if team.over_quota_weight == DEFAULT_OVER_QUOTA_WEIGHT:
            continue
        out.warning(
            f"{scheduling.team_path(team.name)}.overQuotaWeight",
            f"team {team.name}'s overQuotaWeight {team.over_quota_weight} has no effect: every "
            "KAI queue is unlimited, so KAI divides no capacity beyond quotas; Kueue lends a "
            "cohort's idle quota (borrowingLimit, lendingLimit): leave overQuotaWeight out",
        )

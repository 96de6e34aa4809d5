"""The plan summary's access part: who may do what where, and every Azure role assignment the
stack makes against the subscription's limit.

Read from the objects the program registers: the RoleBindings in each team namespace (which
groups), the ClusterRoles they bind (what they allow), the namespaces' labels (which priorities
the admission policies let each team use), the admission policies themselves, and every
`azure-native:authorization:RoleAssignment` (counted; settings/access/role_assignments.py says which
kind each is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from aksray.plan.model.plan import Plan
from aksray.plan.report.tables import Render, text_table
from catalog.azure import MAX_ROLE_ASSIGNMENTS_PER_SUBSCRIPTION
from catalog.priorities import PRIORITY_CLASSES
from manifests.access.team_roles import MEMBER_ROLE, VIEWER_ROLE
from manifests.namespaces import PRIORITY_NAMESPACE_LABEL_PREFIX
from settings.access.role_assignments import role_assignments

ROLE_BINDING: Final = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
CLUSTER_ROLE: Final = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
NAMESPACE: Final = "kubernetes:core/v1:Namespace"
POLICY: Final = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
ROLE_ASSIGNMENT: Final = "azure-native:authorization:RoleAssignment"
ROLES: Final = {MEMBER_ROLE: "members", VIEWER_ROLE: "viewers"}


def _rule_text(rule: Mapping[str, Any]) -> str:
    groups = [g or "core" for g in rule.get("apiGroups", [])]
    resources = ", ".join(rule.get("resources", []))
    return f"{'/'.join(rule.get('verbs', []))} {resources} ({', '.join(groups)})"


def access(plan: Plan) -> dict[str, Any]:
    result = plan.result
    groups: dict[tuple[str, str], list[str]] = {}
    for binding in result.by_type(ROLE_BINDING):
        role = binding.inputs["roleRef"]["name"]
        if role in ROLES:
            namespace = binding.inputs["metadata"]["namespace"]
            groups[(namespace, role)] = [s["name"] for s in binding.inputs.get("subjects", [])]
    priorities = {
        ns.inputs["metadata"]["name"]: sorted(
            (
                key.removeprefix(PRIORITY_NAMESPACE_LABEL_PREFIX)
                for key in (ns.inputs["metadata"].get("labels") or {})
                if key.startswith(PRIORITY_NAMESPACE_LABEL_PREFIX)
            ),
            key=lambda name: PRIORITY_CLASSES.get(name, 0),
        )
        for ns in result.by_type(NAMESPACE)
    }
    settings = plan.settings
    teams = [
        {
            "team": team.name,
            "namespace": team.namespace,
            "members": groups.get((team.namespace, MEMBER_ROLE), []),
            "viewers": groups.get((team.namespace, VIEWER_ROLE), []),
            "priorities": priorities.get(team.namespace, []),
        }
        for team in settings.scheduling.teams
    ]
    roles = {
        ROLES[r.inputs["metadata"]["name"]]: [_rule_text(rule) for rule in r.inputs["rules"]]
        for r in result.by_type(CLUSTER_ROLE)
        if r.inputs["metadata"]["name"] in ROLES
    }
    kinds = role_assignments(
        settings.cluster,
        settings.storage,
        settings.scheduling,
        settings.observability,
        settings.multikueue,
    )
    return {
        "teams": teams,
        "roles": roles,
        "admissionPolicies": sorted(p.inputs["metadata"]["name"] for p in result.by_type(POLICY)),
        "roleAssignments": {
            "count": len(result.by_type(ROLE_ASSIGNMENT)),
            "limit": MAX_ROLE_ASSIGNMENTS_PER_SUBSCRIPTION,
            "byKind": kinds,
        },
    }


def access_lines(data: Mapping[str, Any], render: Render = text_table) -> list[str]:
    policies = ", ".join(data["admissionPolicies"]) or "none"
    rows: Sequence[Sequence[object]] = [
        (
            t["team"],
            t["namespace"],
            ", ".join(t["members"]) or "-",
            ", ".join(t["viewers"]) or "-",
            ", ".join(t["priorities"]) or "-",
        )
        for t in data["teams"]
    ]
    lines = render(
        "Team access (Kubernetes RBAC in each team's namespace only; the admission policies "
        f"{policies} refuse every GPU outside the team's queue)",
        ("team", "namespace", "members", "viewers", "may submit at"),
        rows,
    )
    if render is not text_table:
        lines.append("")  # a Markdown table ends only at a blank line
    for who, rules in data["roles"].items():
        lines.append(f"  {who} may: {'; '.join(rules)}")
    assignments = data["roleAssignments"]
    kinds = ", ".join(f"{count:,} {kind}" for kind, count in assignments["byKind"].items())
    lines.append(
        f"Azure role assignments: {assignments['count']:,} of the "
        f"{assignments['limit']:,} a subscription allows" + (f" ({kinds})" if kinds else "")
    )
    return lines

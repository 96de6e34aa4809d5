"""What a team's people may do (manifests/access/team_roles.py): exactly these verbs on these
resources, in their own namespace only, and nothing that reaches a Secret, a pod of their own
or another identity."""

from __future__ import annotations

from typing import Any

from manifests.access.team_roles import MEMBER_ROLE, VIEWER_ROLE, team_role_binding, team_roles

READ = ["get", "list", "watch"]


def _grants(role: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def _roles() -> dict[str, dict[str, Any]]:
    return {role["metadata"]["name"]: role for role in team_roles()}


def test_a_member_submits_and_follows_ray_work_and_nothing_more() -> None:
    member = _roles()[MEMBER_ROLE]
    assert member["kind"] == "ClusterRole"  # granted per namespace by a RoleBinding
    reads = {
        (group, resource, verb)
        for group, resources in (
            ("ray.io", ("rayjobs", "rayservices", "rayclusters")),
            ("kueue.x-k8s.io", ("workloads", "localqueues")),
            ("", ("pods", "pods/log", "services", "events")),
            ("events.k8s.io", ("events",)),
        )
        for resource in resources
        for verb in READ
    }
    writes = {
        ("ray.io", resource, verb)
        for resource in ("rayjobs", "rayservices")
        for verb in ("create", "update", "patch", "delete")
    }
    assert _grants(member) == reads | writes | {("", "pods/portforward", "create")}


def test_a_viewer_only_reads() -> None:
    viewer = _roles()[VIEWER_ROLE]
    assert {verb for _, _, verb in _grants(viewer)} == set(READ)
    assert {(g, r) for g, r, _ in _grants(viewer)} == {
        (g, r) for g, r, v in _grants(_roles()[MEMBER_ROLE]) if v in READ
    }


def test_nothing_reaches_secrets_own_pods_or_another_identity() -> None:
    for role in team_roles():
        grants = _grants(role)
        resources = {r for _, r, _ in grants}
        assert not resources & {
            "secrets", "serviceaccounts", "serviceaccounts/token", "pods/exec", "pods/attach",
            "pods/ephemeralcontainers", "roles", "rolebindings", "configmaps", "raycronjobs",
            "resourceclaims", "jobs", "deployments",
        }  # fmt: skip
        assert ("", "pods", "create") not in grants
        assert ("ray.io", "rayclusters", "create") not in grants
        assert not any("*" in part for grant in grants for part in grant)


def test_a_binding_names_the_groups_in_the_teams_namespace() -> None:
    binding = team_role_binding("llm-serving", "serving", MEMBER_ROLE, ("g-1", "g-2"))
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": MEMBER_ROLE,
            "namespace": "llm-serving",
            "labels": {
                "app.kubernetes.io/managed-by": "aks-ray-platform",
                "aksray.io/team": "serving",
            },
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": MEMBER_ROLE,
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g-1"},
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g-2"},
        ],
    }

"""Team access and the admission policies under mocks (components/team_access.py,
components/admission.py, manifests/namespaces.py): what each stack registers, in which
namespace, with which provider and after what."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.offline.mocks import placeholder
from aksray.offline.runner import RunResult, run_program
from manifests.access.team_roles import AKS_CLUSTER_USER_ROLE
from tests.support.harness import P, mutated, one, planned, write_stack
from tests.support.minimal_stack import run

SHARED = "6f1c2a9e-0b7d-4c6a-9a5e-2f3d4b5c6d7e"
OWN = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
NAMESPACE = "kubernetes:core/v1:Namespace"
POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
POLICY_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
ROLE = "azure-native:authorization:RoleAssignment"


def _groups(config: dict[str, Any], *, grants: bool = True) -> None:
    research = config[P + "scheduling"]["departments"][0]["teams"]
    research[0]["members"] = [SHARED]
    research[1]["members"] = [SHARED]
    research[1]["viewers"] = [OWN]
    config[P + "cluster"]["createRoleAssignments"] = grants


@pytest.fixture
def with_groups(tmp_path: Path) -> RunResult:
    result = run(tmp_path, mutated("prod", _groups))
    assert result.ok, result.problems
    return result


def test_each_team_binds_its_groups_in_its_own_namespace(with_groups: RunResult) -> None:
    bindings = {
        (b.inputs["metadata"]["namespace"], b.inputs["roleRef"]["name"]): [
            s["name"] for s in b.inputs["subjects"]
        ]
        for b in with_groups.by_type(BINDING)
    }
    assert bindings == {
        ("nlp", "aksray-team-member"): [SHARED],
        ("vision", "aksray-team-member"): [SHARED],
        ("vision", "aksray-team-viewer"): [OWN],
    }
    binding = one(with_groups, BINDING, "aksray-access-vision-viewer")
    assert one(with_groups, NAMESPACE, "aksray-teams-vision").urn in binding.depends_on
    assert one(with_groups, CLUSTER_ROLE, "aksray-access-aksray-team-viewer").urn in (
        binding.depends_on
    )
    provider = one(with_groups, "pulumi:providers:kubernetes", "aksray-cluster-k8s").urn
    assert binding.provider_urn == provider
    assert sorted(r.name for r in with_groups.by_type(CLUSTER_ROLE) if "-access-" in r.name) == [
        "aksray-access-aksray-team-member",
        "aksray-access-aksray-team-viewer",
    ]


def test_each_group_may_fetch_the_kubeconfig_once(with_groups: RunResult) -> None:
    grants = {r.name: r.inputs for r in with_groups.by_type(ROLE) if "-kubeconfig-" in r.name}
    cluster = placeholder("id of ManagedCluster aksray-cluster-aks")
    role = (
        f"/subscriptions/{placeholder('subscription id')}/providers/"
        f"Microsoft.Authorization/roleDefinitions/{AKS_CLUSTER_USER_ROLE}"
    )
    assert {name: (i["scope"], i["principalId"], i["principalType"], i["roleDefinitionId"])
            for name, i in grants.items()} == {
        f"aksray-access-kubeconfig-{SHARED}": (cluster, SHARED, "Group", role),
        f"aksray-access-kubeconfig-{OWN}": (cluster, OWN, "Group", role),
    }  # fmt: skip


def test_no_kubeconfig_role_where_the_stack_writes_none(tmp_path: Path) -> None:
    result = run(tmp_path, mutated("prod", lambda c: _groups(c, grants=False)))
    assert result.by_type(ROLE) == []
    assert len(result.by_type(BINDING)) == 3  # the Kubernetes half stays


def test_an_existing_cluster_gets_the_kubernetes_half(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "scheduling"]["departments"][0]["teams"][0]["members"] = ["team-a-devs"]

    result = run(tmp_path, mutated("local", change))
    assert result.ok, result.problems
    (binding,) = result.by_type(BINDING)
    assert binding.inputs["subjects"][0]["name"] == "team-a-devs"
    assert result.by_type(ROLE) == []


def test_a_stack_whose_teams_name_no_group_binds_nothing() -> None:
    dev = planned("dev")
    assert dev.by_type(BINDING) == []
    assert [r.name for r in dev.by_type(CLUSTER_ROLE) if "-access-" in r.name] == []


@pytest.mark.parametrize("stack", ["dev", "prod", "local", "multiregion"])
def test_every_stack_registers_the_admission_policies(stack: str) -> None:
    result = planned(stack)
    # A MultiKueue stack's teams submit to the manager; each worker holds the policy that keeps
    # the manager's credential to its teams' queues (manifests/access/multikueue.py).
    workers = ["aksray-multikueue-queue-required"] * 2 if stack == "multiregion" else []
    assert sorted(p.inputs["metadata"]["name"] for p in result.by_type(POLICY)) == [
        *workers,
        "aksray-team-pod-specs",
        "aksray-team-ray",
    ]
    namespaces = {n.urn for n in result.by_type(NAMESPACE) if "aksray-teams-" in n.name}
    # The manager's teams (a MultiKueue stack's workers have namespaces of their own).
    manager = {n for n in namespaces if "-teams-" in n and "aksray-teams-" in n.split("::")[-1]}
    team_bindings = [b for b in result.by_type(POLICY_BINDING) if "-team-" in b.name]
    assert len(team_bindings) == 2
    for binding in team_bindings:
        assert manager and manager <= set(binding.depends_on), binding.name


def test_team_namespaces_carry_what_the_policies_read() -> None:
    prod = planned("prod")
    serving = one(prod, NAMESPACE, "aksray-teams-serving").inputs["metadata"]
    assert {k: v for k, v in serving["labels"].items() if "aksray.io" in k} == {
        "aksray.io/team": "serving",
        "aksray.io/department": "applied",
        "aksray.io/local-queue": "serving",
        "aksray.io/kai-queue": "serving",
        "priority.aksray.io/inference": "allowed",
    }
    assert serving["annotations"] == {"aksray.io/priorities": "inference"}


def test_a_cluster_names_the_service_account_its_kuberay_runs_as(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "operators"]["kuberayServiceAccount"] = "ray-system/my-kuberay"

    result = run(tmp_path, mutated("local", change))
    assert result.ok, result.problems
    for policy in result.by_type(POLICY):
        kuberay = next(v for v in policy.inputs["spec"]["variables"] if v["name"] == "kuberay")
        assert kuberay["expression"] == (
            "request.userInfo.username == 'system:serviceaccount:ray-system:my-kuberay'"
        )


@pytest.mark.parametrize(
    ("stack", "value", "words"),
    [
        ("local", "kuberay-operator", "'kuberay-operator' is not valid: <namespace>/<service"),
        ("local", "Kuberay/op", "'Kuberay/op' is not valid: <namespace>/<service account>"),
        ("dev", "kuberay-system/kuberay-operator", "is only for operators.install: false"),
    ],
)
def test_the_service_account_setting_is_checked(
    tmp_path: Path, stack: str, value: str, words: str
) -> None:
    def change(config: dict[str, Any]) -> None:
        config.setdefault(P + "operators", {})["kuberayServiceAccount"] = value

    result = run_program(write_stack(tmp_path, mutated(stack, change)))
    (problem,) = result.problems
    assert problem.path == "operators.kuberayServiceAccount"
    assert words in problem.message

"""Role assignments: who may write them, and a stack whose pipeline may not.

Every role assignment the stack creates (the deployer's AKS RBAC Cluster Admin on the cluster,
each team identity's Blob data role on the account, each team group's Cluster User role) needs
`Microsoft.Authorization/roleAssignments/write`, which Contributor does not have, and the
stack's Blob data role `Microsoft.Authorization/roleDefinitions/write`. With
`cluster.createRoleAssignments: false` the stack creates none, and `aksray plan` says what an
admin must grant instead (docs/aks.md has the commands).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import RunResult, run_program
from aksray.plan.checks.run import run_checks
from aksray.plan.model.plan import plan
from settings import defaults
from tests.support.harness import (
    assert_rejected,
    cli,
    mutated,
    one,
    planned,
    transitive_dependencies,
    write_stack,
)

P = "aks-ray-platform:"
ROLE = "azure-native:authorization:RoleAssignment"
PROVIDER = "pulumi:providers:kubernetes"
KEY = "cluster.createRoleAssignments"


def without_assignments(tmp_path: Path, stack: str = "prod") -> RunResult:
    def change(config: dict[str, Any]) -> None:
        config[P + "cluster"]["createRoleAssignments"] = False

    path = write_stack(tmp_path, mutated(stack, change), f"Pulumi.{stack}.yaml")
    result = run_program(path, stack=stack)
    assert result.ok, result.problems
    return result


def test_by_default_the_stack_writes_its_role_assignments() -> None:
    assert defaults.DEFAULT_CREATE_ROLE_ASSIGNMENTS is True
    assert planned("prod").settings.cluster.create_role_assignments is True
    names = {r.name for r in planned("prod").by_type(ROLE)}
    assert "aksray-cluster-deployer-admin" in names
    assert {f"aksray-storage-{t}-blob" for t in ("nlp", "vision", "serving", "training")} <= names


def test_a_contributor_only_pipeline_creates_no_role_assignment(tmp_path: Path) -> None:
    result = without_assignments(tmp_path)
    assert result.by_type(ROLE) == []
    assert result.by_type("azure-native:authorization:RoleDefinition") == []
    provider = one(result, PROVIDER, "aksray-cluster-k8s")
    assert not any(ROLE in urn for urn in transitive_dependencies(result, provider))
    # The identities, their federated credentials and the service account annotations stay.
    assert len(result.by_type("azure-native:managedidentity:UserAssignedIdentity")) == 4
    # One per team, and one more for the training team's elastic heads (vllm-batch).
    assert result.settings.elastic_teams == {"training", "serving"}
    # One per team, and one more for each team's elastic heads (training, serving).
    assert len(result.by_type("azure-native:managedidentity:FederatedIdentityCredential")) == 6


def test_plan_names_every_grant_an_admin_must_make(tmp_path: Path) -> None:
    findings = run_checks(plan(without_assignments(tmp_path)))
    ours = [w for w in findings.warnings if w.path == KEY]
    assert [w.message for w in ours] == [
        'an admin must grant "Azure Kubernetes Service RBAC Cluster Admin" on cluster '
        "aks-aksray-prod to the ServicePrincipal that runs `pulumi up` (the stack creates no role "
        "assignment; commands in docs/aks.md)",
        'an admin must grant "Monitoring Data Reader" on Azure Monitor workspace amw-prod to the '
        "managed identity of Grafana amg-prod (its dashboards read the metrics with it; commands "
        "in docs/aks.md)",
        'an admin must grant "Grafana Editor" on Grafana amg-prod to the ServicePrincipal that '
        "runs `pulumi up` (it provisions the dashboards; commands in docs/aks.md)",
        'an admin must grant "AcrPull" on the stack\'s image cache registry to the kubelet '
        "identity of cluster aks-aksray-prod (its nodes pull the Ray image through it; commands "
        "in docs/aks.md)",
        *(
            f'an admin must grant "Key Vault Secrets User" on secret {secret} of Key Vault '
            "kv-aksray-prod to the identity of the image cache registry's credential set "
            "dockerhub (it pulls from Docker Hub with them; commands in docs/aks.md)"
            for secret in ("dockerhub-username", "dockerhub-token")
        ),
        *(
            'an admin must assign the role "aksray Blob data" (Blob data actions only, created '
            "once per stack) on storage account staksrayprod<suffix> to identity "
            f"id-aksray-prod-{team}, with the condition `aksray plan --json` shows for team "
            f"{team} (summary.storage.teams; commands in docs/aks.md)"
            for team in ("nlp", "vision", "serving", "training")
        ),
    ]
    assert findings.errors == []


def test_plan_names_the_kubeconfig_role_of_every_group(tmp_path: Path) -> None:
    groups = (
        "0" * 8 + "-0000-0000-0000-" + "0" * 11 + "1",
        "0" * 8 + "-0000-0000-0000-" + "0" * 11 + "2",
    )

    def change(config: dict[str, Any]) -> None:
        config[P + "cluster"]["createRoleAssignments"] = False
        teams = config[P + "scheduling"]["departments"][0]["teams"]
        teams[0]["members"] = [groups[0]]
        teams[1]["members"] = [groups[0]]
        teams[1]["viewers"] = [groups[1]]

    result = run_program(
        write_stack(tmp_path, mutated("prod", change), "Pulumi.prod.yaml"), stack="prod"
    )
    assert result.ok, result.problems
    ours = [w.message for w in run_checks(plan(result)).warnings if "Cluster User" in w.message]
    assert ours == [
        'an admin must grant "Azure Kubernetes Service Cluster User Role" on cluster '
        f"aks-aksray-prod to group {groups[0]} (team nlp, vision: it fetches the kubeconfig with "
        "it; commands in docs/aks.md)",
        'an admin must grant "Azure Kubernetes Service Cluster User Role" on cluster '
        f"aks-aksray-prod to group {groups[1]} (team vision: it fetches the kubeconfig with it; "
        "commands in docs/aks.md)",
    ]


def test_no_such_warning_when_the_stack_grants_them() -> None:
    findings = run_checks(plan(planned("prod")))
    assert not [w for w in findings.warnings if w.path == KEY]


def test_the_cli_exits_zero_and_prints_the_grants(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "cluster"]["createRoleAssignments"] = False

    run = cli("plan", "--config", write_stack(tmp_path, mutated("dev", change)))
    assert run.code == 0, run.output
    assert f"warning: {KEY}: an admin must grant" in run.stderr


def test_it_is_a_boolean(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "cluster"]["createRoleAssignments"] = "no"

    assert_rejected(tmp_path, mutated("dev", change), KEY)


@pytest.mark.parametrize("value", [True, False])
def test_an_existing_cluster_has_no_azure_role_assignments_to_skip(
    tmp_path: Path, value: bool
) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "cluster"]["createRoleAssignments"] = value

    run = assert_rejected(tmp_path, mutated("local", change), KEY)
    assert "mode is aks" in run.stderr

"""Blob storage and workload identity under mocks: security flags, protection, identities,
federation, role scope and an honest dependency graph."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from aksray.offline.mocks import placeholder
from aksray.offline.runner import RecordedResource, RunResult, run_program
from manifests.identity import (
    BLOB_DATA_ACTIONS,
    BLOB_ROLE_ACTIONS,
    FEDERATION_AUDIENCE,
    MAX_FEDERATED_CREDENTIALS_PER_IDENTITY,
)
from manifests.namespaces import (
    CLIENT_ID_ANNOTATION,
    ELASTIC_HEAD_SERVICE_ACCOUNT,
    TENANT_ID_ANNOTATION,
)
from manifests.storage import ACCOUNT_PREFIX_MAX, account_name_prefix
from tests.support.harness import P, mutated, one, planned, transitive_dependencies, write_stack

ACCOUNT = "azure-native:storage:StorageAccount"
CONTAINER = "azure-native:storage:BlobContainer"
BLOB_SERVICE = "azure-native:storage:BlobServiceProperties"
GROUP = "azure-native:resources:ResourceGroup"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
FIC = "azure-native:managedidentity:FederatedIdentityCredential"
ROLE = "azure-native:authorization:RoleAssignment"
ROLE_DEFINITION = "azure-native:authorization:RoleDefinition"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
SUFFIX = "random:index/randomString:RandomString"

Config = dict[str, Any]


def _account(result: RunResult) -> RecordedResource:
    return one(result, ACCOUNT, "aksray-storage-account")


def _storage_resources(result: RunResult) -> list[RecordedResource]:
    return [r for r in result.resources if "aksray:platform:BlobStorage" in r.urn]


def _cluster_side(result: RunResult) -> set[str]:
    """Everything the cluster component registers (cluster, pools, its group, the provider)."""
    return {r.urn for r in result.resources if "aksray:platform:AksCluster$" in r.urn}


# ---------------------------------------------------------------------------------------------
# The account and its containers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_account_is_locked_down(stack: str) -> None:
    inputs = _account(planned(stack)).inputs
    assert inputs["kind"] == "StorageV2"
    assert inputs["sku"] == {"name": "Standard_LRS"}
    assert inputs["allowBlobPublicAccess"] is False
    assert inputs["allowSharedKeyAccess"] is False
    assert inputs["defaultToOAuthAuthentication"] is True
    assert inputs["minimumTlsVersion"] == "TLS1_2"
    assert inputs["enableHttpsTrafficOnly"] is True
    assert inputs["allowCrossTenantReplication"] is False
    assert inputs["isHnsEnabled"] is True
    assert inputs["resourceGroupName"] == f"rg-aksray-{stack}-data"
    assert inputs["location"] == "eastus2"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_account_name_is_prefix_plus_random_suffix_within_azure_rules(stack: str) -> None:
    result = planned(stack)
    suffix = one(result, SUFFIX, "aksray-storage-suffix")
    assert suffix.inputs == {
        "length": 8,
        "special": False,
        "upper": False,
        "lower": True,
        "numeric": True,
    }
    name = _account(result).inputs["accountName"]
    # The mock's suffix is "x" * length: the name is the readable prefix plus the suffix.
    assert name == f"staksray{stack}" + "x" * 8
    assert re.fullmatch(r"[a-z0-9]{3,24}", name)
    assert result.outputs["storageAccountName"] == name
    assert result.outputs["blobEndpoint"] == f"https://{name}.blob.core.windows.net/"
    assert result.outputs["dfsEndpoint"] == f"https://{name}.dfs.core.windows.net/"


def test_account_name_prefix_is_cut_to_leave_room_for_the_suffix() -> None:
    assert account_name_prefix("dev") == "staksraydev"
    assert account_name_prefix("team-a-eu-west-1") == "staksrayteamaeuw"
    assert len(account_name_prefix("x" * 40)) == ACCOUNT_PREFIX_MAX == 16


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_soft_delete_for_blobs_and_containers(stack: str) -> None:
    result = planned(stack)
    service = one(result, BLOB_SERVICE, "aksray-storage-blob-service")
    assert service.inputs["blobServicesName"] == "default"
    assert service.inputs["deleteRetentionPolicy"] == {"enabled": True, "days": 7}
    assert service.inputs["containerDeleteRetentionPolicy"] == {"enabled": True, "days": 7}
    assert service.inputs["accountName"] == _account(result).inputs["accountName"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_containers_are_the_configured_ones_and_private(stack: str) -> None:
    result = planned(stack)
    containers = result.by_type(CONTAINER)
    # The shared containers as configured, then one per team that only it writes.
    assert sorted(c.inputs["containerName"] for c in containers) == sorted(
        [
            *result.settings.storage.containers,
            *(f"{team.name}-data" for team in result.settings.scheduling.teams),
        ]
    )
    for container in containers:
        assert container.inputs["publicAccess"] == "None"
        assert container.inputs["accountName"] == _account(result).inputs["accountName"]
        assert _account(result).urn in container.depends_on


@pytest.mark.parametrize(("stack", "protected"), [("dev", False), ("prod", True)])
def test_protect_follows_the_stack(stack: str, protected: bool) -> None:
    result = planned(stack)
    data = [
        _account(result),
        # The account's name is built from it: a new suffix would mean a new account.
        one(result, SUFFIX, "aksray-storage-suffix"),
        one(result, BLOB_SERVICE, "aksray-storage-blob-service"),
        one(result, GROUP, "aksray-storage-rg"),
        *result.by_type(CONTAINER),
    ]
    settings = result.settings
    assert len(data) == 4 + len(settings.storage.containers) + len(settings.scheduling.teams)
    assert {(r.name, r.protect) for r in data} == {(r.name, protected) for r in data}
    # Identities and their grants are recreated at will; only data (and its name) is protected.
    others = [r for r in _storage_resources(result) if r.custom and r not in data]
    assert {r.type for r in others} == {IDENTITY, FIC, ROLE, ROLE_DEFINITION}
    assert not any(r.protect for r in others)
    assert not any(r.protect for r in result.resources if r.urn in _cluster_side(result))


def test_storage_off_registers_no_storage_and_annotates_nothing(tmp_path: Path) -> None:
    document = mutated("dev", _storage_off)
    result = run_program(write_stack(tmp_path, document))
    assert _storage_resources(result) == []
    assert result.by_type(IDENTITY) == []
    account = one(result, SERVICE_ACCOUNT, "aksray-teams-team-a-ray")
    assert account.inputs["metadata"]["annotations"] == {}
    assert "storageAccountName" not in result.outputs


def _storage_off(config: Config) -> None:
    config[P + "storage"]["enabled"] = False
    for workload in config[P + "workloads"].values():
        workload["enabled"] = False


# ---------------------------------------------------------------------------------------------
# Identities, federation and the role
# ---------------------------------------------------------------------------------------------


def _check_identities(result: RunResult) -> None:
    """Per team: one identity, one credential per service account its Ray pods run as (the
    workers', and the elastic heads' for a team with an elastic workload), write on its own
    container (its other grants: tests/components/test_blob_isolation.py), and each service account
    annotated with that identity."""
    teams = result.settings.scheduling.teams
    elastic = result.settings.elastic_teams
    identities = result.by_type(IDENTITY)
    credentials = result.by_type(FIC)
    assert len(identities) == len(teams)
    assert len(credentials) == len(teams) + len(elastic)
    service_accounts = {
        (sa.inputs["metadata"]["namespace"], sa.inputs["metadata"]["name"])
        for sa in result.by_type(SERVICE_ACCOUNT)
    }
    per_identity: dict[str, int] = {}
    for credential in credentials:
        per_identity[credential.inputs["resourceName"]] = (
            per_identity.get(credential.inputs["resourceName"], 0) + 1
        )
    assert max(per_identity.values()) <= MAX_FEDERATED_CREDENTIALS_PER_IDENTITY
    assert sorted(per_identity.values()) == sorted(
        2 if team.name in elastic else 1 for team in teams
    )

    stack = result.stack
    for team in teams:
        identity = one(result, IDENTITY, f"aksray-storage-{team.name}")
        identity_name = f"id-aksray-{stack}-{team.name}"
        assert identity.inputs["resourceName"] == identity_name
        assert identity.inputs["resourceGroupName"] == f"rg-aksray-{stack}-data"

        credential = one(result, FIC, f"aksray-storage-{team.name}-federation")
        assert credential.inputs["resourceName"] == identity_name
        assert credential.inputs["issuer"] == result.outputs["oidcIssuerUrl"]
        assert credential.inputs["audiences"] == [FEDERATION_AUDIENCE]
        prefix, namespace, name = credential.inputs["subject"].rsplit(":", 2)
        assert prefix == "system:serviceaccount"
        assert (namespace, name) == (team.namespace, "ray-workload")
        assert (namespace, name) in service_accounts

        # One Blob assignment per team, on the account, of the stack's Blob data role, with a
        # condition (what it allows: tests/components/test_blob_isolation.py).
        role = one(result, ROLE, f"aksray-storage-{team.name}-blob")
        assert role.inputs["scope"] == placeholder("id of StorageAccount aksray-storage-account")
        assert role.inputs["principalId"] == placeholder(
            f"principal id of identity {identity_name}"
        )
        assert role.inputs["principalType"] == "ServicePrincipal"
        assert role.inputs["roleDefinitionId"] == (
            f"/subscriptions/{placeholder('subscription id')}/providers/"
            "Microsoft.Authorization/roleDefinitions/"
            f"{placeholder('auto-name of aksray-storage-blob-role')}"
        )
        assert role.inputs["conditionVersion"] == "2.0"
        assert f"'{team.name}-data'" in role.inputs["condition"]
        assert one(result, ROLE_DEFINITION, "aksray-storage-blob-role").urn in role.depends_on

        # The annotation lands only once the identity is federated (for every account) and
        # allowed on every container it reaches.
        grants = [role.urn]
        accounts = [("ray", credential)]
        if team.name in elastic:
            head = one(result, FIC, f"aksray-storage-{team.name}-federation-ray-elastic-head")
            assert head.inputs["subject"] == (
                f"system:serviceaccount:{team.namespace}:{ELASTIC_HEAD_SERVICE_ACCOUNT}"
            )
            assert head.inputs["resourceName"] == identity_name
            # Azure rejects concurrent writes of credentials to one identity: one after another.
            assert credential.urn in head.depends_on
            accounts.append(("ray-elastic-head", head))
        for suffix, trusted in accounts:
            sa = one(result, SERVICE_ACCOUNT, f"aksray-teams-{team.name}-{suffix}")
            assert sa.inputs["metadata"]["namespace"] == team.namespace
            assert sa.inputs["automountServiceAccountToken"] is False
            assert sa.inputs["metadata"]["annotations"] == {
                CLIENT_ID_ANNOTATION: placeholder(f"client id of identity {identity_name}"),
                TENANT_ID_ANNOTATION: placeholder("tenant id"),
            }
            assert {credential.urn, trusted.urn, *grants} <= set(sa.depends_on)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_one_identity_per_team_federated_to_its_service_account(stack: str) -> None:
    _check_identities(planned(stack))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_blob_role_holds_the_blob_data_actions_and_no_management(stack: str) -> None:
    """Assigned on the account, Storage Blob Data Contributor's management actions
    (containers/write, containers/delete) would let a team delete any container through Azure
    Resource Manager, which no condition constrains: the stack's own role has none of them."""
    result = planned(stack)
    role = one(result, ROLE_DEFINITION, "aksray-storage-blob-role")
    assert role.inputs["scope"] == placeholder("id of ResourceGroup aksray-storage-rg")
    assert role.inputs["assignableScopes"] == [placeholder("id of ResourceGroup aksray-storage-rg")]
    assert (
        role.inputs["roleName"] == f"aksray Blob data ({stack}, {placeholder('subscription id')})"
    )
    assert role.inputs["roleType"] == "CustomRole"
    assert role.inputs["permissions"] == [
        {
            "actions": ["Microsoft.Storage/storageAccounts/blobServices/containers/read"],
            "notActions": [],
            "dataActions": [
                "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read",
                "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write",
                "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/delete",
                "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/add/action",
                "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/move/action",
            ],
            "notDataActions": [],
        }
    ]
    assert (BLOB_ROLE_ACTIONS, len(BLOB_DATA_ACTIONS)) == (
        ("Microsoft.Storage/storageAccounts/blobServices/containers/read",),
        5,
    )


def test_prod_identities_use_the_team_namespace_not_the_team_name() -> None:
    result = planned("prod")
    credential = one(result, FIC, "aksray-storage-serving-federation")
    assert credential.inputs["subject"] == "system:serviceaccount:llm-serving:ray-workload"
    assert credential.inputs["federatedIdentityCredentialResourceName"] == (
        "llm-serving-ray-workload"
    )


def test_a_hundred_teams_stay_within_the_federated_credential_limit(tmp_path: Path) -> None:
    def hundred_teams(config: Config) -> None:
        departments = config[P + "scheduling"]["departments"]
        for index in range(1, 100):
            if index % 10 == 1:
                departments.append({"name": f"dept-{index // 10}", "teams": []})
            departments[-1]["teams"].append({"name": f"team-{index:03d}"})

    start = time.perf_counter()
    result = run_program(write_stack(tmp_path, mutated("dev", hundred_teams)))
    elapsed = time.perf_counter() - start
    assert result.ok, result.problems
    assert len(result.settings.scheduling.teams) == 100
    _check_identities(result)
    assert elapsed < 60


# ---------------------------------------------------------------------------------------------
# Dependencies: storage never waits for the cluster, except the credentials for its issuer
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_storage_and_identities_do_not_wait_for_the_cluster(stack: str) -> None:
    result = planned(stack)
    cluster_side = _cluster_side(result)
    independent = [
        r
        for r in _storage_resources(result)
        if r.custom and r.type not in (FIC, "pulumi:pulumi:Stack")
    ]
    assert {r.type for r in independent} == {
        GROUP,
        SUFFIX,
        ACCOUNT,
        BLOB_SERVICE,
        CONTAINER,
        IDENTITY,
        ROLE,
        ROLE_DEFINITION,
    }
    for resource in independent:
        assert transitive_dependencies(result, resource) & cluster_side == set(), resource.name


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_federated_credentials_wait_for_the_cluster_issuer_only(stack: str) -> None:
    result = planned(stack)
    cluster = one(result, "azure-native:containerservice:ManagedCluster", "aksray-cluster-aks")
    cluster_group = one(result, GROUP, "aksray-cluster-rg")
    for credential in result.by_type(FIC):
        assert credential.property_dependencies["issuer"] == (cluster.urn,)
        reached = transitive_dependencies(result, credential) & _cluster_side(result)
        assert reached == {cluster.urn, cluster_group.urn}


# ---------------------------------------------------------------------------------------------
# An existing cluster with an existing account
# ---------------------------------------------------------------------------------------------


def _existing_with_account(config: Config) -> None:
    config[P + "cluster"] = {
        "mode": "existing",
        "kubeconfigContext": "kind-dev",
        "cpuPool": config[P + "cluster"]["cpuPool"],
        "gpuPools": config[P + "cluster"]["gpuPools"],
    }
    config[P + "storage"] = {"enabled": True, "existingAccount": "teamdata01"}
    config[P + "operators"] = {"install": False}
    config[P + "workloads"]["qwen-lora"]["run"] = "1"
    config.pop(P + "location", None)


def test_an_existing_account_is_used_as_it_is_and_nothing_azure_is_created(tmp_path: Path) -> None:
    result = run_program(write_stack(tmp_path, mutated("dev", _existing_with_account)))
    assert result.ok, result.problems
    assert [r.type for r in result.resources if r.type.startswith("azure-native:")] == []
    assert result.by_type(IDENTITY) == []
    job = next(r for r in result.by_type("kubernetes:ray.io/v1:RayJob"))
    head = job.inputs["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in head["containers"][0]["env"]}
    assert env["AZURE_STORAGE_ACCOUNT"] == "teamdata01"
    # Its access is the cluster owner's: no workload identity is wired by this stack.
    account = one(result, SERVICE_ACCOUNT, "aksray-teams-team-a-ray")
    assert account.inputs["metadata"]["annotations"] == {}

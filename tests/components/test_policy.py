"""The policy pack's own validators over the resources the offline runner records.

Dev and prod pass every policy; a copy mutated to break one invariant reports exactly that
violation, on exactly that resource, and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from aksray.offline.runner import RecordedResource
from tests.support.harness import planned
from tests.support.policy_harness import POLICIES, Violation, evaluate, mutate

Inputs = dict[str, Any]
Select = Callable[[RecordedResource], bool]


def of_type(type_token: str, name_part: str = "") -> Select:
    return lambda r: r.type == type_token and name_part in r.name


def setter(*path: str, value: Any) -> Callable[[Inputs], None]:
    def change(inputs: Inputs) -> None:
        node = inputs
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value

    return change


ACCOUNT = of_type("azure-native:storage:StorageAccount")
BLOB_SERVICE = of_type("azure-native:storage:BlobServiceProperties")
CLUSTER = of_type("azure-native:containerservice:ManagedCluster")
GPU_POOL = of_type("azure-native:containerservice:AgentPool", "pool-a100")
DATA_ROLE = of_type("azure-native:authorization:RoleAssignment", "-blob")
BLOB_ROLE = of_type("azure-native:authorization:RoleDefinition", "blob-role")
ADMIN_ROLE = of_type("azure-native:authorization:RoleAssignment", "deployer-admin")
ACR_PULL = of_type("azure-native:authorization:RoleAssignment", "acr-pull")
SECRET_READER = of_type("azure-native:authorization:RoleAssignment", "dockerhub-username")
RELEASE = of_type("kubernetes:helm.sh/v3:Release", "kueue")
NAMESPACE = of_type("kubernetes:core/v1:Namespace")
OWNER = "/subscriptions/s/providers/Microsoft.Authorization/roleDefinitions/" + (
    "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"
)

# (policy, resource to break, how, forget the scope's dependency)
BREAKS: list[tuple[str, Select, Callable[[Inputs], None], str | None]] = [
    ("storage-account-locked-down", ACCOUNT, setter("allowBlobPublicAccess", value=True), None),
    ("storage-account-locked-down", ACCOUNT, setter("allowSharedKeyAccess", value=True), None),
    ("storage-account-locked-down", ACCOUNT, setter("minimumTlsVersion", value="TLS1_0"), None),
    ("storage-account-locked-down", ACCOUNT, setter("enableHttpsTrafficOnly", value=False), None),
    (
        "blob-soft-delete",
        BLOB_SERVICE,
        setter("deleteRetentionPolicy", "enabled", value=False),
        None,
    ),
    (
        "blob-soft-delete",
        BLOB_SERVICE,
        setter("containerDeleteRetentionPolicy", "enabled", value=False),
        None,
    ),
    ("aks-identity-and-access", CLUSTER, setter("oidcIssuerProfile", "enabled", value=False), None),
    (
        "aks-identity-and-access",
        CLUSTER,
        setter("securityProfile", "workloadIdentity", "enabled", value=False),
        None,
    ),
    (
        "aks-identity-and-access",
        CLUSTER,
        setter("aadProfile", "enableAzureRBAC", value=False),
        None,
    ),
    ("aks-local-accounts-disabled", CLUSTER, setter("disableLocalAccounts", value=False), None),
    (
        "aks-upgrade-channels",
        CLUSTER,
        setter("autoUpgradeProfile", "upgradeChannel", value="none"),
        None,
    ),
    (
        "aks-upgrade-channels",
        CLUSTER,
        setter("autoUpgradeProfile", "nodeOSUpgradeChannel", value="None"),
        None,
    ),
    ("gpu-pools-scale-to-zero", GPU_POOL, setter("minCount", value=2), None),
    ("gpu-pools-scale-to-zero", GPU_POOL, setter("enableAutoScaling", value=False), None),
    ("no-privileged-roles", DATA_ROLE, setter("roleDefinitionId", value=OWNER), None),
    (
        "role-assignments-scoped-to-storage",
        DATA_ROLE,
        setter("scope", value="/subscriptions/s/resourceGroups/rg-data"),
        "scope",
    ),
    (
        # On the account without its condition: every team's data.
        "role-assignments-scoped-to-storage",
        DATA_ROLE,
        lambda inputs: inputs.pop("condition"),
        None,
    ),
    (
        # Storage Blob Data Contributor's management actions: delete any container.
        "blob-role-data-actions-only",
        BLOB_ROLE,
        lambda inputs: inputs["permissions"][0]["actions"].append(
            "Microsoft.Storage/storageAccounts/blobServices/containers/delete"
        ),
        None,
    ),
    (
        "blob-role-data-actions-only",
        BLOB_ROLE,
        setter("assignableScopes", value=["/subscriptions/s", "/subscriptions/t"]),
        None,
    ),
    (
        "role-assignments-scoped-to-storage",
        ADMIN_ROLE,
        setter("scope", value="/subscriptions/s"),
        "scope",
    ),
    (
        # AcrPull on the registry's whole resource group, not the registry.
        "role-assignments-scoped-to-storage",
        ACR_PULL,
        setter("scope", value="/subscriptions/s/resourceGroups/rg-aksray-prod"),
        "scope",
    ),
    (
        # Key Vault Secrets User on the whole vault: every secret in it, not one.
        "role-assignments-scoped-to-storage",
        SECRET_READER,
        setter(
            "scope",
            value="/subscriptions/s/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/kv",
        ),
        None,
    ),
    (
        "no-plain-text-secrets",
        NAMESPACE,
        setter("metadata", "annotations", "note", value="hf_" + "a" * 34),
        None,
    ),
    ("helm-versions-pinned", RELEASE, setter("version", value="latest"), None),
    ("helm-versions-pinned", RELEASE, lambda inputs: inputs.pop("version"), None),
]


@pytest.mark.parametrize("stack", ["dev", "prod", "dev+run", "prod+run"])
def test_project_stacks_pass_every_policy(stack: str) -> None:
    assert evaluate(planned(stack).resources) == []


def test_every_policy_is_exercised_by_a_break() -> None:
    broken = {policy for policy, *_ in BREAKS} | RAY_POLICIES | {"storage-account-has-soft-delete"}
    assert broken == {policy.name for policy in POLICIES}


# Exercised below, against the recorded RayJobs and RayServices.
RAY_POLICIES = {"ray-pods-use-workload-identity", "ray-workloads-queued"}


@pytest.mark.parametrize(
    ("policy", "select", "change", "drop"),
    BREAKS,
    ids=[f"{b[0]}-{i}" for i, b in enumerate(BREAKS)],
)
def test_a_broken_resource_reports_exactly_that_violation(
    policy: str, select: Select, change: Callable[[Inputs], None], drop: str | None
) -> None:
    resources, urn = mutate(
        planned("prod").resources, select, change, drop_property_dependency=drop
    )
    violations = evaluate(resources)
    assert [(v.policy, v.urn) for v in violations] == [(policy, urn)], violations


def test_a_storage_account_without_soft_delete_settings_is_reported() -> None:
    resources = [r for r in planned("dev").resources if not BLOB_SERVICE(r)]
    account = next(r for r in resources if ACCOUNT(r))
    assert evaluate(resources) == [
        Violation(
            "storage-account-has-soft-delete",
            "storage account has no BlobServiceProperties with soft delete",
            account.urn,
        )
    ]


def test_the_admin_role_is_allowed_only_on_the_stacks_own_cluster() -> None:
    def storage_scope(resources: list[RecordedResource]) -> list[RecordedResource]:
        account = next(r for r in resources if ACCOUNT(r))
        return [
            replace(r, property_dependencies={"scope": (account.urn,)}) if ADMIN_ROLE(r) else r
            for r in resources
        ]

    violations = evaluate(storage_scope(planned("dev").resources))
    assert [v.policy for v in violations] == ["role-assignments-scoped-to-storage"]
    assert "the stack's own AKS cluster" in violations[0].message


RAY_JOB = of_type("kubernetes:ray.io/v1:RayJob")
RAY_SERVICE = of_type("kubernetes:ray.io/v1:RayService")


def _drop_head_identity_label(inputs: Inputs) -> None:
    cluster = inputs["spec"].get("rayClusterSpec") or inputs["spec"]["rayClusterConfig"]
    del cluster["headGroupSpec"]["template"]["metadata"]["labels"]["azure.workload.identity/use"]


def _drop_worker_identity_label(inputs: Inputs) -> None:
    cluster = inputs["spec"].get("rayClusterSpec") or inputs["spec"]["rayClusterConfig"]
    labels = cluster["workerGroupSpecs"][0]["template"]["metadata"]["labels"]
    labels["azure.workload.identity/use"] = "false"


@pytest.mark.parametrize(
    ("policy", "select", "change"),
    [
        ("ray-pods-use-workload-identity", RAY_JOB, _drop_head_identity_label),
        ("ray-pods-use-workload-identity", RAY_SERVICE, _drop_worker_identity_label),
        (
            "ray-workloads-queued",
            RAY_JOB,
            lambda inputs: inputs["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name"),
        ),
        (
            "ray-workloads-queued",
            RAY_SERVICE,
            lambda inputs: inputs["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name"),
        ),
        (
            "no-plain-text-secrets",
            RAY_JOB,
            lambda inputs: (
                inputs["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][
                    0
                ]
                .setdefault("env", [])
                .append({"name": "HF_TOKEN", "value": "pasted-in-by-hand"})
            ),
        ),
    ],
    ids=["head-identity", "worker-identity", "rayjob-queue", "rayservice-queue", "inline-token"],
)
def test_a_broken_ray_workload_reports_exactly_that_violation(
    policy: str, select: Select, change: Callable[[Inputs], None]
) -> None:
    resources, urn = mutate(planned("dev+run").resources, select, change)
    violations = evaluate(resources)
    assert [(v.policy, v.urn) for v in violations] == [(policy, urn)], violations

"""The security and safety invariants of aks-ray-platform: the pack, one policy per rule.

Each rule is one pure validator (azure_rules.py, kubernetes_rules.py) that reads resource inputs
exactly as the engine hands them to a policy pack (camelCase wire names, resource_inputs.py), so
the same rules run under `pulumi preview --policy-pack policy` and in the tests over the
resources `aksray` records. MANDATORY rules guard safety, ADVISORY ones cost. A stack that needs
an exception passes a policy config file naming it (README "Policy pack"), never an edit here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from azure_rules import (
    aks_identity_and_access,
    aks_local_accounts_disabled,
    aks_upgrade_channel_set,
    blob_soft_delete_on,
    every_account_has_soft_delete,
    gpu_pools_scale_to_zero,
    no_privileged_roles,
    role_assignments_scoped_to_a_storage_account,
    roles_hold_blob_data_actions_only,
    storage_account_locked_down,
)
from kubernetes_rules import (
    helm_versions_pinned,
    no_plain_text_secrets,
    ray_pods_use_workload_identity,
    ray_workloads_are_queued,
)
from pulumi_policy import (
    EnforcementLevel,
    Policy,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from resource_inputs import Resource, StackResource

# ---- the pack --------------------------------------------------------------------------------

ResourceRule = Callable[[Resource], list[str]]
StackRule = Callable[[Sequence[StackResource]], list[tuple[str, str]]]


def _resource_policy(
    name: str,
    description: str,
    rule: ResourceRule,
    level: EnforcementLevel = EnforcementLevel.MANDATORY,
) -> Policy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        for problem in rule(args):
            report(problem, None)

    return ResourceValidationPolicy(
        name=name, description=description, validate=validate, enforcement_level=level
    )


def _stack_policy(
    name: str,
    description: str,
    rule: StackRule,
    level: EnforcementLevel = EnforcementLevel.MANDATORY,
) -> Policy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for urn, problem in rule(args.resources):
            report(problem, urn)

    return StackValidationPolicy(
        name=name, description=description, validate=validate, enforcement_level=level
    )


ADVISORY = EnforcementLevel.ADVISORY

POLICIES: list[Policy] = [
    _resource_policy(
        "storage-account-locked-down",
        "Storage: no public blob access, no shared keys, TLS 1.2, HTTPS only.",
        storage_account_locked_down,
    ),
    _resource_policy(
        "blob-soft-delete", "Storage: blob and container soft delete on.", blob_soft_delete_on
    ),
    _stack_policy(
        "storage-account-has-soft-delete",
        "Storage: every account has blob service properties with soft delete.",
        every_account_has_soft_delete,
    ),
    _resource_policy(
        "aks-identity-and-access",
        "AKS: OIDC issuer, workload identity and Azure RBAC on.",
        aks_identity_and_access,
    ),
    _resource_policy(
        "aks-local-accounts-disabled", "AKS: local accounts off.", aks_local_accounts_disabled
    ),
    _resource_policy(
        "aks-upgrade-channels",
        "AKS: automatic and node OS upgrade channels set.",
        aks_upgrade_channel_set,
    ),
    _resource_policy(
        "gpu-pools-scale-to-zero",
        "AKS: GPU pools autoscale from 0 (cost).",
        gpu_pools_scale_to_zero,
        ADVISORY,
    ),
    _resource_policy(
        "no-privileged-roles",
        "Identity: no Owner, Contributor or access-administration role.",
        no_privileged_roles,
    ),
    _stack_policy(
        "role-assignments-scoped-to-storage",
        "Identity: Blob data access through the stack's own role on one storage account, "
        "conditioned to each team's containers; the deployer's AKS RBAC admin role and the "
        "teams' kubeconfig role on the stack's own cluster, the monitoring roles on its own "
        "workspace and Grafana, AcrPull on its own registry, Key Vault Secrets User on one "
        "secret; never wider.",
        role_assignments_scoped_to_a_storage_account,
    ),
    _resource_policy(
        "blob-role-data-actions-only",
        "Identity: a role the stack defines holds the Blob data actions only, assignable in "
        "one resource group.",
        roles_hold_blob_data_actions_only,
    ),
    _stack_policy(
        "ray-pods-use-workload-identity",
        "Kubernetes: Ray pods under a workload-identity service account carry the "
        "azure.workload.identity/use label.",
        ray_pods_use_workload_identity,
    ),
    _resource_policy(
        "ray-workloads-queued",
        "Kubernetes: every RayJob and RayService has a Kueue queue label.",
        ray_workloads_are_queued,
    ),
    _resource_policy(
        "no-plain-text-secrets",
        "Kubernetes: no plain-text secret in any custom resource or pod env.",
        no_plain_text_secrets,
    ),
    _resource_policy(
        "helm-versions-pinned",
        "Kubernetes: every Helm release pins its version.",
        helm_versions_pinned,
    ),
]

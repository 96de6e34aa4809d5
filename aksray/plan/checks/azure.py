"""Warnings about the Azure side: role assignments the stack leaves to an admin, a Free AKS tier
on a cluster bigger than that tier is meant for, and GPU nodes that would each pull the Ray
image from Docker Hub without credentials."""

from __future__ import annotations

from typing import Final

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import Plan
from catalog.azure import FREE_TIER_MAX_NODES
from catalog.versions import RAY_IMAGE
from manifests.access.team_roles import AKS_CLUSTER_USER_ROLE_NAME
from manifests.aks import (
    ACR_PULL_ROLE_NAME,
    AKS_RBAC_CLUSTER_ADMIN_ROLE_NAME,
    KEY_VAULT_SECRETS_USER_ROLE_NAME,
    aks_names,
)
from manifests.identity import BLOB_DATA_ROLE_NAME, team_identities
from manifests.monitoring import (
    GRAFANA_EDITOR_ROLE_NAME,
    MONITORING_DATA_READER_ROLE_NAME,
    monitoring_names,
)
from manifests.storage import account_name_prefix

CREATE_ROLE_ASSIGNMENTS: Final = "cluster.createRoleAssignments"
CLUSTER_TIER: Final = "cluster.tier"
IMAGE_CACHE: Final = "cluster.imageCache.enabled"
# Docker Hub's pull limit without credentials, per IPv4 address (or IPv6 /64) and hour (Docker
# docs, "Docker Hub usage and limits", 2025); a cluster's nodes share its few outbound IPs.
DOCKER_HUB_ANONYMOUS_PULLS_PER_HOUR: Final = 10


def check_image_pulls(plan: Plan, out: Findings) -> None:
    """Without `cluster.imageCache`, GPU pools that can add more nodes than Docker Hub allows
    anonymous pulls an hour: a scale-out past it gets 429s (ImagePullBackOff) while the
    pod-readiness timeout runs."""
    cluster = plan.settings.cluster
    if cluster.mode != "aks" or cluster.image_cache.enabled:
        return
    nodes = sum(pool.max_count - pool.min_count for pool in cluster.gpu_pools)
    if nodes <= DOCKER_HUB_ANONYMOUS_PULLS_PER_HOUR:
        return
    out.warning(
        IMAGE_CACHE,
        f"the GPU pools can add {nodes} nodes and each pulls {RAY_IMAGE} (about 10 GB) from "
        f"Docker Hub without credentials, which allows {DOCKER_HUB_ANONYMOUS_PULLS_PER_HOUR} "
        "pulls an hour per IP address while the cluster's nodes share a few outbound IPs: a "
        "scale-out past that gets 429s (ImagePullBackOff) and runs into the pod-readiness "
        "timeout; turn on cluster.imageCache (an Azure Container Registry caching the image, "
        "docs/aks.md)",
    )


def check_free_tier_size(plan: Plan, out: Findings) -> None:
    """The Free tier on a cluster that can grow past the nodes AKS means it for."""
    cluster = plan.settings.cluster
    if cluster.mode != "aks" or cluster.tier != "Free":
        return
    nodes = (
        cluster.system_pool.count
        + cluster.cpu_pool.max_count
        + sum(pool.max_count for pool in cluster.gpu_pools)
    )
    if nodes > FREE_TIER_MAX_NODES:
        out.warning(
            CLUSTER_TIER,
            f"Free with up to {nodes} nodes: AKS means the Free tier for at most "
            f"{FREE_TIER_MAX_NODES} nodes and gives it no uptime SLA; set tier: Standard",
        )


def check_role_assignments_left_to_an_admin(plan: Plan, out: Findings) -> None:
    """With `cluster.createRoleAssignments: false`, every grant the stack would have made."""
    settings = plan.settings
    cluster = settings.cluster
    if cluster.mode != "aks" or cluster.create_role_assignments:
        return
    if cluster.deployer_principal_type != "None":
        out.warning(
            CREATE_ROLE_ASSIGNMENTS,
            f'an admin must grant "{AKS_RBAC_CLUSTER_ADMIN_ROLE_NAME}" on cluster '
            f"{aks_names(settings.stack).cluster} to the {cluster.deployer_principal_type} that "
            "runs `pulumi up` (the stack creates no role assignment; commands in docs/aks.md)",
        )
    _grafana_grants(plan, out)
    _image_cache_grants(plan, out)
    _kubeconfig_grants(plan, out)
    storage = settings.storage
    if not storage.enabled or storage.existing_account:
        return  # no identities of the stack's own
    teams = settings.scheduling.teams
    account = f"{account_name_prefix(settings.stack)}<suffix>"
    for identity in team_identities(settings.stack, ((t.name, t.namespace) for t in teams)):
        out.warning(
            CREATE_ROLE_ASSIGNMENTS,
            f'an admin must assign the role "{BLOB_DATA_ROLE_NAME}" (Blob data actions only, '
            f"created once per stack) on storage account {account} to identity "
            f"{identity.identity_name}, with the condition `aksray plan --json` shows for team "
            f"{identity.team} (summary.storage.teams; commands in docs/aks.md)",
        )


def _kubeconfig_grants(plan: Plan, out: Findings) -> None:
    settings = plan.settings
    groups: dict[str, list[str]] = {}
    for team in settings.scheduling.teams:
        for group in (*team.members, *team.viewers):
            groups.setdefault(group, []).append(team.name)
    for group, teams in groups.items():
        out.warning(
            CREATE_ROLE_ASSIGNMENTS,
            f'an admin must grant "{AKS_CLUSTER_USER_ROLE_NAME}" on cluster '
            f"{aks_names(settings.stack).cluster} to group {group} (team "
            f"{', '.join(teams)}: it fetches the kubeconfig with it; commands in docs/aks.md)",
        )


def _image_cache_grants(plan: Plan, out: Findings) -> None:
    cache = plan.settings.cluster.image_cache
    if not cache.enabled:
        return
    cluster = aks_names(plan.settings.stack).cluster
    out.warning(
        CREATE_ROLE_ASSIGNMENTS,
        f'an admin must grant "{ACR_PULL_ROLE_NAME}" on the stack\'s image cache registry to the '
        f"kubelet identity of cluster {cluster} (its nodes pull the Ray image through it; "
        "commands in docs/aks.md)",
    )
    for secret in (cache.username_secret, cache.password_secret):
        out.warning(
            CREATE_ROLE_ASSIGNMENTS,
            f'an admin must grant "{KEY_VAULT_SECRETS_USER_ROLE_NAME}" on secret {secret} of Key '
            f"Vault {cache.vault_name} to the identity of the image cache registry's credential "
            "set dockerhub (it pulls from Docker Hub with them; commands in docs/aks.md)",
        )


def _grafana_grants(plan: Plan, out: Findings) -> None:
    settings = plan.settings
    observability = settings.observability
    if not (observability.enabled and observability.grafana):
        return
    names = monitoring_names(settings.stack)
    out.warning(
        CREATE_ROLE_ASSIGNMENTS,
        f'an admin must grant "{MONITORING_DATA_READER_ROLE_NAME}" on Azure Monitor workspace '
        f"{names.workspace} to the managed identity of Grafana {names.grafana} (its dashboards "
        "read the metrics with it; commands in docs/aks.md)",
    )
    principal = settings.cluster.deployer_principal_type
    if principal != "None":
        out.warning(
            CREATE_ROLE_ASSIGNMENTS,
            f'an admin must grant "{GRAFANA_EDITOR_ROLE_NAME}" on Grafana {names.grafana} to the '
            f"{principal} that runs `pulumi up` (it provisions the dashboards; commands in "
            "docs/aks.md)",
        )

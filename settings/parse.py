"""The whole stack configuration, section by section, and the rules that span sections.

`parse_settings` is pure: it takes the raw values (structured ones already decoded) and returns
`Settings`, or raises `SettingsError` with every problem found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from catalog.azure import MAX_STACK_NAME_LENGTH, STACK_NAME_PATTERN
from catalog.project import PROJECT
from settings.catalogues import check_kubernetes_version, check_region
from settings.cluster import CLUSTER_KEYS, parse_cluster
from settings.defaults import DEFAULT_LOCATION
from settings.deployable import check_deployable
from settings.errors import Problem, SettingsError, shown
from settings.model import ClusterSettings, Settings, StorageSettings
from settings.multikueue import MULTIKUEUE_KEYS, parse_multikueue
from settings.observability import OBSERVABILITY_KEYS, parse_observability
from settings.operators import OPERATOR_KEYS, parse_operators
from settings.reader import Section
from settings.scheduling import SCHEDULING_KEYS, parse_scheduling
from settings.storage import STORAGE_KEYS, check_team_containers, parse_storage
from settings.workloads import WORKLOAD_KEYS, parse_workloads

TOP_LEVEL_KEYS: Final = (
    "location",
    "cluster",
    "storage",
    "scheduling",
    "workloads",
    "operators",
    "observability",
    "huggingfaceToken",
    "multikueue",
)
_LOCATION = re.compile(r"^[a-z][a-z0-9]*\Z")


def parse_settings(
    raw: Mapping[str, Any],
    *,
    stack: str,
    secret_keys: frozenset[str] = frozenset(),
) -> Settings:
    """Validate raw config values (`key -> value`, structured values already decoded)."""
    problems: list[Problem] = []
    flat = [key for key in raw if _set_without_path(key)]
    problems += [_path_hint(key) for key in flat]
    top = Section({k: v for k, v in raw.items() if k not in flat}, "", problems, TOP_LEVEL_KEYS)
    location = top.string(
        "location",
        DEFAULT_LOCATION,
        pattern=_LOCATION,
        hint="an Azure region name such as eastus2 or westeurope",
    )
    # What the checks below find judges values that parsed: a model with only such problems is
    # whole, and the settings checks still run on it (SettingsError.settings), so a stack hears
    # of every problem in one run.
    judged: list[Problem] = []
    cluster = parse_cluster(top.mapping("cluster", CLUSTER_KEYS), problems)
    storage = parse_storage(top.mapping("storage", STORAGE_KEYS), problems)
    _check_azure(stack, cluster, storage, judged)
    check_kubernetes_version(cluster, judged)
    check_region(location, cluster, judged)
    scheduling = parse_scheduling(
        top.mapping("scheduling", SCHEDULING_KEYS), problems, cluster.flavors
    )
    workloads = parse_workloads(
        top.mapping("workloads", WORKLOAD_KEYS), problems, scheduling, storage
    )
    check_team_containers(
        storage,
        scheduling,
        workloads,
        # An existing account's access is granted where it is managed.
        grants_created=cluster.mode == "aks" and cluster.create_role_assignments,
        problems=judged,
    )
    operators = parse_operators(top.mapping("operators", OPERATOR_KEYS), problems, cluster)
    check_deployable(location, cluster, operators, judged)
    observability = parse_observability(
        top.mapping("observability", OBSERVABILITY_KEYS), problems, cluster
    )
    multikueue = parse_multikueue(
        top.mapping("multikueue", MULTIKUEUE_KEYS),
        problems,
        stack=stack,
        manager=cluster,
        scheduling=scheduling,
        workloads=workloads,
        operators=operators,
    )
    _check_token(top, raw, secret_keys)
    parsed = [p for p in problems if p not in judged]  # a worker's check may repeat the manager's
    if parsed:
        raise SettingsError(parsed + judged)
    settings = Settings(
        project=PROJECT,
        stack=stack,
        location=location,
        cluster=cluster,
        storage=storage,
        scheduling=scheduling,
        workloads=workloads,
        operators=operators,
        observability=observability,
        multikueue=multikueue,
    )
    if judged:
        raise SettingsError(judged, settings=settings)
    return settings


def _set_without_path(key: str) -> bool:
    """A key like `cluster.kubernetesVersion` or `cluster.gpuPools[0].vmSize`: what
    `pulumi config set` stores as one flat key when `--path` is left out."""
    head = _head(key)
    return head != key and head in TOP_LEVEL_KEYS


def _head(key: str) -> str:
    return re.split(r"[.\[]", key, maxsplit=1)[0]


def _path_hint(key: str) -> Problem:
    name = shown(key)
    return Problem(
        name,
        f"is one key whose name holds the path, not a setting inside `{_head(key)}`: "
        "`pulumi config set` stores that when `--path` is left out. Run "
        f"`pulumi config rm '{name}'` and `pulumi config set --path '{name}' <value>`",
    )


def _check_token(top: Section, raw: Mapping[str, Any], secret_keys: frozenset[str]) -> None:
    """`huggingfaceToken` is a secret string, never plain text in the stack file."""
    if not top.has("huggingfaceToken"):
        return
    if "huggingfaceToken" not in secret_keys:
        top.problem(
            "huggingfaceToken",
            "must be a secret, never plain text: run "
            "`pulumi config set --secret huggingfaceToken <token>`",
        )
    elif not isinstance(raw["huggingfaceToken"], str):
        top.problem("huggingfaceToken", "must be a string token")


def _check_azure(
    stack: str, cluster: ClusterSettings, storage: StorageSettings, problems: list[Problem]
) -> None:
    """What Azure itself would reject, found before anything is created."""
    if cluster.mode == "aks" and not STACK_NAME_PATTERN.fullmatch(stack):
        problems.append(
            Problem(
                "stack",
                f"{stack!r} cannot be part of Azure names (resource groups, cluster, DNS "
                f"prefix, identities); name the stack with 1-{MAX_STACK_NAME_LENGTH} lowercase "
                "letters, digits and '-', starting and ending with a letter or digit",
            )
        )
    if cluster.mode == "aks" and cluster.kubernetes_version.count(".") == 2:
        problems.append(
            Problem(
                "cluster.kubernetesVersion",
                f"{cluster.kubernetes_version!r} pins a patch release, but AKS upgrades patches "
                "by itself (upgrade channel `patch`) and a later update would ask for a "
                f"downgrade; write the minor version only, e.g. "
                f'"{cluster.kubernetes_version.rsplit(".", 1)[0]}"',
            )
        )
    if cluster.mode == "existing" and storage.enabled and not storage.existing_account:
        problems.append(
            Problem(
                "storage.enabled",
                "an existing cluster cannot use the storage account and workload identities "
                "this stack creates (they trust the OIDC issuer of its own AKS cluster); name an "
                "account you already have with storage.existingAccount, or set storage.enabled "
                "to false",
            )
        )
    if cluster.mode == "aks" and storage.existing_account:
        problems.append(
            Problem(
                "storage.existingAccount",
                "is only for cluster.mode existing: an aks stack creates its own account; "
                "remove it",
            )
        )

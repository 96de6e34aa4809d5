"""The AKS cluster under mocks: security settings, pool shapes, provider wiring, naming rules."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aksray.offline.mocks import placeholder
from aksray.offline.runner import RecordedResource, RunResult, run_program
from catalog.azure import MAX_STACK_NAME_LENGTH, STACK_NAME_PATTERN
from catalog.pools import GPU_TAINT, gpu_pool_node_taints, taint_string
from manifests.aks import (
    AKS_RBAC_CLUSTER_ADMIN_ROLE,
    aks_names,
    gpu_pool_args,
    maintenance_configuration_args,
    pool_ignored_fields,
)
from manifests.identity import team_identities
from manifests.storage import ACCOUNT_SUFFIX_LENGTH, account_name_prefix, data_resource_group_name
from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.support.harness import (
    P,
    assert_rejected,
    mutated,
    one,
    planned,
    stack_document,
    transitive_dependencies,
    write_stack,
)

CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
GROUP = "azure-native:resources:ResourceGroup"
ROLE = "azure-native:authorization:RoleAssignment"
PROVIDER = "pulumi:providers:kubernetes"

Config = dict[str, Any]


def _cluster(result: RunResult) -> RecordedResource:
    return one(result, CLUSTER, "aksray-cluster-aks")


def _pool(result: RunResult, name: str) -> RecordedResource:
    return one(result, POOL, f"aksray-cluster-pool-{name}")


def _cluster_config(mutate: Any) -> Any:
    def apply(config: Config) -> None:
        mutate(config[P + "cluster"])

    return apply


# ---------------------------------------------------------------------------------------------
# The ManagedCluster
# ---------------------------------------------------------------------------------------------


def test_cluster_is_secure_by_default() -> None:
    inputs = _cluster(planned("dev")).inputs
    assert inputs["aadProfile"] == {"managed": True, "enableAzureRBAC": True}
    assert inputs["enableRBAC"] is True
    assert inputs["disableLocalAccounts"] is True
    assert inputs["identity"] == {"type": "SystemAssigned"}
    assert inputs["oidcIssuerProfile"] == {"enabled": True}
    assert inputs["securityProfile"] == {"workloadIdentity": {"enabled": True}}
    assert inputs["autoUpgradeProfile"] == {
        "upgradeChannel": "patch",
        "nodeOSUpgradeChannel": "NodeImage",
    }
    assert inputs["networkProfile"] == {
        "networkPlugin": "azure",
        "networkPluginMode": "overlay",
        "networkDataplane": "cilium",
        "networkPolicy": "cilium",
        "loadBalancerSku": "standard",
    }


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_cluster_identity_version_and_names(stack: str) -> None:
    result = planned(stack)
    inputs = _cluster(result).inputs
    assert inputs["kubernetesVersion"] == result.settings.cluster.kubernetes_version == "1.35"
    assert inputs["location"] == "eastus2"
    assert inputs["resourceName"] == f"aks-aksray-{stack}"
    assert inputs["dnsPrefix"] == f"aksray-{stack}"
    assert inputs["nodeResourceGroup"] == f"rg-aksray-{stack}-nodes"
    assert inputs["resourceGroupName"] == f"rg-aksray-{stack}"
    group = one(result, GROUP, "aksray-cluster-rg")
    assert group.inputs == {"resourceGroupName": f"rg-aksray-{stack}", "location": "eastus2"}


def test_local_accounts_are_an_explicit_opt_in(tmp_path: Path) -> None:
    document = mutated("dev", _cluster_config(lambda c: c.update(localAccounts=True)))
    result = run_program(write_stack(tmp_path, document))
    assert _cluster(result).inputs["disableLocalAccounts"] is False
    # Still Entra ID with Azure RBAC; local accounts only add the break-glass admin kubeconfig.
    assert _cluster(result).inputs["aadProfile"] == {"managed": True, "enableAzureRBAC": True}


@pytest.mark.parametrize(("stack", "count"), [("dev", 1), ("prod", 3)])
def test_system_pool_runs_critical_addons_only(stack: str, count: int) -> None:
    (system,) = _cluster(planned(stack)).inputs["agentPoolProfiles"]
    assert system["name"] == "system"
    assert system["mode"] == "System"
    assert system["count"] == count
    assert system["enableAutoScaling"] is False
    assert system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    assert system["vmSize"] == "Standard_D4ds_v6"
    assert system["orchestratorVersion"] == "1.35"


# ---------------------------------------------------------------------------------------------
# Node pools
# ---------------------------------------------------------------------------------------------

GPU_POOLS = [
    # (stack, pool, vmSize, minCount, maxCount, spot)
    ("dev", "a100", "Standard_NC24ads_A100_v4", 0, 5, False),
    ("prod", "a100", "Standard_NC96ads_A100_v4", 0, 8, False),
    ("prod", "h100", "Standard_ND96isr_H100_v5", 0, 4, False),
    ("prod", "a100spot", "Standard_NC24ads_A100_v4", 0, 16, True),
]


@pytest.mark.parametrize(("stack", "name", "vm_size", "low", "high", "spot"), GPU_POOLS)
def test_gpu_pool_shapes(
    stack: str, name: str, vm_size: str, low: int, high: int, spot: bool
) -> None:
    result = planned(stack)
    pool = _pool(result, name)
    inputs = pool.inputs
    assert inputs["agentPoolName"] == name
    assert inputs["mode"] == "User"
    assert inputs["vmSize"] == vm_size
    assert (inputs["minCount"], inputs["maxCount"], inputs["count"]) == (low, high, low)
    assert inputs["enableAutoScaling"] is True
    assert inputs["nodeTaints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert inputs["gpuProfile"] == {"driver": "None"}  # gpuDriver: operator in both stacks
    assert inputs["resourceName"] == f"aks-aksray-{stack}"
    assert inputs["orchestratorVersion"] == "1.35"
    spot_settings = {
        key: inputs[key]
        for key in ("scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice")
        if key in inputs
    }
    if spot:
        assert spot_settings == {
            "scaleSetPriority": "Spot",
            "scaleSetEvictionPolicy": "Delete",
            "spotMaxPrice": -1,
        }
    else:
        assert spot_settings == {}


@pytest.mark.parametrize(("stack", "name", "vm_size", "low", "high", "spot"), GPU_POOLS)
def test_gpu_pool_taints_are_the_ones_flavors_tolerate(
    stack: str, name: str, vm_size: str, low: int, high: int, spot: bool
) -> None:
    """Declared taints plus the one AKS adds to spot pools = what catalog/pools.py promises."""
    declared = _pool(planned(stack), name).inputs["nodeTaints"]
    added_by_aks = ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"] if spot else []
    promised = [taint_string(t) for t in gpu_pool_node_taints(spot)]
    assert declared + added_by_aks == promised
    assert taint_string(GPU_TAINT) in declared


def test_gpu_driver_aks_has_aks_install_the_driver(tmp_path: Path) -> None:
    document = mutated("prod", _cluster_config(lambda c: c.update(gpuDriver="aks")))
    result = run_program(write_stack(tmp_path, document, "Pulumi.prod.yaml"))
    for name in ("a100", "h100", "a100spot"):
        assert _pool(result, name).inputs["gpuProfile"] == {"driver": "Install"}


@pytest.mark.parametrize(
    ("stack", "vm_size", "low", "high"),
    [("dev", "Standard_D8ds_v6", 1, 3), ("prod", "Standard_D16ds_v6", 2, 6)],
)
def test_cpu_pool_shape(stack: str, vm_size: str, low: int, high: int) -> None:
    inputs = _pool(planned(stack), "cpu").inputs
    assert inputs["agentPoolName"] == "cpu"
    assert inputs["mode"] == "User"
    assert inputs["vmSize"] == vm_size
    assert (inputs["minCount"], inputs["maxCount"], inputs["count"]) == (low, high, low)
    assert inputs["enableAutoScaling"] is True
    assert "nodeTaints" not in inputs  # operators and Ray heads need no toleration
    assert "gpuProfile" not in inputs


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_pools_wait_for_the_cluster_and_one_another_only(stack: str) -> None:
    """Pools come after the cluster and, one at a time, after the pools before them (AKS
    refuses concurrent agent pool operations): never after storage, identity or Kubernetes."""
    result = planned(stack)
    cluster = _cluster(result)
    group = one(result, GROUP, "aksray-cluster-rg")
    order = ["cpu", *(pool.name for pool in result.settings.cluster.gpu_pools)]
    for index, name in enumerate(order):
        pool = _pool(result, name)
        earlier = {_pool(result, before).urn for before in order[:index]}
        assert cluster.urn in pool.depends_on
        assert transitive_dependencies(result, pool) == {cluster.urn, group.urn} | earlier
        if index:
            assert _pool(result, order[index - 1]).urn in pool.depends_on


# ---------------------------------------------------------------------------------------------
# Fields AKS and its autoscaler own after creation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_pool_list_and_node_counts_are_left_to_aks(stack: str) -> None:
    """A `pulumi up` after `pulumi refresh` must neither diff the cluster's pool list (Azure
    reports the separately managed pools there too) nor send an autoscaled pool's initial
    count back over what the autoscaler runs."""
    result = planned(stack)
    assert _cluster(result).ignore_changes == ("agentPoolProfiles",)
    pools = result.by_type(POOL)
    flavors = ["cpu", *(pool.name for pool in result.settings.cluster.gpu_pools)]
    assert sorted(p.name for p in pools) == sorted(f"aksray-cluster-pool-{f}" for f in flavors)
    for pool in pools:
        assert pool.inputs["enableAutoScaling"] is True, pool.name
        assert pool.ignore_changes == ("count",), pool.name
    # Nothing else in Azure ignores a field: every other input stays under the stack's control.
    others = [r for r in result.resources if r.type.startswith("azure-native:") and r.type != POOL]
    assert {r.name: r.ignore_changes for r in others if r.ignore_changes} == {
        "aksray-cluster-aks": ("agentPoolProfiles",)
    }


def test_only_autoscaled_pools_leave_their_count_alone() -> None:
    autoscaled = gpu_pool_args(
        "a100",
        "Standard_NC24ads_A100_v4",
        min_count=0,
        max_count=4,
        spot=False,
        gpu_driver="operator",
        kubernetes_version="1.35",
    )
    assert pool_ignored_fields(autoscaled) == ["count"]
    fixed = {**autoscaled, "enable_auto_scaling": False}
    assert pool_ignored_fields(fixed) == []


# ---------------------------------------------------------------------------------------------
# Planned maintenance: when the upgrade channels may drain and re-image nodes
# ---------------------------------------------------------------------------------------------

MAINTENANCE = "azure-native:containerservice:MaintenanceConfiguration"


def _maintenance_inputs(stack: str, window: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The inputs both configurations must have, by resource name."""
    return {
        f"aksray-cluster-maintenance-{short}": {
            "resourceGroupName": f"rg-aksray-{stack}",
            "resourceName": f"aks-aksray-{stack}",
            "configName": config,
            "maintenanceWindow": window,
        }
        for config, short in (
            ("aksManagedAutoUpgradeSchedule", "auto-upgrade"),
            ("aksManagedNodeOSUpgradeSchedule", "node-os-upgrade"),
        )
    }


def _maintenance(result: RunResult) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in result.by_type(MAINTENANCE)}


def test_upgrades_wait_for_the_default_window() -> None:
    """Without cluster.maintenanceWindow: every Sunday 00:00-04:00 UTC, for both channels."""
    assert "maintenanceWindow" not in stack_document("dev")["config"][P + "cluster"]
    assert _maintenance(planned("dev")) == _maintenance_inputs(
        "dev",
        {
            "schedule": {"weekly": {"dayOfWeek": "Sunday", "intervalWeeks": 1}},
            "durationHours": 4,
            "startTime": "00:00",
            "utcOffset": "+00:00",
        },
    )


def test_upgrades_wait_for_the_stack_window() -> None:
    assert _maintenance(planned("prod")) == _maintenance_inputs(
        "prod",
        {
            "schedule": {"weekly": {"dayOfWeek": "Saturday", "intervalWeeks": 1}},
            "durationHours": 6,
            "startTime": "22:00",
            "utcOffset": "+00:00",
        },
    )


def test_every_window_key_reaches_both_configurations(tmp_path: Path) -> None:
    window = {
        "dayOfWeek": "Wednesday",
        "startTime": "13:30",
        "durationHours": 24,
        "utcOffset": "-05:30",
        "intervalWeeks": 4,
    }
    document = mutated("dev", _cluster_config(lambda c: c.update(maintenanceWindow=window)))
    result = run_program(write_stack(tmp_path, document))  # stack "test"
    assert _maintenance(result) == _maintenance_inputs(
        "test",
        {
            "schedule": {"weekly": {"dayOfWeek": "Wednesday", "intervalWeeks": 4}},
            "durationHours": 24,
            "startTime": "13:30",
            "utcOffset": "-05:30",
        },
    )


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_maintenance_windows_come_with_the_cluster(stack: str) -> None:
    """Created right after the cluster (before AKS considers its first upgrade), independent of
    the pools."""
    result = planned(stack)
    cluster = _cluster(result)
    group = one(result, GROUP, "aksray-cluster-rg")
    configurations = result.by_type(MAINTENANCE)
    assert len(configurations) == 2
    for configuration in configurations:
        assert set(configuration.depends_on) == {cluster.urn, group.urn}
        assert configuration.parent == cluster.parent


@pytest.mark.parametrize(
    ("window", "path", "fix"),
    [
        ({"dayOfWeek": "sunday"}, "dayOfWeek", "Monday, Tuesday"),
        ({"dayOfWeek": 7}, "dayOfWeek", "Sunday"),
        ({"startTime": "24:00"}, "startTime", '"HH:MM"'),
        ({"startTime": "2:00"}, "startTime", '"HH:MM"'),
        ({"startTime": 1320}, "startTime", "quote it"),
        ({"durationHours": 3}, "durationHours", "between 4 and 24"),
        ({"durationHours": 25}, "durationHours", "between 4 and 24"),
        ({"durationHours": "4"}, "durationHours", "whole number"),
        ({"utcOffset": "+5:30"}, "utcOffset", '"+HH:MM"'),
        ({"utcOffset": "05:30"}, "utcOffset", '"+HH:MM"'),
        ({"utcOffset": "+15:00"}, "utcOffset", '"+14:00"'),
        ({"intervalWeeks": 0}, "intervalWeeks", "between 1 and 4"),
        ({"intervalWeeks": 5}, "intervalWeeks", "between 1 and 4"),
        ({"startDate": "2026-01-01"}, "startDate", "known keys here: dayOfWeek"),
    ],
)
def test_bad_maintenance_windows_are_rejected_with_the_fix(
    window: dict[str, Any], path: str, fix: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        parse_settings({"cluster": {"maintenanceWindow": window}}, stack="dev")
    (problem,) = raised.value.problems
    assert problem.path == f"cluster.maintenanceWindow.{path}"
    assert fix in problem.message


def test_only_the_two_aks_managed_schedules_are_built() -> None:
    # `default` schedules AKS's own weekly releases, not the upgrade channels.
    with pytest.raises(ValueError, match="aksManagedAutoUpgradeSchedule"):
        maintenance_configuration_args(
            "default",
            day_of_week="Sunday",
            start_time="00:00",
            duration_hours=4,
            utc_offset="+00:00",
            interval_weeks=1,
        )


def test_maintenance_window_belongs_to_aks_mode_only(tmp_path: Path) -> None:
    document = mutated(
        "local", _cluster_config(lambda c: c.update(maintenanceWindow={"dayOfWeek": "Sunday"}))
    )
    run = assert_rejected(tmp_path, document, "cluster.maintenanceWindow")
    assert "only used when mode is aks" in run.stderr


# ---------------------------------------------------------------------------------------------
# Access: the provider, its kubeconfig and the deployer's role
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_kubeconfig_is_secret_everywhere(stack: str) -> None:
    result = planned(stack)
    assert result.outputs["kubeconfig"] == "[secret]"
    provider = one(result, PROVIDER, "aksray-cluster-k8s")
    assert provider.inputs["kubeconfig"] == "[secret]"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_cluster_outputs(stack: str) -> None:
    outputs = planned(stack).outputs
    assert outputs["clusterName"] == f"aks-aksray-{stack}"
    assert outputs["nodeResourceGroup"] == f"rg-aksray-{stack}-nodes"
    assert outputs["oidcIssuerUrl"] == placeholder(f"OIDC issuer URL of aks-aksray-{stack}")


@pytest.mark.parametrize(
    ("stack", "principal_type"), [("dev", "User"), ("prod", "ServicePrincipal")]
)
def test_deployer_is_cluster_admin_on_this_cluster_only(stack: str, principal_type: str) -> None:
    result = planned(stack)
    role = one(result, ROLE, "aksray-cluster-deployer-admin")
    assert role.inputs["scope"] == placeholder("id of ManagedCluster aksray-cluster-aks")
    assert role.inputs["principalId"] == placeholder("object id of the deploying principal")
    assert role.inputs["principalType"] == principal_type
    assert role.inputs["roleDefinitionId"] == (
        f"/subscriptions/{placeholder('subscription id')}/providers/"
        f"Microsoft.Authorization/roleDefinitions/{AKS_RBAC_CLUSTER_ADMIN_ROLE}"
    )
    provider = one(result, PROVIDER, "aksray-cluster-k8s")
    # The provider's first request comes after its identity holds the role and the CPU pool runs.
    assert set(provider.depends_on) >= {role.urn, _pool(result, "cpu").urn}


def test_deployer_role_can_be_left_to_the_operator(tmp_path: Path) -> None:
    document = mutated("dev", _cluster_config(lambda c: c.update(deployerPrincipalType="None")))
    result = run_program(write_stack(tmp_path, document))
    # Only the team's Blob assignment remains (one, whatever the containers it reaches).
    assert sorted(r.name for r in result.by_type(ROLE)) == ["aksray-storage-team-a-blob"]
    provider = one(result, PROVIDER, "aksray-cluster-k8s")
    assert _pool(result, "cpu").urn in provider.depends_on
    assert not any(ROLE in urn for urn in transitive_dependencies(result, provider))


def test_existing_mode_without_rendering_uses_the_kube_context(tmp_path: Path) -> None:
    document = stack_document("local")
    del document["config"]["aks-ray-platform:cluster"]["renderYamlTo"]
    result = run_program(write_stack(tmp_path, document))
    provider = one(result, PROVIDER, "aksray-cluster-k8s")
    assert provider.inputs["context"] == "kind-dev"
    assert "renderYamlToDirectory" not in provider.inputs


def test_aks_mode_rendering_passes_no_kubeconfig(tmp_path: Path) -> None:
    document = stack_document("dev")
    document["config"]["aks-ray-platform:cluster"]["renderYamlTo"] = "out/dev-yaml"
    document["config"]["aks-ray-platform:operators"] = {"install": False}
    result = run_program(write_stack(tmp_path, document))
    provider = one(result, PROVIDER, "aksray-cluster-k8s")
    assert "kubeconfig" not in provider.inputs
    assert provider.inputs["renderYamlToDirectory"] == "out/dev-yaml"


def test_existing_mode_creates_nothing_in_azure() -> None:
    result = planned("local")
    assert result.resources
    assert [r.type for r in result.resources if r.type.startswith("azure-native:")] == []
    assert result.by_type("random:index/randomString:RandomString") == []
    provider = one(result, PROVIDER, "aksray-cluster-k8s")
    # Rendering reaches no cluster: the provider takes no context (it refuses one with a
    # render directory) even though the stack names one for when it stops rendering.
    assert "context" not in provider.inputs and "kubeconfig" not in provider.inputs
    assert provider.inputs["renderYamlToDirectory"] == "out/local-yaml"
    assert "kubeconfig" not in result.outputs


# ---------------------------------------------------------------------------------------------
# Names derived from the stack name
# ---------------------------------------------------------------------------------------------

# Azure's naming rules for what an aks stack creates.
_RESOURCE_GROUP = re.compile(r"^[-\w.()]{0,89}[-\w()]$")
_CLUSTER_NAME = re.compile(r"^[a-zA-Z0-9]$|^[a-zA-Z0-9][-_a-zA-Z0-9]{0,61}[a-zA-Z0-9]$")
_DNS_PREFIX = re.compile(r"^[a-zA-Z0-9]$|^[a-zA-Z0-9][-a-zA-Z0-9]{0,52}[a-zA-Z0-9]$")
_IDENTITY = re.compile(r"^[a-zA-Z0-9][-_a-zA-Z0-9]{2,127}$")
_CREDENTIAL = re.compile(r"^[a-zA-Z0-9][-_a-zA-Z0-9]{2,119}$")
_STORAGE_ACCOUNT = re.compile(r"^[a-z0-9]{3,24}$")
LONGEST_TEAM = "t" * 63  # a DNS label


def _assert_azure_names_valid(stack: str) -> None:
    names = aks_names(stack)
    for group in (names.resource_group, names.node_resource_group, data_resource_group_name(stack)):
        assert _RESOURCE_GROUP.match(group), group
    assert _CLUSTER_NAME.match(names.cluster), names.cluster
    assert _DNS_PREFIX.match(names.dns_prefix), names.dns_prefix
    (plan,) = team_identities(stack, [(LONGEST_TEAM, LONGEST_TEAM)])
    assert _IDENTITY.match(plan.identity_name), plan.identity_name
    assert _CREDENTIAL.match(plan.credentials[0].name), plan.credentials[0].name
    # The random suffix is lowercase letters and digits of exactly this length.
    account = account_name_prefix(stack) + "z9" * (ACCOUNT_SUFFIX_LENGTH // 2)
    assert _STORAGE_ACCOUNT.match(account), account


def test_the_longest_allowed_stack_name_fits_every_azure_name() -> None:
    longest = "a" + "-" * (MAX_STACK_NAME_LENGTH - 2) + "z"
    assert STACK_NAME_PATTERN.match(longest)
    _assert_azure_names_valid(longest)
    _assert_azure_names_valid("z" * MAX_STACK_NAME_LENGTH)
    _assert_azure_names_valid("1")


@given(st.from_regex(STACK_NAME_PATTERN, fullmatch=True))
def test_every_allowed_stack_name_fits_every_azure_name(stack: str) -> None:
    _assert_azure_names_valid(stack)


@pytest.mark.parametrize(
    "stack", ["Dev", "my_stack", "dev.eu", "-dev", "dev-", "x" * (MAX_STACK_NAME_LENGTH + 1)]
)
def test_aks_stack_names_azure_cannot_take_are_rejected(stack: str) -> None:
    with pytest.raises(SettingsError, match="lowercase") as raised:
        parse_settings({}, stack=stack)
    assert [problem.path for problem in raised.value.problems] == ["stack"]


def test_existing_stacks_may_have_any_name() -> None:
    settings = parse_settings(
        {
            "cluster": {"mode": "existing", "kubeconfigContext": "kind"},
            "storage": {"enabled": False},
        },
        stack="My_Local.Stack",
    )
    assert settings.cluster.mode == "existing"


def test_patch_pinned_version_is_rejected_on_aks(tmp_path: Path) -> None:
    document = mutated("dev", _cluster_config(lambda c: c.update(kubernetesVersion="1.35.2")))
    run = assert_rejected(tmp_path, document, "cluster.kubernetesVersion")
    assert '"1.35"' in run.stderr


def test_storage_needs_an_aks_cluster(tmp_path: Path) -> None:
    document = mutated("local", lambda c: c[P + "storage"].update(enabled=True))
    run = assert_rejected(tmp_path, document, "storage.enabled")
    assert "storage.enabled to false" in run.stderr


def test_unknown_deployer_principal_type_is_rejected(tmp_path: Path) -> None:
    document = mutated("dev", _cluster_config(lambda c: c.update(deployerPrincipalType="Group")))
    run = assert_rejected(tmp_path, document, "cluster.deployerPrincipalType")
    assert "User, ServicePrincipal, None" in run.stderr


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for inner in value.values() for key in _keys(inner)}
    if isinstance(value, list):
        return {key for inner in value for key in _keys(inner)}
    return set()


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_azure_argument_is_one_the_sdk_knows(stack: str) -> None:
    """Nested arguments are plain dicts: the SDK turns the names it knows into the API's
    camelCase and would send a misspelled one unchanged, snake_case and all."""
    azure = [r for r in planned(stack).resources if r.type.startswith("azure-native:")]
    assert {CLUSTER, POOL, ROLE, "azure-native:storage:StorageAccount"} <= {r.type for r in azure}
    for resource in azure:
        unknown = {key for key in _keys(resource.inputs) if "_" in key}
        assert unknown == set(), (resource.name, unknown)

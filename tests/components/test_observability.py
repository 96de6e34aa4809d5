"""observability: its settings, the Azure resources of managed Prometheus and Managed Grafana,
the roles they get, what the plan says about them, and that stacks without it pay nothing."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT, RecordedResource, RunResult, run_program
from aksray.plan.checks.crds import check_objects_have_crds
from aksray.plan.checks.findings import Findings
from aksray.plan.model.monitoring import GRAFANA_OUTPUT, monitoring_lines
from aksray.plan.model.plan import plan
from aksray.plan.report.summary import summary
from manifests.dashboards import DASHBOARD_FOLDER, DASHBOARDS_DIR, dashboards
from manifests.monitoring import (
    GRAFANA_EDITOR_ROLE,
    MAX_GRAFANA_NAME,
    MONITORING_DATA_READER_ROLE,
    PROMETHEUS_STREAM,
    monitoring_names,
)
from tests.support.harness import P, assert_rejected, mutated, planned, write_stack

AMW = "azure-native:monitor:AzureMonitorWorkspace"
DCE = "azure-native:monitor:DataCollectionEndpoint"
DCR = "azure-native:monitor:DataCollectionRule"
DCRA = "azure-native:monitor:DataCollectionRuleAssociation"
GRAFANA = "azure-native:dashboard:Grafana"
CLUSTER = "azure-native:containerservice:ManagedCluster"
ROLE = "azure-native:authorization:RoleAssignment"
DASHBOARD = "grafana:oss/dashboard:Dashboard"
FOLDER = "grafana:oss/folder:Folder"
GRAFANA_PROVIDER = "pulumi:providers:grafana"
AZURE_MONITORING_TYPES = (AMW, DCE, DCR, DCRA, GRAFANA, DASHBOARD, FOLDER, GRAFANA_PROVIDER)


def _only(result: RunResult, type_token: str) -> RecordedResource:
    found = result.by_type(type_token)
    assert len(found) == 1, (type_token, [r.name for r in found])
    return found[0]


def _role(resource: RecordedResource) -> str:
    return str(resource.inputs["roleDefinitionId"]).rsplit("/", 1)[-1]


def _observed(tmp_path: Path, stack: str, **keys: Any) -> RunResult:
    document = mutated(stack, lambda c: c.__setitem__(P + "observability", keys))
    result = run_program(write_stack(tmp_path, document, f"Pulumi.{stack}.yaml"))
    assert result.ok, result.problems
    return result


# --------------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("stack", "on"), [("dev", False), ("prod", True), ("local", False)])
def test_prod_observes_and_dev_and_local_do_not(stack: str, on: bool) -> None:
    observed = planned(stack).settings.observability
    assert (observed.enabled, observed.grafana) == (on, on)
    assert bool([r for t in AZURE_MONITORING_TYPES for r in planned(stack).by_type(t)]) is on


@pytest.mark.parametrize(
    ("stack", "keys", "path"),
    [
        ("local", {"enabled": True}, "observability.enabled"),
        (
            "local",
            {"enabled": True, "prometheusOperator": True, "grafana": True},
            "observability.grafana",
        ),
        ("prod", {"enabled": True, "prometheusOperator": True}, "observability.prometheusOperator"),
        ("prod", {"enabled": "yes"}, "observability.enabled"),
        ("prod", {"enable": True}, "observability.enable"),
    ],
)
def test_observability_settings_are_refused_where_they_cannot_work(
    tmp_path: Path, stack: str, keys: dict[str, Any], path: str
) -> None:
    assert_rejected(
        tmp_path, mutated(stack, lambda c: c.__setitem__(P + "observability", keys)), path
    )


def test_an_unknown_observability_key_suggests_the_known_one(tmp_path: Path) -> None:
    document = mutated("prod", lambda c: c.__setitem__(P + "observability", {"enable": True}))
    run = assert_rejected(tmp_path, document, "observability.enable")
    assert 'did you mean "enabled"?' in run.stderr


def test_operators_metrics_is_refused_with_where_metrics_went(tmp_path: Path) -> None:
    document = mutated("dev", lambda c: c.setdefault(P + "operators", {}).update(metrics=False))
    run = assert_rejected(tmp_path, document, "operators.metrics")
    assert "observability.enabled" in run.stderr


# --------------------------------------------------------------------------------------------
# Azure resources
# --------------------------------------------------------------------------------------------


def test_the_cluster_runs_the_metrics_add_on_only_when_observed() -> None:
    profile = _only(planned("prod"), CLUSTER).inputs["azureMonitorProfile"]
    assert profile["metrics"]["enabled"] is True
    # Node series keep their pool, as the flavors select nodes.
    assert profile["metrics"]["kubeStateMetrics"]["metricLabelsAllowlist"] == (
        "nodes=[kubernetes.azure.com/agentpool]"
    )
    assert "azureMonitorProfile" not in _only(planned("dev"), CLUSTER).inputs


def test_metrics_flow_cluster_to_rule_to_workspace() -> None:
    result = planned("prod")
    names = monitoring_names("prod")
    workspace, endpoint = _only(result, AMW), _only(result, DCE)
    rule, association = _only(result, DCR), _only(result, DCRA)
    assert workspace.inputs["azureMonitorWorkspaceName"] == names.workspace == "amw-prod"
    assert endpoint.inputs["kind"] == rule.inputs["kind"] == "Linux"
    assert rule.inputs["dataSources"]["prometheusForwarder"] == [
        {"name": "PrometheusDataSource", "streams": [PROMETHEUS_STREAM], "labelIncludeFilter": {}}
    ]
    (destination,) = rule.inputs["destinations"]["monitoringAccounts"]
    assert rule.inputs["dataFlows"] == [
        {"streams": [PROMETHEUS_STREAM], "destinations": [destination["name"]]}
    ]
    assert rule.property_dependencies["destinations"] == (workspace.urn,)
    assert rule.property_dependencies["dataCollectionEndpointId"] == (endpoint.urn,)
    cluster = _only(result, CLUSTER)
    assert association.property_dependencies["resourceUri"] == (cluster.urn,)
    assert association.property_dependencies["dataCollectionRuleId"] == (rule.urn,)


def test_grafana_is_standard_entra_only_and_linked_to_the_workspace() -> None:
    result = planned("prod")
    grafana = _only(result, GRAFANA)
    assert grafana.inputs["workspaceName"] == "amg-prod"
    assert grafana.inputs["sku"] == {"name": "Standard"}
    assert grafana.inputs["identity"] == {"type": "SystemAssigned"}
    properties = grafana.inputs["properties"]
    assert properties["apiKey"] == "Disabled"
    assert len(properties["grafanaIntegrations"]["azureMonitorWorkspaceIntegrations"]) == 1
    assert grafana.property_dependencies["properties"] == (_only(result, AMW).urn,)


@pytest.mark.parametrize(
    "stack", ["a", "prod", "x" * 19, "team-with-a-very-long-stack-name-40chars"]
)
def test_azure_names_fit_azure_limits(stack: str) -> None:
    names = monitoring_names(stack)
    assert len(names.grafana) <= MAX_GRAFANA_NAME and names.grafana[-1].isalnum()
    assert len(names.workspace) <= 44 and len(names.endpoint) <= 44 and len(names.rule) <= 64


def test_grafana_reads_the_workspace_and_the_deployer_edits_grafana_nothing_more() -> None:
    result = planned("prod")
    grafana, workspace = _only(result, GRAFANA), _only(result, AMW)
    observing = [r for r in result.by_type(ROLE) if r.parent and "AzureMonitoring" in r.parent]
    by_role = {_role(r): r for r in observing}
    assert set(by_role) == {MONITORING_DATA_READER_ROLE, GRAFANA_EDITOR_ROLE}
    reader, editor = by_role[MONITORING_DATA_READER_ROLE], by_role[GRAFANA_EDITOR_ROLE]
    assert reader.property_dependencies["scope"] == (workspace.urn,)
    assert reader.property_dependencies["principalId"] == (grafana.urn,)
    assert editor.property_dependencies["scope"] == (grafana.urn,)
    assert editor.inputs["principalType"] == "ServicePrincipal"  # prod's deployer


def test_a_stack_that_grants_the_deployer_nothing_grants_no_grafana_role(tmp_path: Path) -> None:
    document = mutated("prod", lambda c: c[P + "cluster"].update(deployerPrincipalType="None"))
    result = run_program(write_stack(tmp_path, document, "Pulumi.prod.yaml"))
    assert GRAFANA_EDITOR_ROLE not in {_role(r) for r in result.by_type(ROLE)}
    assert len(result.by_type(DASHBOARD)) == 4


def test_the_dashboards_are_provisioned_from_the_repository_files() -> None:
    result = planned("prod")
    boards = {r.name.rsplit("-dashboard-", 1)[-1]: r for r in result.by_type(DASHBOARD)}
    files = {path.stem: json.loads(path.read_text()) for path in DASHBOARDS_DIR.glob("*.json")}
    provisioned = {name: json.loads(r.inputs["configJson"]) for name, r in boards.items()}
    usage = provisioned.pop("usage")
    assert provisioned == {name: model for name, model in files.items() if name != "usage"}
    # The usage dashboard: the file with prod's pools' prices per GPU-hour filled in (a100:
    # Standard_NC96ads_A100_v4 $14.692 / 4, h100: Standard_ND96isr_H100_v5 $98.32 / 8,
    # a100spot: Standard_NC24ads_A100_v4 $3.673 / 1, catalog/prices.py).
    cost = next(p for p in usage["panels"] if p["title"].startswith("Cost per team"))
    expr = cost["targets"][0]["expr"]
    assert [term.rsplit(" * ", 1)[1].rstrip(")") for term in expr.split(" or ")] == [
        "3.673",
        "12.29",
        "3.673",
    ]
    assert 'flavor="a100"' in expr and 'flavor="h100"' in expr and 'flavor="a100spot"' in expr
    assert "a100 $3.673, h100 $12.29, a100spot $3.673" in cost["description"]
    assert [p["id"] for p in usage["panels"]] == [p["id"] for p in files["usage"]["panels"]]
    folder = _only(result, FOLDER)
    assert folder.inputs["title"] == DASHBOARD_FOLDER
    assert all(r.property_dependencies["folder"] == (folder.urn,) for r in boards.values())
    provider = _only(result, GRAFANA_PROVIDER)
    assert provider.inputs["auth"] == "[secret]"  # the deployer's token never in the state
    assert provider.property_dependencies["url"] == (_only(result, GRAFANA).urn,)
    assert {r.provider_urn for r in (*boards.values(), folder)} == {provider.urn}
    editor = next(r for r in result.by_type(ROLE) if _role(r) == GRAFANA_EDITOR_ROLE)
    assert editor.urn in provider.depends_on  # the role first, then Grafana's API


def test_without_grafana_the_metrics_stay_and_grafana_goes(tmp_path: Path) -> None:
    result = _observed(tmp_path, "prod", enabled=True, grafana=False)
    assert [len(result.by_type(t)) for t in (AMW, DCR, DCRA, GRAFANA, DASHBOARD)] == [1, 1, 1, 0, 0]
    assert GRAFANA_OUTPUT not in result.outputs


def test_dev_can_turn_it_on(tmp_path: Path) -> None:
    result = _observed(tmp_path, "dev", enabled=True)
    assert [len(result.by_type(t)) for t in (AMW, GRAFANA, DASHBOARD)] == [1, 1, 4]
    assert result.settings.observability.grafana is True


# --------------------------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------------------------


def test_the_summary_says_where_to_look() -> None:
    result = planned("prod")
    data = summary(plan(result), _path(result))["monitoring"]
    assert data["grafanaOutput"] in result.outputs
    assert (
        data["dashboards"]
        == [d.title for d in dashboards()]
        == ["GPU fleet", "Queues", "Endpoint", "GPU usage and cost"]
    )
    assert result.outputs["grafanaDashboards"] == data["dashboards"]
    lines = monitoring_lines(data)
    assert lines[0] == "Monitoring (Azure Monitor managed Prometheus, workspace amw-prod):"
    assert "stack output grafanaEndpoint" in lines[1]
    off = summary(plan(planned("dev")), _path(planned("dev")))["monitoring"]
    assert monitoring_lines(off) == [
        "Monitoring: off (observability.enabled: false; docs/monitoring.md)"
    ]


def _path(result: RunResult) -> Any:
    from aksray.plan.model.graph import critical_path

    return critical_path(result)


def test_scrape_objects_without_the_add_on_fail_the_plan() -> None:
    result = planned("prod")
    stripped = [
        dataclasses.replace(
            r, inputs={k: v for k, v in r.inputs.items() if k != "azureMonitorProfile"}
        )
        if r.type == CLUSTER
        else r
        for r in result.resources
    ]
    findings = Findings()
    check_objects_have_crds(plan(dataclasses.replace(result, resources=stripped)), findings)
    assert [p.path for p in findings.errors] == ["observability.enabled"]
    assert "azmonitoring.coreos.com" in findings.errors[0].message
    clean = Findings()
    check_objects_have_crds(plan(result), clean)
    assert clean.errors == []


def test_prometheus_operator_objects_need_the_declaration(tmp_path: Path) -> None:
    result = _observed(tmp_path, "local", enabled=True, prometheusOperator=True)
    findings = Findings()
    check_objects_have_crds(plan(result), findings)
    assert findings.errors == []
    observed = dataclasses.replace(result.settings.observability, prometheus_operator=False)
    undeclared = dataclasses.replace(
        result, settings=dataclasses.replace(result.settings, observability=observed)
    )
    check_objects_have_crds(plan(undeclared), findings)
    assert [p.path for p in findings.errors] == ["observability.prometheusOperator"]


# --------------------------------------------------------------------------------------------
# Cost of the code path: a stack without observability never loads its SDK modules
# --------------------------------------------------------------------------------------------

# A module of each: pulumi-azure-native registers its packages lazily in sys.modules, so the
# package itself is there either way; its resource modules load only when it is really used.
HEAVY = (
    "pulumi_azure_native.monitor.azure_monitor_workspace",
    "pulumi_azure_native.dashboard.grafana",
    "pulumiverse_grafana.oss.dashboard",
)
_LOADED = (
    "import sys\n"
    "from aksray.offline.runner import run_program, stack_file\n"
    "for stack in ('dev', 'prod'):\n"
    "    assert run_program(stack_file(stack), stack=stack).ok\n"
    "    print(stack + ':' + ','.join(m for m in {heavy!r} if m in sys.modules))\n"
)


def test_only_an_observed_stack_loads_the_monitoring_sdks() -> None:
    """dev first, in one process: nothing of them loaded; then prod loads each."""
    out = subprocess.run(
        [sys.executable, "-c", _LOADED.format(heavy=HEAVY)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.strip()
    assert out.splitlines()[-2:] == ["dev:", f"prod:{','.join(HEAVY)}"]


@pytest.mark.parametrize("role", [MONITORING_DATA_READER_ROLE, GRAFANA_EDITOR_ROLE])
def test_the_policy_pack_keeps_the_monitoring_roles_on_their_own_resource(role: str) -> None:
    from tests.support.policy_harness import evaluate

    result = planned("prod")
    assert evaluate(result.resources) == []
    wider = [
        dataclasses.replace(
            r,
            inputs={**r.inputs, "scope": "/subscriptions/s/resourceGroups/rg-aksray-prod"},
            property_dependencies={**r.property_dependencies, "scope": ()},
        )
        if r.type == ROLE and _role(r) == role
        else r
        for r in result.resources
    ]
    assert [v.policy for v in evaluate(wider)] == ["role-assignments-scoped-to-storage"]

"""The scrape objects: the flavour each cluster's Prometheus reads, and targets (namespaces,
label selectors, ports, paths, authentication) that match what the pinned charts and the
stack's own Ray pods really create (the chart templates in the reference)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT, RunResult, run_program
from catalog.azure import SCRAPE_LABEL_LIMITS
from catalog.versions import GPU_OPERATOR, KUBERAY_OPERATOR, KUEUE
from manifests.ray_pods import METRICS_PORT, METRICS_PORT_NAME, TEAM_LABEL, WORKLOAD_LABEL
from manifests.scrape import (
    AGENT_NAMESPACE,
    AGENT_SERVICE_ACCOUNT,
    KUEUE_METRICS_READER,
    SERVICE_ACCOUNT_TOKEN,
    scrape_targets,
)
from tests.support.chart_values import chart_defaults
from tests.support.harness import P, mutated, planned, write_stack
from tests.support.reference import chart as reference_chart

KINDS = ("PodMonitor", "ServiceMonitor")


def scrape_objects(result: RunResult) -> dict[str, dict[str, Any]]:
    """By name (without the `aksray-` prefix), for a stack where each name is one object."""
    found = [r.inputs for r in result.resources if r.inputs.get("kind") in KINDS]
    return {o["metadata"]["name"].removeprefix("aksray-"): o for o in found}


def endpoint(scrape: dict[str, Any]) -> dict[str, Any]:
    key = "podMetricsEndpoints" if scrape["kind"] == "PodMonitor" else "endpoints"
    (only,) = scrape["spec"][key]
    return dict(only)


def local_observed(tmp_path: Path) -> RunResult:
    document = mutated(
        "local",
        lambda c: c.__setitem__(P + "observability", {"enabled": True, "prometheusOperator": True}),
    )
    result = run_program(write_stack(tmp_path, document, "Pulumi.local.yaml"))
    assert result.ok, result.problems
    return result


def template(chart: str, path: str) -> str:
    return (reference_chart(chart) / path).read_text()


def helper(chart: str, name: str) -> str:
    helpers = template(chart, "templates/_helpers.tpl")
    found = re.search(rf'define "{re.escape(name)}" -\}}\}}(.*?)\{{\{{-? end', helpers, re.S)
    assert found is not None, name
    return found.group(1)


# --------------------------------------------------------------------------------------------
# Flavours
# --------------------------------------------------------------------------------------------


def test_aks_gets_every_target_in_the_agents_flavour_and_namespace() -> None:
    objects = scrape_objects(planned("prod"))
    assert sorted(objects) == sorted(t.name for t in scrape_targets(["x"]))
    assert {o["apiVersion"] for o in objects.values()} == {"azmonitoring.coreos.com/v1"}
    assert {o["metadata"]["namespace"] for o in objects.values()} == {AGENT_NAMESPACE}


def test_an_existing_cluster_gets_the_prometheus_operator_flavour_in_each_target_namespace(
    tmp_path: Path,
) -> None:
    result = local_observed(tmp_path)
    found = [r.inputs for r in result.resources if r.inputs.get("kind") in KINDS]
    assert {o["apiVersion"] for o in found} == {"monitoring.coreos.com/v1"}
    for scrape in found:
        assert scrape["spec"]["namespaceSelector"] == {
            "matchNames": [scrape["metadata"]["namespace"]]
        }
    teams = {team.namespace for team in result.settings.scheduling.teams}
    ray = {o["metadata"]["namespace"] for o in found if o["metadata"]["name"] == "aksray-ray"}
    assert ray == teams
    assert not [r for r in result.resources if r.type.startswith("azure-native:")]


def test_every_object_the_agent_reads_carries_azures_label_limits(tmp_path: Path) -> None:
    """Azure's templates for azmonitoring.coreos.com PodMonitors and ServiceMonitors
    (Azure/prometheus-collector otelcollector/customresources) set these three limits so that
    no series is dropped in its processing pipeline; a cluster's own Prometheus Operator gets
    no limits of ours."""
    objects = scrape_objects(planned("prod"))
    assert len(objects) == 7
    for scrape in objects.values():
        spec = scrape["spec"]
        assert (
            spec["labelLimit"],
            spec["labelNameLengthLimit"],
            spec["labelValueLengthLimit"],
        ) == (63, 511, 1023), scrape["metadata"]["name"]
    for scrape in (r.inputs for r in local_observed(tmp_path).resources):
        if scrape.get("kind") in KINDS:
            assert not {"labelLimit", "labelNameLengthLimit"} & set(scrape["spec"])


def test_no_stack_without_observability_creates_scrape_objects() -> None:
    for stack in ("dev", "local"):
        assert scrape_objects(planned(stack)) == {}


# --------------------------------------------------------------------------------------------
# Targets against the charts
# --------------------------------------------------------------------------------------------


@pytest.mark.reference
def test_kueue_target_is_the_charts_authenticated_metrics_service() -> None:
    scrape = scrape_objects(planned("prod"))["kueue"]
    assert scrape["spec"]["namespaceSelector"] == {"matchNames": [KUEUE.namespace]}
    # The metrics Service carries kueue.metricsService.labels: the chart's labels (its name,
    # `kueue` with no nameOverride) plus component metrics-service; its one port is `https`.
    service = template("kueue", "templates/manager/auth_proxy_service.yaml")
    assert 'include "kueue.metricsService.labels"' in service
    assert "app.kubernetes.io/component: metrics-service" in helper(
        "kueue", "kueue.metricsService.labels"
    )
    assert 'app.kubernetes.io/name: {{ include "kueue.name" . }}' in helper(
        "kueue", "kueue.selectorLabels"
    )
    assert chart_defaults("kueue")["nameOverride"] == ""
    assert scrape["spec"]["selector"] == {
        "matchLabels": {
            "app.kubernetes.io/name": KUEUE.chart,
            "app.kubernetes.io/component": "metrics-service",
        }
    }
    (port,) = chart_defaults("kueue")["metricsService"]["ports"]
    served = endpoint(scrape)
    assert (served["port"], port["port"]) == (port["name"], 8443)
    assert served["scheme"] == "https"
    assert served["bearerTokenFile"] == SERVICE_ACCOUNT_TOKEN
    assert served["path"] == "/metrics"


@pytest.mark.reference
def test_the_agent_may_read_kueues_metrics_and_nothing_else() -> None:
    role = template("kueue", "templates/rbac/metrics_reader_role.yaml")
    assert "name: '{{ include \"kueue.fullname\" . }}-metrics-reader'" in role
    assert re.search(r'nonResourceURLs:\s*- "/metrics"\s*verbs:\s*- get', role)
    # fullname = the release name when it contains the chart name (release `kueue`).
    assert KUEUE.release == KUEUE.chart and KUEUE_METRICS_READER == "kueue-metrics-reader"
    bindings = [
        r.inputs for r in planned("prod").resources if r.inputs.get("kind") == "ClusterRoleBinding"
    ]
    mine = [b for b in bindings if b["roleRef"]["name"] == KUEUE_METRICS_READER]
    assert [b["subjects"] for b in mine] == [
        [{"kind": "ServiceAccount", "name": AGENT_SERVICE_ACCOUNT, "namespace": AGENT_NAMESPACE}]
    ]


@pytest.mark.reference
def test_kuberay_target_is_the_charts_operator_service() -> None:
    scrape = scrape_objects(planned("prod"))["kuberay-operator"]
    service = template("kuberay-operator", "templates/service.yaml")
    assert "name: http" in service and "targetPort: http" in service
    assert 'include "kuberay-operator.labels"' in service
    labels = helper("kuberay-operator", "kuberay-operator.labels")
    assert 'app.kubernetes.io/name: {{ include "kuberay-operator.name" . }}' in labels
    assert chart_defaults("kuberay-operator")["nameOverride"] == KUBERAY_OPERATOR.chart
    # The chart's own (unused) ServiceMonitor names the same label, port and path.
    own = template("kuberay-operator", "templates/servicemonitor.yaml")
    assert "path: /metrics" in own and "targetPort: http" in own
    assert scrape["spec"]["selector"] == {
        "matchLabels": {"app.kubernetes.io/name": KUBERAY_OPERATOR.chart}
    }
    assert scrape["spec"]["namespaceSelector"] == {"matchNames": [KUBERAY_OPERATOR.namespace]}
    assert (endpoint(scrape)["port"], endpoint(scrape)["path"]) == ("http", "/metrics")


@pytest.mark.reference
def test_dcgm_target_is_the_gpu_operators_exporter_and_keeps_each_gpus_pod() -> None:
    scrape = scrape_objects(planned("prod"))["dcgm-exporter"]
    # The chart deploys the exporter (its operator renders the DaemonSet: pods
    # `app: nvidia-dcgm-exporter`, port `metrics` 9400, in the operator's namespace).
    assert chart_defaults("gpu-operator")["dcgmExporter"]["enabled"] is True
    assert scrape["spec"]["namespaceSelector"] == {"matchNames": [GPU_OPERATOR.namespace]}
    assert scrape["spec"]["selector"] == {"matchLabels": {"app": "nvidia-dcgm-exporter"}}
    served = endpoint(scrape)
    assert served["port"] == "metrics" and served["honorLabels"] is True
    assert {"action": "labeldrop", "regex": "namespace|pod|container"} in served["relabelings"]
    assert any(r.get("targetLabel") == "node" for r in served["relabelings"])


def test_kai_targets_are_its_three_services() -> None:
    objects = scrape_objects(planned("prod"))
    kai = {
        name: o["spec"]["selector"]["matchLabels"]["app"]
        for name, o in objects.items()
        if name.startswith("kai-")
    }
    assert kai == {
        "kai-scheduler": "kai-scheduler-default",
        "kai-binder": "binder",
        "kai-queue-controller": "queue-controller",
    }


def test_ray_target_selects_every_ray_pod_of_the_stack_on_its_metrics_port() -> None:
    """prod with its jobs started: every RayJob and the RayService."""
    result = planned("prod+run")
    scrape = scrape_objects(result)["ray"]
    namespaces = sorted(scrape["spec"]["namespaceSelector"]["matchNames"])
    assert namespaces == sorted(t.namespace for t in result.settings.scheduling.teams)
    assert scrape["spec"]["selector"] == {
        "matchExpressions": [{"key": WORKLOAD_LABEL, "operator": "Exists"}]
    }
    assert scrape["spec"]["podTargetLabels"] == [WORKLOAD_LABEL, TEAM_LABEL]
    assert endpoint(scrape)["port"] == METRICS_PORT_NAME
    pods = list(_ray_pod_templates(result))
    # a head and a worker group for each of the four workloads, and model-stage's head alone
    assert len(pods) == 9
    for start_params, pod in pods:
        assert WORKLOAD_LABEL in pod["metadata"]["labels"]
        (container,) = pod["spec"]["containers"]
        assert {"name": METRICS_PORT_NAME, "containerPort": METRICS_PORT} in container["ports"]
        assert start_params["metrics-export-port"] == str(METRICS_PORT)


def _ray_pod_templates(result: RunResult) -> Any:
    for resource in result.resources:
        kind = resource.inputs.get("kind")
        if kind not in ("RayJob", "RayService"):
            continue
        spec = resource.inputs["spec"]
        cluster = spec["rayClusterSpec"] if kind == "RayJob" else spec["rayClusterConfig"]
        if isinstance(cluster, str):
            cluster = yaml.safe_load(cluster)
        head = cluster["headGroupSpec"]
        yield head["rayStartParams"], head["template"]
        for group in cluster.get("workerGroupSpecs", []):
            yield group["rayStartParams"], group["template"]


def test_the_endpoint_exports_vllm_metrics_through_ray() -> None:
    service = next(
        r.inputs for r in planned("prod").resources if r.inputs.get("kind") == "RayService"
    )
    config = yaml.safe_load(service["spec"]["serveConfigV2"])
    (application,) = config["applications"]
    (llm,) = application["args"]["llm_configs"]
    assert llm["log_engine_metrics"] is True


def test_the_monitoring_guide_states_the_label_limits_and_how_to_check_kueues_target() -> None:
    guide = (PROJECT_ROOT / "docs" / "monitoring.md").read_text()
    flat = " ".join(guide.split())
    for key, value in SCRAPE_LABEL_LIMITS.items():
        assert f"`{key}: {value}`" in flat, key
    assert "127.0.0.1:9090/targets" in flat
    assert "serviceMonitor/kube-system/aksray-kueue/0" in flat

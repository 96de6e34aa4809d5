"""No release may make its chart (or its operator) create an object whose CRD nothing installs.

The charts render custom resources of other projects behind value switches (a Prometheus
Operator ServiceMonitor, cert-manager Certificates, OpenShift SecurityContextConstraints). On a
cluster the same `pulumi up` creates, no such CRD exists: Helm's install fails ("no matches for
kind"), or the operator stops reconciling. The table of those switches (catalog/chart_objects.py)
is checked here against the pinned chart templates, and `aksray plan` refuses a stack whose
release values turn one on, naming the config key that did.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import RunResult
from aksray.plan.checks.crds import check_chart_objects_have_crds
from aksray.plan.checks.findings import Findings
from aksray.plan.checks.run import run_checks
from aksray.plan.model.plan import HELM_RELEASE, plan
from catalog.chart_objects import SWITCHED_OBJECTS, chart_groups, is_built_in_group, value_at
from catalog.versions import CHARTS, CRD_GROUP_RELEASES
from tests.support.chart_values import chart_defaults
from tests.support.harness import STACKS, P, cli, planned, stack_document, write_stack
from tests.support.reference import chart as reference_chart

# The reference holds a subchart's files under charts/<name>/; its values sit under its name.
SUBCHART = "node-feature-discovery"


def _templates(chart: str) -> list[Path]:
    root = reference_chart(chart)
    return sorted(
        p
        for p in root.rglob("*")
        if "templates" in p.relative_to(root).parts and p.suffix in (".yaml", ".tpl")
    )


def _defaults(entry: Any) -> Any:
    """The chart's default values, or its subchart's for a value under the subchart's name."""
    if entry.value.startswith(f"{SUBCHART}."):
        path = reference_chart(entry.release) / "charts" / SUBCHART / "values.yaml"
        return {SUBCHART: yaml.safe_load(path.read_text())}
    return chart_defaults(entry.release)


def _guard(chart_dir: Path, text: str) -> str:
    """The condition of a template's outer `if`, with a named helper it includes spelled out."""
    guard = re.search(r"\{\{-? if (.+?) -?\}\}", text)
    assert guard is not None
    helper = re.search(r'include "([^"]+)"', guard.group(1))
    if helper is None:
        return guard.group(1)
    helpers = (chart_dir / "templates" / "_helpers.tpl").read_text()
    name = re.escape(helper.group(1))
    body = re.search(rf'define "{name}".*?\{{\{{-? end', helpers, re.S)
    assert body is not None
    return body.group(0)


def _foreign_objects(chart: str) -> set[tuple[str, str, str]]:
    """(template path in the chart, apiVersion, kind) of every object a template renders whose
    API group is neither Kubernetes' own nor one the chart installs CRDs for."""
    found = set()
    own = chart_groups(chart)
    for template in _templates(chart):
        text = template.read_text()
        for match in re.finditer(r"(?m)^apiVersion:\s*(\S+)\s*\nkind:\s*(\S+)", text):
            api_version, kind = match.groups()
            found |= {(template.relative_to(reference_chart(chart)).as_posix(), api_version, kind)}
        for match in re.finditer(r"(?m)^kind:\s*(\S+)\s*\napiVersion:\s*(\S+)", text):
            kind, api_version = match.groups()
            found |= {(template.relative_to(reference_chart(chart)).as_posix(), api_version, kind)}
    return {
        entry
        for entry in found
        if not is_built_in_group(entry[1].rpartition("/")[0])
        and entry[1].rpartition("/")[0] not in own
    }


@pytest.mark.parametrize("chart", [c.release for c in CHARTS])
@pytest.mark.reference
def test_every_foreign_object_a_chart_template_renders_is_in_the_table(chart: str) -> None:
    listed = {(o.template, o.api_version, o.kind) for o in SWITCHED_OBJECTS if o.release == chart}
    templated = _foreign_objects(chart)
    assert templated <= listed
    assert templated  # every pinned chart has at least one (a ServiceMonitor, an SCC)


@pytest.mark.parametrize("entry", SWITCHED_OBJECTS, ids=lambda o: f"{o.release}:{o.value}")
@pytest.mark.reference
def test_each_switch_guards_its_template_and_has_the_charts_default(entry: Any) -> None:
    chart_dir = reference_chart(entry.release)
    # The value as the chart's template reads it: the subchart's own name drops its prefix.
    local = entry.value.removeprefix(f"{SUBCHART}.")
    text = (chart_dir / entry.template).read_text()
    if entry.by_operator:  # the template hands the whole block to the operator
        assert f"toYaml .Values.{local.rpartition('.')[0]} " in text
    else:
        assert f"apiVersion: {entry.api_version}" in text
        assert f"kind: {entry.kind}" in text
        assert f".Values.{local}" in _guard(chart_dir, text), entry.template
    assert value_at(_defaults(entry), entry.value) is entry.default


@pytest.mark.reference
def test_the_charts_own_crd_groups_are_the_ones_they_ship() -> None:
    shipped: dict[str, set[str]] = {}
    for chart in CHARTS:
        groups = shipped.setdefault(chart.release, set())
        for crd_file in reference_chart(chart.release).rglob("*.yaml"):
            if "crds" not in crd_file.parts and "crd" not in crd_file.parts:
                continue
            groups |= set(re.findall(r"(?m)^\s{2}group:\s*(\S+)", crd_file.read_text()))
    assert {chart.release: set(chart_groups(chart.release)) for chart in CHARTS} == shipped
    assert dict(CRD_GROUP_RELEASES) == {
        g: chart for chart, groups in shipped.items() for g in groups
    }


@pytest.mark.parametrize("stack", STACKS)
def test_no_project_stack_renders_an_object_without_its_crd(stack: str) -> None:
    findings = Findings()
    check_chart_objects_have_crds(plan(planned(stack)), findings)
    assert (findings.errors, findings.warnings) == ([], [])


def _prod_with_chart_metrics(tmp_path: Path) -> Path:
    document = stack_document("prod")
    document["config"].setdefault(P + "operators", {})["metrics"] = True
    return write_stack(tmp_path, document, "Pulumi.prod.yaml")


def test_prod_with_the_charts_service_monitors_fails_the_plan_naming_the_key(
    tmp_path: Path,
) -> None:
    """prod's first `pulumi up` would fail: the kueue and kuberay releases would render
    monitoring.coreos.com/v1 ServiceMonitors on a cluster that has no such CRD."""
    run = cli("plan", "--config", _prod_with_chart_metrics(tmp_path))
    assert run.code == 1, run.output
    assert "Traceback" not in run.output
    lines = [line for line in run.error_lines if line.startswith("error: operators.metrics: ")]
    assert lines, run.output
    assert any("monitoring.coreos.com" in line and "ServiceMonitor" in line for line in lines)


def _with_release_values(result: RunResult, release: str, values: dict[str, Any]) -> RunResult:
    """The run with one release's values replaced (the recorded inputs are plain data)."""
    for resource in result.by_type(HELM_RELEASE):
        if resource.inputs.get("name") == release:
            resource.inputs["values"] = values
    return result


@pytest.mark.parametrize(
    ("release", "value", "group"),
    sorted({(o.release, o.value, o.group) for o in SWITCHED_OBJECTS}),
)
def test_the_check_fires_for_every_switch_turned_on(
    tmp_path: Path, release: str, value: str, group: str
) -> None:
    result = _fresh_dev(tmp_path)
    values = _recorded_values(result, release)
    _set(values, value, True)
    findings = Findings()
    check_chart_objects_have_crds(plan(_with_release_values(result, release, values)), findings)
    own = group in chart_groups(release)
    assert [p.message.split(":")[0] for p in findings.errors] == (
        [] if own else [f"the {release} release's {value}"]
    )


def test_a_chart_default_that_renders_one_counts_until_the_values_turn_it_off(
    tmp_path: Path,
) -> None:
    """The GPU Operator's DCGM exporter ServiceMonitor is on by default: leaving the value out
    is not enough."""
    result = _fresh_dev(tmp_path)
    values = _recorded_values(result, "gpu-operator")
    values["dcgmExporter"].pop("serviceMonitor", None)
    findings = run_checks(plan(_with_release_values(result, "gpu-operator", values)))
    assert [p.message.split(":")[0] for p in findings.errors] == [
        "the gpu-operator release's dcgmExporter.serviceMonitor.enabled"
    ]


def _fresh_dev(tmp_path: Path) -> RunResult:
    from aksray.offline.runner import run_program

    return run_program(write_stack(tmp_path, stack_document("dev"), "Pulumi.dev.yaml"))


def _recorded_values(result: RunResult, release: str) -> dict[str, Any]:
    resource = next(r for r in result.by_type(HELM_RELEASE) if r.inputs.get("name") == release)
    values: dict[str, Any] = yaml.safe_load(yaml.safe_dump(resource.inputs["values"]))
    return values


def _set(values: dict[str, Any], dotted: str, value: object) -> None:
    *parents, last = dotted.split(".")
    node = values
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value

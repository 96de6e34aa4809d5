"""The offline runner: what it records, how it masks secrets, and that each run is fresh."""

from __future__ import annotations

import asyncio
import gc
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as pulumi_resource

from aksray.offline.mocks import is_placeholder
from aksray.offline.runner import (
    PROJECT_ROOT,
    RecordingMonitor,
    _report_unless_out_of_memory,
    run_program,
    stack_file,
)
from aksray.stackfile.reader import StackFileError, load_stack_config
from tests.support.harness import RUNNING, STACKS, one, planned, stack_document, write_stack


def test_records_type_name_parent_inputs_and_provider() -> None:
    result = planned("dev")
    namespace = one(result, "kubernetes:core/v1:Namespace", "aksray-teams-team-a")
    assert namespace.inputs["metadata"]["name"] == "team-a"
    assert namespace.parent is not None and namespace.parent.endswith("::aksray-teams")
    provider = one(result, "pulumi:providers:kubernetes", "aksray-cluster-k8s")
    assert namespace.provider_urn == provider.urn


def test_dependencies_include_implicit_edges_through_outputs() -> None:
    result = planned("dev")
    cluster = one(result, "azure-native:containerservice:ManagedCluster", "aksray-cluster-aks")
    group = one(result, "azure-native:resources:ResourceGroup", "aksray-cluster-rg")
    assert group.urn in cluster.depends_on  # only through resource_group_name=group.name


def test_unknown_at_deploy_values_are_visible_placeholders() -> None:
    outputs = planned("dev").outputs
    assert is_placeholder(outputs["oidcIssuerUrl"])
    assert outputs["kubeconfig"] == "[secret]"


def test_each_run_is_fresh_and_deterministic() -> None:
    first = run_program(stack_file("local"), stack="local")
    second = run_program(stack_file("local"), stack="local")
    assert [r.to_json() for r in first.resources] == [r.to_json() for r in second.resources]
    assert all(":local::" in r.urn for r in first.resources)


def test_structured_values_reach_the_program_as_pulumi_passes_them(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(
        yaml.safe_dump(
            {
                "config": {
                    "aks-ray-platform:cluster": {"mode": "existing", "renderYamlTo": "out/x"},
                    "aks-ray-platform:huggingfaceToken": {"secure": "v1:QUJDREVGR0g=:c2VjcmV0"},
                    "location": "westeurope",
                }
            }
        )
    )
    config = load_stack_config(stack, project_file=PROJECT_ROOT / "Pulumi.yaml")
    # Compact, keys sorted: Go's JSON, as the CLI passes a map.
    assert config.values["aks-ray-platform:cluster"] == '{"mode":"existing","renderYamlTo":"out/x"}'
    assert config.values["aks-ray-platform:location"] == "westeurope"
    assert config.values["aks-ray-platform:huggingfaceToken"] == "[secret]"
    assert config.secret_keys == {"aks-ray-platform:huggingfaceToken"}


def test_project_defaults_apply(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text("config:\n  aks-ray-platform:storage: {enabled: false}\n")
    config = load_stack_config(stack, project_file=PROJECT_ROOT / "Pulumi.yaml")
    assert config.values["aks-ray-platform:location"] == "eastus2"


def test_invalid_config_registers_nothing(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text("config:\n  aks-ray-platform:cluster: {mode: existing}\n")
    result = run_program(stack)
    assert str(result.problems[0]).startswith("cluster.kubeconfigContext: ")
    assert result.resources == []


def test_registration_answers_exactly_what_the_sdk_mock_monitor_answers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """RecordingMonitor skips the SDK monitor's serialization round trip: same response."""
    compared: list[str] = []
    fast = RecordingMonitor.register

    def both(self: RecordingMonitor, request: Any) -> Any:
        response = fast(self, request)
        reference = pulumi_mocks.MockMonitor.RegisterResource(self, request)  # type: ignore[no-untyped-call]
        assert response == reference, request.name
        compared.append(request.name)
        return response

    monkeypatch.setattr(RecordingMonitor, "register", both)
    token = stack_document("dev")
    token["config"]["aks-ray-platform:huggingfaceToken"] = {"secure": "v1:QUJDREVGR0g=:c2VjcmV0"}
    files = [stack_file(s) for s in STACKS] + [write_stack(tmp_path, token)]
    total = 0
    for path in files:
        result = run_program(path, secret_values={"huggingfaceToken": "hf_plain"})
        assert result.ok
        total += len(result.resources)
    assert len(compared) == total


def test_a_run_leaves_the_garbage_collector_and_the_sdk_as_it_found_them() -> None:
    stack_trace = pulumi_resource._get_stack_trace
    assert gc.isenabled()
    run_program(stack_file("local"), stack="local")
    assert gc.isenabled()
    assert pulumi_resource._get_stack_trace is stack_trace
    gc.disable()
    try:
        run_program(stack_file("local"), stack="local")
        assert not gc.isenabled()
    finally:
        gc.enable()


def _read(tmp_path: Path, text: str) -> dict[str, str]:
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(text)
    return load_stack_config(stack).values


def test_stack_files_are_read_as_the_pulumi_cli_reads_them(tmp_path: Path) -> None:
    """As the Pulumi CLI reads them (Go's YAML, mostly YAML 1.2's core schema): PyYAML's 1.1
    defaults would plan a file that `pulumi up` reads differently."""
    values = _read(
        tmp_path,
        "config:\n  p:a: yes\n  p:b: 22:30\n  p:c: +10:00\n  p:d: 2026-12-01\n  p:e: 010\n"
        "  p:f: true\n  p:g: 1.5\n",
    )
    assert values == {
        "p:a": "yes",  # only true/false are booleans
        "p:b": "22:30",  # no base-60 numbers
        "p:c": "+10:00",
        "p:d": "2026-12-01 00:00:00 +0000 UTC",  # a date, as Go prints it
        "p:e": "8",  # a leading zero is octal to Go's YAML (tests/stackfile/test_cli_reading.py)
        "p:f": "true",
        "p:g": "1.5",
    }


def test_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StackFileError) as raised:
        _read(tmp_path, "config:\n  p:protect: false\n  p:protect: true\n")
    assert raised.value.message == (
        "at line 3, column 3: the key 'p:protect' is given twice (first at line 2); keep one"
    )


def test_out_of_memory_the_pending_tasks_are_not_each_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            for _ in range(1000):
                _report_unless_out_of_memory(loop, {"message": "m", "exception": MemoryError()})
            assert caplog.records == []
            _report_unless_out_of_memory(loop, {"message": "other", "exception": ValueError()})
            assert [record.getMessage() for record in caplog.records] == ["other"]
    finally:
        loop.close()


def test_records_the_options_the_change_model_reads() -> None:
    result = planned("dev" + RUNNING)
    job = one(result, "kubernetes:ray.io/v1:RayJob", "aksray-workloads-model-stage")
    assert (job.delete_before_replace, job.delete_before_replace_defined) == (True, True)
    assert job.replace_on_changes == ("spec",)
    namespace = one(result, "kubernetes:core/v1:Namespace", "aksray-teams-team-a")
    assert not namespace.delete_before_replace_defined  # the provider decides
    pool = one(result, "azure-native:containerservice:AgentPool", "aksray-cluster-pool-a100")
    # azure-native's classes alias every earlier API version's type token.
    assert "azure-native:containerservice/v20230101:AgentPool" in {a.type for a in pool.aliases}
    assert all(a.name is None and a.parent is None for a in pool.aliases)

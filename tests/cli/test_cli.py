"""The CLI contract: plan and render per stack, exit codes, one-line errors, no tracebacks;
`aksray plan` prints the summary and the checks, and `--json` carries both."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import yaml

import aksray.offline.runner
from aksray.cli.usage import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, exit_codes
from aksray.offline.runner import PROJECT_ROOT
from aksray.plan.model.graph import critical_path
from aksray.plan.model.plan import plan
from aksray.plan.report.summary import summary
from catalog.versions import CHART_SETS, RAY_IMAGE
from tests.support.harness import STACKS, P, assert_rejected, cli, planned, write_stack
from tests.support.minimal_stack import config, minimal, teams


@pytest.mark.parametrize("stack", STACKS)
def test_plan_exits_zero_for_every_project_stack(stack: str) -> None:
    run = cli("plan", "--stack", stack)
    assert run.code == 0, run.output
    assert f"stack {stack}" in run.stdout
    assert run.stderr == ""


def test_plan_json_is_one_document_with_every_resource() -> None:
    run = cli("plan", "--stack", "dev", "--json")
    assert run.code == 0, run.output
    document = json.loads(run.stdout)
    assert document["stack"] == "dev"
    assert len(document["resources"]) == len(planned("dev").resources)


def test_render_writes_kubernetes_files_and_resources_json(tmp_path: Path) -> None:
    run = cli("render", "--stack", "dev", "--out", tmp_path)
    assert run.code == 0, run.output
    files = {p.name for p in (tmp_path / "kubernetes").glob("*.yaml")}
    assert "namespace-team-a.yaml" in files  # cluster-scoped: no namespace part
    assert "serviceaccount-team-a-ray-workload.yaml" in files
    namespace = yaml.safe_load((tmp_path / "kubernetes" / "namespace-team-a.yaml").read_text())
    assert namespace["kind"] == "Namespace" and namespace["metadata"]["name"] == "team-a"
    resources = json.loads((tmp_path / "resources.json").read_text())["resources"]
    assert {"type", "name", "parent", "inputs", "dependsOn"} <= set(resources[0])
    assert len(resources) == len(planned("dev").resources)


def test_render_replaces_stale_files(tmp_path: Path) -> None:
    (tmp_path / "kubernetes").mkdir()
    (tmp_path / "kubernetes" / "configmap-old-leftover.yaml").write_text("{}")
    assert cli("render", "--stack", "local", "--out", tmp_path).code == 0
    assert not (tmp_path / "kubernetes" / "configmap-old-leftover.yaml").exists()


def test_config_file_from_any_path(tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere.yaml"
    copy.write_text((PROJECT_ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    run = cli("plan", "--config", copy)
    assert run.code == 0, run.output
    assert "stack elsewhere" in run.stdout


def test_unknown_stack_names_the_known_ones() -> None:
    run = cli("plan", "--stack", "staging")
    assert run.code == 1
    assert run.error_lines == [
        "error: --stack staging: no stack file Pulumi.staging.yaml in stacks/; stacks are dev, "
        "local, multiregion, prod (or pass --config FILE)"
    ]


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("", "Pulumi.test.yaml"),
        ("config: [1, 2\n", "Pulumi.test.yaml"),
        ("- just\n- a list\n", "Pulumi.test.yaml"),
        ("config: 7\n", "config"),
        ("confg:\n  aks-ray-platform:location: eastus2\n", "confg"),
    ],
    ids=["empty", "unparseable", "not-a-map", "config-not-a-map", "misspelt-config"],
)
def test_files_that_are_not_stack_files(tmp_path: Path, text: str, path: str) -> None:
    stack = tmp_path / "Pulumi.test.yaml"
    stack.write_text(text)
    result = cli("plan", "--config", stack)
    assert result.code == 1
    assert "Traceback" not in result.output
    assert len(result.error_lines) == 1 and path in result.error_lines[0]


def test_missing_file(tmp_path: Path) -> None:
    run = cli("plan", "--config", tmp_path / "nope.yaml")
    assert run.code == 1 and "cannot read the stack file" in run.stderr


def test_help_lists_both_commands() -> None:
    run = cli("--help")
    assert run.code == 0
    assert "plan" in run.stdout and "render" in run.stdout


def test_console_script_runs_as_a_process_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text(
        "config:\n  aks-ray-platform:cluster: {gpuPools: [{name: a100, "
        "vmSize: Standard_Nope, maxCount: 1}]}\n"
    )
    process = subprocess.run(
        [sys.executable, "-m", "aksray.cli.main", "plan", "--config", str(bad)],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        check=False,
        timeout=120,
    )
    assert process.returncode == 1
    assert "Traceback" not in process.stderr + process.stdout
    assert process.stderr.startswith("error: cluster.gpuPools[0].vmSize: unknown VM size")


def test_secret_given_in_plain_text_registers_nothing(tmp_path: Path) -> None:
    document = yaml.safe_load((PROJECT_ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    document["config"]["aks-ray-platform:huggingfaceToken"] = "hf_plaintext"
    assert_rejected(tmp_path, document, "huggingfaceToken")


def test_a_reader_that_goes_away_ends_the_plan_quietly() -> None:
    process = subprocess.run(
        f"{sys.executable} -m aksray.cli.main plan --stack prod | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        check=False,
        timeout=120,
        executable="/bin/bash",
    )
    assert process.stdout.startswith("Resources (") and process.stdout.count("\n") == 1
    assert process.stderr == ""


def test_render_into_a_file_is_a_user_error(tmp_path: Path) -> None:
    target = tmp_path / "not-a-directory"
    target.write_text("")
    run = cli("render", "--stack", "local", "--out", target)
    assert run.code == 1
    assert run.error_lines == [
        f"error: --out {target}: cannot write there (Not a directory); name a directory"
    ]


# --------------------------------------------------------------------------------------------
# The CLI
# --------------------------------------------------------------------------------------------


def test_plan_prints_the_summary_and_the_checks() -> None:
    run = cli("plan", "--stack", "dev")
    assert run.code == 0 and run.stderr == ""
    headings = ("Pools (", "Queues (", "KAI queues", "Workloads (", "Pod sets (", "Deploy critical")
    for heading in headings:
        assert f"\n{heading}" in run.stdout
    steps = [line.split()[:2] for line in run.stdout.split("Deploy critical path")[1].splitlines()]
    assert steps[1:4] == [
        ["aksray-cluster-rg", "5"],
        ["→", "aksray-cluster-aks"],
        ["→", "aksray-cluster-pool-cpu"],
    ]
    assert run.stdout.rstrip().endswith("Checks: 0 errors, 0 warnings")


def _endpoint_on_spot() -> dict[str, Any]:
    """The endpoint's team has its GPU quota only on a spot pool: a check of the plan fails
    (the settings and the program are fine), with exactly one error."""
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["spot"] = True
    return document


def test_a_failed_check_exits_one_with_one_line(tmp_path: Path) -> None:
    run = cli("plan", "--config", write_stack(tmp_path, _endpoint_on_spot()))
    assert run.code == 1
    assert "Traceback" not in run.output
    assert len(run.error_lines) == 1
    assert run.error_lines[0].startswith(
        "error: scheduling.departments[0].teams[0].quota.a100: llm-serve is an endpoint"
    )
    assert "Checks: 1 error, 0 warnings" in run.stdout


@pytest.mark.parametrize("output", ["text", "json", "markdown"])
def test_quotas_beyond_the_pools_stop_the_plan_before_the_program(
    tmp_path: Path, output: str
) -> None:
    # Found from the settings alone, like a configuration error: nothing is built, no plan.
    document = minimal()
    teams(document)[0]["quota"]["a100"]["gpu"] = 3
    run = cli("plan", "--config", write_stack(tmp_path, document), "--format", output)
    assert run.code == 1
    assert len(run.error_lines) == 1
    assert run.error_lines[0].startswith("error: cluster.gpuPools[0].maxCount: the team quotas")
    if output == "markdown":
        assert "cluster.gpuPools[0].maxCount" in run.stdout and "Resources" not in run.stdout
    else:
        assert run.stdout == ""


def test_warnings_do_not_fail(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["minCount"] = 1
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert run.code == 0
    assert run.stderr.splitlines() == [
        line for line in run.stderr.splitlines() if line.startswith("warning: ")
    ]
    assert run.stderr.startswith("warning: cluster.gpuPools[0].minCount: pool a100 keeps 1 ")


def test_json_carries_the_summary_and_the_checks(tmp_path: Path) -> None:
    run = cli("plan", "--stack", "dev", "--json")
    assert run.code == 0
    document = json.loads(run.stdout)
    assert document["summary"] == json.loads(json.dumps(_dev_summary()))
    assert document["checks"] == {"errors": [], "warnings": []}
    assert document["summary"]["criticalPath"]["estimatedSeconds"] == 974

    bad = _endpoint_on_spot()
    failed = cli("plan", "--config", write_stack(tmp_path, bad), "--json")
    assert failed.code == 1
    assert [e["path"] for e in json.loads(failed.stdout)["checks"]["errors"]] == [
        "scheduling.departments[0].teams[0].quota.a100"
    ]
    assert len(failed.error_lines) == 1


def _dev_summary() -> dict[str, Any]:
    result = planned("dev")
    data: dict[str, Any] = summary(plan(result), critical_path(result))
    return data


# --------------------------------------------------------------------------------------------
# --help and --version
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [None, "plan", "render", "rehearse"])
def test_help_says_what_a_command_does_with_an_example_and_every_exit_code(
    command: str | None,
) -> None:
    run = cli(*([command] if command else []), "--help")
    assert run.code == 0, run.output
    text = run.stdout
    examples = text.split("\nexamples:\n")[1].split("\n\n")[0].splitlines()
    assert examples and all(line.startswith(f"  aksray {command or ''}") for line in examples)
    codes = text.split("\nexit codes:\n")[1].splitlines()
    listed = {int(line.split()[0]) for line in codes if line.strip()}
    # Every code the command can return: the ones main() returns for all, and the command's own.
    assert listed == {0, 1, 2, 3, 130, 141}
    assert set(exit_codes(command)) == listed


def test_the_codes_help_lists_are_the_codes_the_cli_returns(tmp_path: Path) -> None:
    assert cli("plan", "--stack", "dev").code == EXIT_OK
    assert cli("plan", "--stack", "nope").code == EXIT_PROBLEMS
    assert cli("plan", "--bogus").code == EXIT_USAGE
    assert cli("render", "--stack", "dev", "--out", tmp_path / "f" / "x").code == EXIT_OK
    (tmp_path / "file").write_text("")
    assert cli("render", "--stack", "dev", "--out", tmp_path / "file").code == EXIT_PROBLEMS


def test_version_prints_the_package_and_every_pinned_chart() -> None:
    run = cli("--version")
    assert run.code == 0
    lines = run.stdout.splitlines()
    assert lines[0] == f"aksray {version('aks-ray-platform')} (aks-ray-platform)"
    for source, charts in CHART_SETS.items():
        block = run.stdout.split(f"charts with operators.chartSource: {source}:\n")[1]
        for chart in charts.charts:
            assert re.search(
                rf"^  {chart.release} +{re.escape(chart.version)} +{re.escape(chart.repository)}$",
                block,
                re.M,
            ), chart
    assert lines[-1] == f"ray image: {RAY_IMAGE}"


def test_a_run_out_of_memory_ends_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(aksray.offline.runner, "run_program", exhausted)
    run = cli("plan", "--stack", "dev")
    assert run.code == 1
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        "error: --stack dev: the run exhausted the memory this process may use (a plan takes "
        "about half a MiB per team); give it more memory, or plan the stack in parts"
    ]

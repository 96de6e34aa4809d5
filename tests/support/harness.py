"""The one test harness: run the program under mocks, mutate stack files, call the CLI."""

from __future__ import annotations

import copy
import io
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from aksray.cli.main import main
from aksray.offline.runner import RecordedResource, RunResult, run_program, stack_file

STACKS = ("dev", "prod", "local")
P = "aks-ray-platform:"

_CACHE: dict[str, RunResult] = {}


RUNNING = "+run"  # suffix: the stack with every staged RayJob given a `run`, i.e. submitted


def with_runs(document: dict[str, Any], run: str = "1") -> dict[str, Any]:
    """The stack with everything it configures started: every workload enabled and every
    RayJob given a `run` (the shipped stacks stage their jobs; dev keeps its endpoint off)."""
    from workloads.catalog import WORKLOADS

    for name, entry in (document["config"].get(P + "workloads") or {}).items():
        entry["enabled"] = True
        if WORKLOADS[name].kind == "RayJob":
            entry.setdefault("run", run)
    return document


def planned(stack: str) -> RunResult:
    """The recorded run of a project stack (each run is fresh; results are read-only).

    `dev+run` / `prod+run`: that stack after its RayJobs were started (`run` set)."""
    if stack not in _CACHE:
        if stack.endswith(RUNNING):
            base = stack.removesuffix(RUNNING)
            folder = Path(tempfile.mkdtemp(prefix="aksray-run-"))
            path = write_stack(folder, with_runs(stack_document(base)), f"Pulumi.{base}.yaml")
            _CACHE[stack] = run_program(path, stack=base)
        else:
            _CACHE[stack] = run_program(stack_file(stack), stack=stack)
    return _CACHE[stack]


def stack_document(stack: str = "dev") -> dict[str, Any]:
    return copy.deepcopy(yaml.safe_load(stack_file(stack).read_text()))


def write_stack(
    tmp_path: Path, document: Mapping[str, Any] | str, name: str = "Pulumi.test.yaml"
) -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(dict(document)))
    return path


def mutated(stack: str, mutate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A project stack's document with `mutate` applied to its `config:` map."""
    document = stack_document(stack)
    mutate(document["config"])
    return document


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("error: ")]

    @property
    def warning_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("warning: ")]


def cli(*args: str | Path) -> CliRun:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return CliRun(code, out.getvalue(), err.getvalue())


def plan_findings(tmp_path: Path, document: Mapping[str, Any]) -> tuple[int, list[str], list[str]]:
    """`aksray plan` of a stack document: its exit code, error lines and warning lines."""
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert "Traceback" not in run.output
    return run.code, run.error_lines, run.warning_lines


def assert_rejected(tmp_path: Path, document: Mapping[str, Any] | str, path: str) -> CliRun:
    """The CLI refuses the stack with one line naming `path`, and nothing is registered."""
    stack = write_stack(tmp_path, document)
    run = cli("plan", "--config", stack)
    assert run.code == 1, run.output
    assert "Traceback" not in run.output
    assert any(line.startswith(f"error: {path}: ") for line in run.error_lines), run.output
    assert all(line.startswith("error: ") for line in run.stderr.splitlines()), run.stderr
    try:
        result = run_program(stack)
    except Exception:  # noqa: BLE001 - a file the runner cannot read registers nothing either
        return run
    assert result.problems
    assert result.resources == []
    return run


def resources(result: RunResult, type_token: str) -> list[RecordedResource]:
    return result.by_type(type_token)


def one(result: RunResult, type_token: str, name: str) -> RecordedResource:
    matches = [r for r in result.by_type(type_token) if r.name == name]
    assert len(matches) == 1, f"{type_token} {name}: {[r.name for r in result.by_type(type_token)]}"
    return matches[0]


def ancestors(result: RunResult, resource: RecordedResource) -> Iterator[RecordedResource]:
    by_urn = result.by_urn()
    parent = resource.parent
    while parent in by_urn:
        yield by_urn[parent]
        parent = by_urn[parent].parent


def transitive_dependencies(result: RunResult, resource: RecordedResource) -> set[str]:
    """URNs this resource waits for, directly or through what it waits for."""
    by_urn = result.by_urn()
    seen: set[str] = set()
    todo = list(resource.depends_on)
    while todo:
        urn = todo.pop()
        if urn in seen:
            continue
        seen.add(urn)
        if urn in by_urn:
            todo.extend(by_urn[urn].depends_on)
    return seen

"""`aksray plan --since OLD`: the stack as deployed, read from a file or from git, run through the
same program as the new one, and the change between them (aksray/plan/change/)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Final

from aksray.offline.runner import PROJECT_FILE, RunResult, run_program
from aksray.plan.change.compute import change_plan
from aksray.plan.change.model import ChangePlan
from aksray.plan.report.change import CHANGE_SHARE, change_lines, change_markdown, impact_line
from aksray.stackfile.reader import StackFileError, load_stack_config
from settings.errors import problem_lines

GIT_TIMEOUT_SECONDS: Final = 60


class SinceError(Exception):
    """OLD cannot be read or planned: one line per problem, each starting `--since OLD:`."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines[0])
        self.lines = lines


def _where(value: str) -> str:
    return f"--since {value}"


@contextmanager
def old_stack_file(value: str) -> Iterator[Path]:
    """OLD as a file: itself, or `REF:PATH` written from `git show` to a file of its name in a
    folder removed afterwards."""
    path = Path(value)
    if path.is_file():
        yield path
        return
    if ":" not in value:
        raise SinceError(
            [
                f"{_where(value)}: no such file; name the stack file as deployed, or REF:PATH "
                "to read it from git (e.g. origin/main:stacks/Pulumi.prod.yaml)"
            ]
        )
    ref, _, inside = value.partition(":")
    if not ref or not inside:
        raise SinceError([f"{_where(value)}: write REF:PATH, both parts non-empty"])
    text = _git_show(value, ref, inside)
    with tempfile.TemporaryDirectory(prefix="aksray-since-") as folder:
        written = Path(folder) / Path(inside).name
        written.write_bytes(text)
        yield written


def _git_show(value: str, ref: str, inside: str) -> bytes:
    git = shutil.which("git")
    if git is None:
        raise SinceError(
            [f"{_where(value)}: git is not on PATH; write the old file out and pass its path"]
        )
    try:
        shown = subprocess.run(  # noqa: S603 - git from PATH, the user's own ref and path
            [git, "show", f"{ref}:{inside}"],
            capture_output=True,
            check=False,
            timeout=GIT_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        raise SinceError(
            [f"{_where(value)}: git show took over {GIT_TIMEOUT_SECONDS} s; try again"]
        ) from None
    if shown.returncode != 0:
        said = shown.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = (
            (said[0] if said else f"exit {shown.returncode}").removeprefix("fatal: ").rstrip(".")
        )
        raise SinceError([f"{_where(value)}: git cannot read it ({reason}); {_hint(reason)}"])
    return shown.stdout


def _hint(reason: str) -> str:
    if "does not exist in" in reason or "exists on disk, but not in" in reason:
        return (
            "PATH is relative to the repository's root and must exist in REF (a stack new in "
            "this change has no old version: plan it without --since)"
        )
    if "not a git repository" in reason:
        return "run it inside the repository's checkout, or pass the old file's path"
    return "name a branch, tag or commit that has the file (in a shallow CI clone, fetch it first)"


class OldRun:
    """The old stack's run, started before the new one's and taken when the new one is done.

    On Linux it runs in a forked child, beside the new run (the two share the imports made
    before the fork; the child sends back what it recorded); elsewhere, in this process after
    the new run. Use as a context manager: leaving it stops the child and removes the file read
    from git.
    """

    def __init__(self, value: str, stack: str) -> None:
        self.value = value
        self.stack = stack
        self._files = ExitStack()
        self._path = self._files.enter_context(old_stack_file(value))
        try:
            self._config = load_stack_config(self._path, project_file=PROJECT_FILE)
        except StackFileError as exc:
            self._files.close()
            said = str(exc).replace(str(self._path), value)
            raise SinceError([f"{_where(value)}: {said}"]) from None
        self._child: Any = None
        self._pipe: Any = None
        if _can_fork():
            context = multiprocessing.get_context("fork")
            self._pipe, sending = context.Pipe(duplex=False)
            self._child = context.Process(target=self._run_and_send, args=(sending,), daemon=True)
            # The child flushes the streams it inherits when it ends: nothing may wait in them.
            sys.stdout.flush()
            sys.stderr.flush()
            self._child.start()
            sending.close()

    def __enter__(self) -> OldRun:
        return self

    def __exit__(self, *_: object) -> None:
        if self._child is not None and self._child.is_alive():
            self._child.kill()
            self._child.join()
        self._files.close()

    def _run_and_send(self, sending: Any) -> None:
        try:
            sending.send(("run", _recorded(self._run())))
        except BaseException as exc:  # noqa: BLE001 - reported in the parent, one line
            sending.send(("error", f"{type(exc).__name__}: {exc}"))
        sending.close()

    def _run(self) -> RunResult:
        return run_program(self._path, stack=self.stack, config=self._config)

    def result(self) -> RunResult:
        if self._child is None:
            return self._run()
        try:
            kind, payload = self._pipe.recv()
        except EOFError:
            raise RuntimeError(f"{_where(self.value)}: the old stack's run ended early") from None
        finally:
            self._child.join()
        if kind == "error":
            raise RuntimeError(f"{_where(self.value)}: {payload}")
        resources, problems, warnings = payload
        return RunResult(
            stack=self.stack,
            config_file=self._path,
            resources=resources,
            problems=problems,
            warnings=warnings,
        )

    def change(self, new: RunResult) -> ChangePlan:
        """The change from this old stack to the new run. Raises SinceError when the old stack
        does not validate."""
        old = self.result()
        if old.problems:
            raise SinceError([f"{_where(self.value)}: {p}" for p in problem_lines(old.problems)])
        return change_plan(old, new, old_label=self.value, new_label=str(new.config_file))


def _can_fork() -> bool:
    """Linux, where fork is safe after the SDKs' imports, with a second processor to run on."""
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        return False
    return len(os.sched_getaffinity(0)) > 1


def _recorded(result: RunResult) -> tuple[Any, ...]:
    """What the change model reads of a run, as the child sends it."""
    return (result.resources, result.problems, result.warnings)


def plan_json(
    result: RunResult,
    sections: Mapping[str, Any],
    checks: Mapping[str, Any],
    change: ChangePlan | None,
) -> str:
    """`aksray plan --json`: the run, its summary `sections` and checks, and the change under
    `change` when there is one."""
    document = {
        "stack": result.stack,
        "resources": [r.to_json() for r in result.resources],
        "outputs": result.outputs,
        "warnings": result.warnings,
        **sections,
        "checks": checks,
    }
    if change is not None:
        document["change"] = change.to_json()
    return json.dumps(document, indent=2, sort_keys=True)


def print_change(change: ChangePlan | None) -> None:
    """The text plan's first section."""
    if change is None:
        return
    for line in change_lines(change):
        print(line)
    print()


def change_comment(
    change: ChangePlan | None, *, budget: int | None, where: str
) -> tuple[str, int | None]:
    """(the comment's change section, the budget left for the plan after it); nothing without
    --since. The change takes at most CHANGE_SHARE of the budget."""
    if change is None:
        return "", budget
    if budget is None:
        return change_markdown(change, budget=None, where=where) + "\n", None
    text = change_markdown(change, budget=int(budget * CHANGE_SHARE), where=where) + "\n"
    return text, budget - len(text)


def change_diagnostics(change: ChangePlan | None) -> bool:
    """The change's impacts on stderr, warnings then errors, one line each; True when
    `pulumi up` would fail or stop halfway."""
    if change is None:
        return False
    for impact in change.warnings():
        print(f"warning: {impact_line(impact)}", file=sys.stderr)
    for impact in change.errors():
        print(f"error: {impact_line(impact)}", file=sys.stderr)
    return change.fails_halfway

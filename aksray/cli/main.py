"""`aksray`: run the platform program offline, without credentials, and show what it would do.

  aksray plan   (--stack NAME | --config FILE) [--json | --format markdown [--full-plan FILE]]
  aksray render (--stack NAME | --config FILE) --out DIR
  aksray rehearse (--stack NAME | --config FILE) [--scenario NAME] [--kubeconfig FILE] [--json]
  aksray --version

Exit 0 when everything checks out; 1 on a configuration problem or a failed check, each printed
as one line `error: <config path>: <problem and fix>`; never a Python traceback. Every exit code
and an example per command: aksray/cli/usage.py, shown by each command's --help.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from aksray.cli.parser import build_parser, check_plan_options
from aksray.cli.usage import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROBLEMS,
)
from aksray.stackfile.reader import StackFileError
from settings.errors import problem_lines

# Set aside at start and given back when a run exhausts memory, to print the line saying so.
_MEMORY_RESERVE: Final = 4 * 1024 * 1024

if TYPE_CHECKING:
    from aksray.offline.runner import RunResult
    from aksray.plan.change.model import ChangePlan
    from aksray.plan.checks.findings import Findings


def _config_file(args: argparse.Namespace) -> tuple[Path, str | None]:
    from aksray.offline.runner import STACKS_DIR, stack_file

    if args.config is not None:
        return Path(args.config), None
    path = stack_file(args.stack)
    if not path.exists():
        known = sorted(
            p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml")
        )
        raise StackFileError(
            f"--stack {args.stack}",
            f"no stack file {path.name} in stacks/; stacks are "
            f"{', '.join(known)} (or pass --config FILE)",
        )
    return path, args.stack


def _print_errors(lines: Sequence[str], stream: TextIO) -> None:
    for line in lines:
        print(f"error: {line}", file=stream)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_plan_options(parser, args)
    # One short command over one run's objects: the cyclic collector would only walk the whole
    # recorded plan again and again (seconds on a stack of a thousand teams). Restored on return,
    # for callers that stay (the tests call main() in-process).
    collecting = gc.isenabled()
    gc.disable()
    reserve: bytearray | None = bytearray(_MEMORY_RESERVE)
    try:
        return _run(args)
    except StackFileError as exc:
        _print_errors([str(exc)], sys.stderr)
        return EXIT_PROBLEMS
    except MemoryError:
        reserve = None
        _print_errors([_out_of_memory(args)], sys.stderr)
        return EXIT_PROBLEMS
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`aksray plan | head`): stop quietly, as a command ended by
        # SIGPIPE does, and keep the interpreter from complaining about the unflushed rest.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # noqa: BLE001 - the CLI's promise: one line, never a traceback
        if os.environ.get("AKSRAY_DEBUG"):
            traceback.print_exc()
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        print(
            f"error: internal error: {type(exc).__name__}: {message} "
            "(set AKSRAY_DEBUG=1 to see the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        del reserve
        if collecting:
            gc.enable()


def _out_of_memory(args: argparse.Namespace) -> str:
    where = args.config if args.config is not None else f"--stack {args.stack}"
    return (
        f"{where}: the run exhausted the memory this process may use (a plan takes about half "
        "a MiB per team); give it more memory, or plan the stack in parts"
    )


def _run(args: argparse.Namespace) -> int:
    from aksray.cli.preflight import preflight
    from aksray.offline.runner import RunResult, run_program

    config_file, stack = _config_file(args)
    if args.command == "rehearse":
        from aksray.cli.rehearse import run as rehearse

        return rehearse(args, config_file, stack)
    checked = preflight(config_file, stack)
    with contextlib.ExitStack() as old:
        since = None
        if args.command == "plan" and args.since is not None and not checked.problems:
            from aksray.cli.since import OldRun, SinceError

            try:  # started first: on Linux it runs beside the new stack's run
                since = old.enter_context(OldRun(args.since, checked.stack))
            except SinceError as exc:
                _print_errors(exc.lines, sys.stderr)
                return EXIT_PROBLEMS
        if checked.problems:
            result = RunResult(
                stack=checked.stack, config_file=config_file, problems=checked.problems
            )
        else:
            result = run_program(config_file, stack=checked.stack, config=checked.config)
        if result.problems:
            return _invalid(result, args)
        if args.command == "render":
            return _render(result, args.out)
        change = None
        if since is not None:
            try:
                change = since.change(result)
            except SinceError as exc:
                _print_errors(exc.lines, sys.stderr)
                return EXIT_PROBLEMS
        return _plan(result, args, change)


def _invalid(result: RunResult, args: argparse.Namespace) -> int:
    """A stack that does not validate: its errors (and, as a comment, why there is no plan)."""
    problems = problem_lines(result.problems)
    if args.command == "plan" and args.format == "markdown":
        from aksray.plan.report.markdown import invalid_markdown

        where = _full_plan_reference(args)
        if args.full_plan is not None and not _write_full_plan(
            args.full_plan, invalid_markdown(result.stack, problems, budget=None, where=where)
        ):
            return EXIT_PROBLEMS
        print(invalid_markdown(result.stack, problems, where=where), end="")
    _print_errors(problems, sys.stderr)
    return EXIT_PROBLEMS


def _render(result: RunResult, out: Path) -> int:
    """`render`: one folder per cluster for a stack with multikueue, else the one cluster's
    documents and resources.json (then what the program warned about)."""
    from aksray.offline.render import write_render
    from aksray.plan.report.multikueue_render import write_multikueue_render

    warnings: list[str] = []
    try:
        if result.settings.multikueue is not None:
            count, _ = write_multikueue_render(result, out)
            done = f"wrote {count} Kubernetes documents in one folder per cluster under {out}"
        else:
            count, resources_json = write_render(result, out)
            done = (
                f"wrote {count} Kubernetes documents to {out / 'kubernetes'} and "
                f"{len(result.resources)} resources to {resources_json}"
            )
            # What the program warned about (a token Secret left out of rendered YAML, ...).
            warnings = list(result.warnings)
    except OSError as exc:
        _print_errors(
            [f"--out {out}: cannot write there ({exc.strerror}); name a directory"], sys.stderr
        )
        return EXIT_PROBLEMS
    print(done)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return EXIT_OK


def _full_plan_reference(args: argparse.Namespace) -> str:
    from aksray.plan.report.markdown import full_plan_reference

    if args.full_plan is None:
        return full_plan_reference(None, None)
    return full_plan_reference(args.full_plan.name, args.full_plan_link or str(args.full_plan))


def _write_full_plan(path: Path, text: str) -> bool:
    """`--full-plan FILE`, its folder created if missing; False (and one error line) when it
    cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        _print_errors(
            [f"--full-plan {path}: cannot write there ({exc.strerror}); name a file to write"],
            sys.stderr,
        )
        return False
    return True


def _plan(result: RunResult, args: argparse.Namespace, change: ChangePlan | None) -> int:
    if result.settings is not None and result.settings.multikueue is not None:
        from aksray.cli.multikueue import plan_multikueue

        full_plan: Path | None = args.full_plan
        return plan_multikueue(
            result,
            args.format,
            write_full_plan=None if full_plan is None else lambda t: _write_full_plan(full_plan, t),
            change=change,
        )
    from aksray.cli.since import change_comment, change_diagnostics, plan_json, print_change
    from aksray.plan.checks.run import run_checks
    from aksray.plan.model.graph import critical_path
    from aksray.plan.model.plan import plan
    from aksray.plan.report.summary import summary

    planned = plan(result)
    findings = run_checks(planned)
    data = summary(planned, critical_path(result))
    output = args.format
    if output == "json":
        print(plan_json(result, {"summary": data}, findings.to_json(), change))
    elif output == "markdown":
        from aksray.plan.model.cost import monthly_cost
        from aksray.plan.report.folding import COMMENT_BUDGET
        from aksray.plan.report.markdown import plan_markdown

        where = _full_plan_reference(args)
        facts: dict[str, Any] = {
            "resources": len(result.resources),
            "data": data,
            "checks": findings.to_json(),
            "notes": result.warnings,
            "cost": monthly_cost(planned.settings),
        }
        first, budget = change_comment(change, budget=COMMENT_BUDGET, where=where)
        if args.full_plan is not None:
            whole = change_comment(change, budget=None, where=where)[0]
            whole += plan_markdown(result.stack, **facts, budget=None, where=where)
            if not _write_full_plan(args.full_plan, whole):
                return EXIT_PROBLEMS
        print(first + plan_markdown(result.stack, **facts, budget=budget, where=where), end="")
    else:
        print_change(change)
        _print_text(result, data, findings)
    # Diagnostics go to stderr in every format: one line each, warnings first.
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for line in problem_lines(findings.warnings):
        print(f"warning: {line}", file=sys.stderr)
    _print_errors(problem_lines(findings.errors), sys.stderr)
    halfway = change_diagnostics(change)
    return EXIT_PROBLEMS if findings.errors or halfway else EXIT_OK


def _print_text(result: RunResult, data: dict[str, object], findings: Findings) -> None:
    from aksray.offline.tree import resource_tree
    from aksray.plan.report.summary import summary_lines

    print(f"Resources ({len(result.resources)}):")
    for line in resource_tree(result):
        print(f"  {line}")
    print()
    print("Stack outputs:")
    for key, value in sorted(result.outputs.items()):
        print(f"  {key}: {json.dumps(value)}")
    print()
    for line in summary_lines(data):
        print(line)
    print()
    errors, warnings = len(findings.errors), len(findings.warnings)
    print(
        f"Checks: {errors} error{'s' if errors != 1 else ''}, "
        f"{warnings} warning{'s' if warnings != 1 else ''}"
    )


def entry() -> None:
    """The `aksray` console script: `main()`, then exit without tearing the heap down.

    A plan of a large stack leaves millions of objects; freeing them one by one at interpreter
    exit took longer than planning (7 s of 24 s for a thousand teams). Output is flushed first;
    nothing else needs the interpreter's shutdown.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # a reader that went away (`aksray plan | head`)
            code = code or EXIT_PROBLEMS
    os._exit(code)


if __name__ == "__main__":
    entry()

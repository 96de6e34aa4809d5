"""The `aksray rehearse` subcommand: arguments, exit codes, output."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import yaml

from aksray.cli.usage import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from aksray.cli.usage import EXIT_PROBLEMS as EXIT_BROKEN
from aksray.rehearse.multikueue import MULTIKUEUE_SCENARIO
from aksray.rehearse.rig.processes import RigError
from aksray.rehearse.rig.toolchain import ToolchainMissingError
from aksray.rehearse.scenarios import SCENARIOS, SUBMIT_ALL

ALL = "all"


def add_parser(
    commands: Any, add_source: Callable[[argparse.ArgumentParser], None], **help_text: Any
) -> None:
    """`help_text`: the epilog and formatter the other commands get (aksray/cli/parser.py)."""
    rehearse = commands.add_parser(
        "rehearse",
        help="play the stack's queues and workloads on real Kueue and KubeRay controllers",
        description="Start a real control plane, Kueue, the KubeRay operator and kwok nodes "
        "shaped like the stack's pools (or use --kubeconfig), apply the stack through the real "
        "Pulumi engine, play a scenario, print the timeline and one verdict per invariant, then "
        "destroy.",
        **help_text,
    )
    add_source(rehearse)
    rehearse.add_argument(
        "--scenario",
        default=None,
        choices=[*SCENARIOS, MULTIKUEUE_SCENARIO, ALL],
        help=f"what to play (default: {SUBMIT_ALL}; `all` plays every scenario on one rig; a "
        f"stack with `multikueue` plays `{MULTIKUEUE_SCENARIO}`, its only scenario, on a manager "
        "and worker control planes)",
    )
    rehearse.add_argument(
        "--kubeconfig",
        type=Path,
        metavar="FILE",
        help="use a cluster that already runs Kueue, KubeRay and kwok instead of starting a rig",
    )
    rehearse.add_argument(
        "--scheduler",
        default="kai-scheduler",
        choices=["kai-scheduler", "kube-scheduler"],
        help="what places the Ray pods on the rig (default: kai-scheduler, as the platform "
        "ships; kube-scheduler binds them one by one, without gangs, to compare)",
    )
    rehearse.add_argument(
        "--since",
        action="append",
        metavar="OLD",
        help="play a change: apply OLD (the stack as deployed: a file, or REF:PATH read from "
        "git) with its workloads running, then `pulumi up` this stack, checking the engine's "
        "preview against `aksray plan --since OLD` and what survives; repeat it to play a "
        "sequence of changes, oldest first (docs/rehearsal.md)",
    )
    rehearse.add_argument(
        "--upgrade-operators",
        action="store_true",
        help="start Kueue and KubeRay at the versions the platform shipped before (Kueue "
        "v0.17.1, KubeRay v1.6.1) and upgrade them under the running work",
    )
    rehearse.add_argument("--json", action="store_true", help="print one JSON document")


def progress_printer() -> Callable[[str], None]:
    """One line per step on stderr while it runs, with the time since the start, on a terminal;
    nothing otherwise (a pipe or CI gets the report alone)."""
    if not sys.stderr.isatty():
        return lambda _line: None
    t0 = time.monotonic()

    def show(line: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f}s] {line}", file=sys.stderr, flush=True)

    return show


def timeline_shown_live(stdout: TextIO, stderr: TextIO, *, multikueue: bool) -> bool:
    """Whether the one-cluster rehearsal's events already went, as they happened, to the
    terminal the report goes to (progress on a terminal stderr, the report on the same kind of
    stdout): then the report does not print the timeline a second time. The MultiKueue
    rehearsal prints its steps only."""
    return not multikueue and stderr.isatty() and stdout.isatty()


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def multikueue(args: argparse.Namespace, config_file: Path, name: str) -> Any:
    """A stack with `multikueue`: the `multikueue` scenario on a rig of its own."""
    from aksray.rehearse.multikueue.run import rehearse_multikueue
    from aksray.rehearse.run import InvalidConfigError

    refused = []
    if args.kubeconfig is not None:
        refused.append(f"error: --kubeconfig {args.kubeconfig}: a stack with `multikueue` is "
                       "rehearsed on a manager and worker control planes the rehearsal starts; "
                       "leave --kubeconfig out")  # fmt: skip
    if args.scheduler != "kai-scheduler":
        refused.append(
            f"error: --scheduler {args.scheduler}: the workers of a stack with `multikueue` run "
            "KAI as the platform ships it; leave --scheduler out"
        )
    if args.since or args.upgrade_operators:
        refused.append("error: --since: a change to a stack with `multikueue` is not rehearsed "
                       "(the manager and its workers are rehearsed from an empty start); plan "
                       "it with `aksray plan --since`")  # fmt: skip
    if args.scenario not in (None, MULTIKUEUE_SCENARIO, ALL):
        refused.append(f"error: --scenario {args.scenario}: a stack with `multikueue` plays the "
                       f"`{MULTIKUEUE_SCENARIO}` scenario (the default); the one-cluster "
                       "scenarios play a stack without `multikueue`")  # fmt: skip
    if refused:
        raise InvalidConfigError(refused)
    return rehearse_multikueue(config_file, name, progress_printer())


def change(args: argparse.Namespace, config_file: Path, name: str) -> Any:
    """`--since` and `--upgrade-operators`: a change rehearsal on a rig of its own."""
    from aksray.cli.since import SinceError, old_stack_file
    from aksray.rehearse.change.run import rehearse_since
    from aksray.rehearse.run import InvalidConfigError

    refused = []
    if args.kubeconfig is not None:
        refused.append(f"error: --kubeconfig {args.kubeconfig}: a change is rehearsed on a rig "
                       "the rehearsal starts (it changes nodes and operators as AKS would); "
                       "leave --kubeconfig out")  # fmt: skip
    if args.scenario is not None:
        refused.append(f"error: --scenario {args.scenario}: --since and --upgrade-operators "
                       "play the change itself, with every workload of the stack running; "
                       "leave --scenario out")  # fmt: skip
    if refused:
        raise InvalidConfigError(refused)
    with ExitStack() as files:
        try:
            since = [(old, files.enter_context(old_stack_file(old))) for old in args.since or []]
        except SinceError as exc:
            raise InvalidConfigError([f"error: {line}" for line in exc.lines]) from None
        return rehearse_since(
            config_file, name, since, upgrade=args.upgrade_operators,
            scheduler=args.scheduler, progress=progress_printer(),
        )  # fmt: skip


def kubeconfig_problem(path: Path) -> str | None:
    """Why `--kubeconfig FILE` names no cluster a rehearsal can use, or None: a file it cannot
    read, not a kubeconfig, a user that signs in through a plugin, a server it cannot reach."""
    from aksray.live.kube import Kube, KubeError, credentials_from_kubeconfig

    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        return f"cannot read it ({error.strerror or error})"
    except (yaml.YAMLError, UnicodeDecodeError):
        config = None
    if not isinstance(config, dict) or not all(
        isinstance(config.get(key), list) for key in ("contexts", "clusters", "users")
    ):
        return "is not a kubeconfig (no contexts, clusters and users)"
    try:
        credentials = credentials_from_kubeconfig(path)
    except ValueError:
        return (
            "its user signs in through a plugin; give a context with a client certificate or "
            "a token (kind's kubeconfig has one)"
        )
    except (KeyError, StopIteration, TypeError, AttributeError):
        return "its current context names no cluster and user it defines"
    try:
        Kube(credentials, timeout=10.0).get_or_none("/version")
    except OSError as error:
        return f"cannot reach its cluster at {credentials.server} ({error})"
    except KubeError as error:
        return f"its cluster at {credentials.server} refuses it ({error})"
    return None


def run(args: argparse.Namespace, config_file: Path, stack: str | None) -> int:
    from aksray.offline.runner import PROJECT_FILE
    from aksray.rehearse.multikueue.run import is_multikueue
    from aksray.rehearse.report import json_document, text_lines
    from aksray.rehearse.run import InvalidConfigError, rehearse
    from aksray.stackfile.reader import load_stack_config

    # A stack file it cannot read is one line (aksray/cli/main.py prints the StackFileError).
    load_stack_config(config_file, project_file=PROJECT_FILE)
    changing = bool(args.since or args.upgrade_operators)
    if args.kubeconfig is not None and not is_multikueue(config_file) and not changing:
        problem = kubeconfig_problem(args.kubeconfig)
        if problem:
            print(f"error: --kubeconfig {args.kubeconfig}: {problem}", file=sys.stderr)
            return EXIT_USAGE
    # Ctrl-C, and a plain kill, stop the rig's processes (also when started in the background,
    # where a shell leaves SIGINT ignored).
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    scenario = args.scenario or SUBMIT_ALL
    scenarios = list(SCENARIOS) if scenario == ALL else [scenario]
    name = stack or config_file.stem.removeprefix("Pulumi.")
    try:
        if is_multikueue(config_file):
            results = [multikueue(args, config_file, name)]
        elif changing:
            results = [change(args, config_file, name)]
        elif args.scenario == MULTIKUEUE_SCENARIO:
            raise InvalidConfigError(
                [f"error: --scenario {MULTIKUEUE_SCENARIO}: {config_file} has no `multikueue` "
                 "section; play it on a stack with one (docs/multikueue.md)"]
            )  # fmt: skip
        else:
            results = rehearse(
                config_file,
                name,
                scenarios,
                args.kubeconfig,
                scheduler=args.scheduler,
                progress=progress_printer(),
            )
    except InvalidConfigError as invalid:
        for line in invalid.lines:
            print(line, file=sys.stderr)
        return EXIT_BROKEN
    except ToolchainMissingError as missing:
        lines = str(missing).splitlines()
        print(f"error: `aksray rehearse` needs {len(lines)} thing(s) it does not have; nothing "
              "was started:", file=sys.stderr)  # fmt: skip
        for line in lines:
            print(f"  - {line}", file=sys.stderr)
        return EXIT_USAGE
    except RigError as broken:
        print(f"error: the rig failed: {broken}", file=sys.stderr)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        if os.environ.get("AKSRAY_DEBUG"):
            traceback.print_exc()
        print("rehearsal interrupted: every process it started is stopped", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        print(json.dumps(json_document(results), indent=2))
    else:
        shown = timeline_shown_live(sys.stdout, sys.stderr, multikueue=is_multikueue(config_file))
        for line in text_lines(results, timeline_shown=shown):
            print(line)
    return EXIT_OK if all(r.held for r in results) else EXIT_BROKEN

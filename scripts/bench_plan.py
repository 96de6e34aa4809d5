"""Benchmark `aksray plan` on generated stacks of 1, 10, 100 and 1000 teams.

The generated stacks are scripts/bench_stack.py's.

Every measurement is the whole process, as a user runs it: `aksray plan --config FILE` in a
fresh Python process, output discarded. Wall time by the clock around the child, peak memory
(max RSS) from the child's own rusage (`os.wait4`). Each size runs several times; the table shows
the median (and the spread).

    .venv/bin/python scripts/bench_plan.py                  # 1, 10, 100, 1000 teams
    .venv/bin/python scripts/bench_plan.py --teams 1 10 100 --runs 5
    .venv/bin/python scripts/bench_plan.py --stack prod --runs 7
    .venv/bin/python scripts/bench_plan.py --write-stack 100 > Pulumi.bench100.yaml
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aksray.offline.runner import run_program, stack_file  # noqa: E402 - after the path is set
from scheduling.workers import pool_packing  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
from bench_stack import generate_stack  # noqa: E402 - the generated stacks, beside this file


def _child_env() -> dict[str, str]:
    # As a user's shell runs it: Python keeps its bytecode caches (some CI images turn that off).
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run_timed(command: list[str], cwd: Path, env: dict[str, str]) -> Measurement:
    """One process: wall seconds, CPU seconds (user + system), peak RSS in KiB, exit, errors."""
    # stderr to a file, not a pipe: a plan may warn about every team, more than a pipe buffers.
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(  # noqa: S603 - our own CLI or the engine we built, no shell
            command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=stderr
        )
        _pid, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        stderr.seek(0)
        errors = [
            line for line in stderr.read().decode().splitlines() if not line.startswith("warning")
        ]
    return Measurement(
        elapsed,
        usage.ru_utime + usage.ru_stime,
        int(usage.ru_maxrss),
        os.waitstatus_to_exitcode(status),
        "\n".join(errors),
    )


@dataclass(frozen=True)
class Measurement:
    wall_s: float
    cpu_s: float  # the process and the children it waited for (an engine's plugins)
    peak_rss_kib: int
    exit_code: int
    errors: str


def plan_command(stack_file: Path, since: Path | None = None) -> list[str]:
    """`aksray plan` of a stack file, with `--since OLD` when given."""
    command = [sys.executable, "-m", "aksray.cli.main", "plan", "--config", str(stack_file)]
    return [*command, "--since", str(since)] if since is not None else command


def _runs_for(teams: int, runs: int) -> int:
    return max(3, runs // 2) if teams >= 1000 else runs


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def bench(
    label: str,
    command: list[str],
    runs: int,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    *,
    warm_up: bool = False,
) -> dict[str, Any]:
    """`runs` timed runs of `command`, after an untimed one with `warm_up` (the first command
    of a kind: bytecode and file caches are warm for every run that counts)."""
    env = _child_env() if env is None else env
    load_before = _load()
    results: list[Measurement] = []
    for attempt in range(runs + int(warm_up)):
        result = _run_timed(command, cwd, env)
        if result.exit_code != 0:
            raise SystemExit(f"{label}: {command[0]} exited {result.exit_code}\n{result.errors}")
        if attempt or not warm_up:
            results.append(result)
    times = [r.wall_s for r in results]
    return {
        "stack": label,
        "runs": runs,
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "cpu_s": round(statistics.median(r.cpu_s for r in results), 3),
        "peak_rss_mib": round(statistics.median(r.peak_rss_kib for r in results) / 1024, 1),
        "load_before": load_before,
        "load_after": _load(),
    }


def preview_row(runs: int) -> dict[str, Any] | None:
    """`pulumi preview --stack local` on the engine tier's toolchain, or None where it is not
    built. The same program and stack file as `aksray plan --stack local`, from a throw-away
    project folder with a file backend (the rehearsal's way of running the engine)."""
    from aksray.rehearse.rig.engine import EngineStack
    from aksray.rehearse.rig.prerequisites import engine_toolchain
    from aksray.rehearse.rig.toolchain import ToolchainMissingError

    try:
        engine = engine_toolchain()
    except ToolchainMissingError:
        return None
    with tempfile.TemporaryDirectory(prefix="aksray-bench-engine-") as scratch:
        stack = EngineStack(
            engine,
            Path(scratch),
            "local",
            Path(scratch) / "no-kubeconfig",
            Path(sys.executable).parent,
        )
        stack.init()
        stack.write_config(_stack_config(ROOT / "stacks" / "Pulumi.local.yaml"))
        # The local stack renders YAML: the Kubernetes provider refuses a kubeconfig beside it,
        # and reads KUBECONFIG from the environment as one.
        env = {k: v for k, v in stack.env().items() if k != "KUBECONFIG"}
        return bench("local: pulumi preview", stack.preview_command(), runs, stack.project, env)


def _stack_config(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return dict(document.get("config") or {})


def _table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| stack | runs | wall median s | wall min..max s | CPU s | peak RSS MiB "
        "| load before, after |",
        "|---|---|---|---|---|---|---|",
    ]
    return lines + [_row(row) for row in rows]


def _ratios(rows: list[dict[str, Any]]) -> list[str]:
    by_name = {row["stack"]: row for row in rows}
    lines = []
    plan, preview = by_name.get("local"), by_name.get("local: pulumi preview")
    if plan and preview:
        lines.append(
            f"`aksray plan` is {preview['median_s'] / plan['median_s']:.1f}x faster than "
            "`pulumi preview` on the local stack (wall medians, same run; "
            f"{preview['cpu_s'] / plan['cpu_s']:.1f}x in CPU time)."
        )
    ten, hundred = by_name.get("10 teams"), by_name.get("100 teams")
    if ten and hundred:
        lines.append(
            f"100 teams take {hundred['median_s'] / ten['median_s']:.1f}x the 10-team time "
            f"({hundred['cpu_s'] / ten['cpu_s']:.1f}x its CPU time)."
        )
    for row in rows:
        if SINCE_SUFFIX not in row["stack"]:
            continue
        alone = by_name.get(row["stack"].split(SINCE_SUFFIX)[0])
        if alone:
            lines.append(
                f"`plan --since` on {row['stack'].split(SINCE_SUFFIX)[0]} takes "
                f"{row['median_s'] / alone['median_s']:.2f}x the wall time of one plan of the "
                f"larger stack (target: at most 1.5x; {row['cpu_s'] / alone['cpu_s']:.2f}x its "
                "CPU time, the old stack's run on the second core)."
            )
    thousand = by_name.get("1000 teams")
    if thousand:
        lines.append(
            f"1000 teams: {thousand['median_s']:.1f} s wall, {thousand['cpu_s']:.1f} s CPU, "
            f"{thousand['peak_rss_mib']:.0f} MiB at peak."
        )
    return lines


SINCE_SUFFIX = " --since "  # a row's label: `<the larger stack> --since <the old one>`
README_START = "<!-- make bench writes this block -->"
README_END = "<!-- end of the block make bench writes -->"


def write_readme(rows: list[dict[str, Any]], readme: Path) -> None:
    text = readme.read_text(encoding="utf-8")
    if README_START not in text or README_END not in text:
        raise SystemExit(f"{readme.name}: no benchmark block ({README_START} ... {README_END})")
    cpu = os.cpu_count()
    block = [
        README_START,
        f"Measured {time.strftime('%Y-%m-%d')} by `make bench` on {cpu} cores (whole processes, "
        "caches warm):",
        "",
        *_table(rows),
        "",
        *_ratios(rows),
        README_END,
    ]
    head, rest = text.split(README_START, 1)
    tail = rest.split(README_END, 1)[1]
    readme.write_text(head + "\n".join(block) + tail, encoding="utf-8")


def packing_lines(stacks: list[str]) -> list[str]:
    """GPU packing of each shipped stack named and every test stack: per pool and GPU workload,
    the share of a full pool's GPUs the workload can use at once (goal: 100 %)."""
    paths = [(name, stack_file(name)) for name in stacks]
    paths += [(path.stem, path) for path in sorted((ROOT / "tests" / "stacks").glob("*.yaml"))]
    lines = ["GPU packing (share of a full pool's GPUs each GPU workload can use at once):"]
    for name, path in paths:
        result = run_program(path)
        if not result.ok:
            lines.append(f"  {name}: does not plan ({len(result.problems)} problems)")
            continue
        rows = pool_packing(result.settings)
        if not rows:
            lines.append(f"  {name}: no enabled GPU workload")
            continue
        lines.append(f"  {name}: {min(row.share for row in rows):.0%} at worst")
        lines += [f"    {row.line()}" for row in rows]
    return lines


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The rows `main` prints: each stack named, the preview pair, each generated size."""
    rows: list[dict[str, Any]] = []

    def add(row: dict[str, Any]) -> None:
        rows.append(row)
        print(_row(row), file=sys.stderr)

    stacks = list(dict.fromkeys([*args.stack, *(["local"] if args.preview else [])]))
    with tempfile.TemporaryDirectory(prefix="aksray-bench-") as tmp:
        for stack in stacks:
            path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
            add(bench(stack, plan_command(path), args.runs, warm_up=not rows))
            if args.since and stack in args.stack:
                label = f"{stack}{SINCE_SUFFIX}{stack}"
                add(bench(label, plan_command(path, since=path), args.runs))
        if args.preview:
            row = preview_row(args.runs)
            if row is None:
                print("bench: engine toolchain not built: no pulumi preview pair", file=sys.stderr)
            else:
                add(row)
        for teams in args.teams:
            path = Path(tmp) / f"Pulumi.bench{teams}.yaml"
            path.write_text(yaml.safe_dump(generate_stack(teams), sort_keys=False))
            runs = _runs_for(teams, args.runs)
            add(bench(f"{teams} teams", plan_command(path), runs, warm_up=not rows))
            if args.since and teams in (10, 100):
                old = Path(tmp) / f"Pulumi.bench{teams - 1}.yaml"
                old.write_text(yaml.safe_dump(generate_stack(teams - 1), sort_keys=False))
                label = f"{teams} teams{SINCE_SUFFIX}{teams - 1} teams"
                add(bench(label, plan_command(path, since=old), runs))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--teams", type=int, nargs="*", default=[1, 10, 100, 1000])
    parser.add_argument("--runs", type=int, default=5, help="runs per size (1000 teams: half)")
    parser.add_argument(
        "--stack", action="append", default=[], help="also time a project stack (dev, prod)"
    )
    parser.add_argument(
        "--preview", action="store_true",
        help="time `pulumi preview --stack local` beside `aksray plan --stack local` (needs the "
        "engine tier's toolchain; skipped with a note where it is not built)",
    )  # fmt: skip
    parser.add_argument(
        "--since", action="store_true",
        help="also time `aksray plan --since` of each stack named (against itself) and of the "
        "generated stacks of 10 and 100 teams (against one team fewer)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--packing-only", action="store_true", help="print only the GPU packing and exit"
    )
    parser.add_argument("--write-readme", action="store_true", help="update README.md's table")
    parser.add_argument(
        "--write-stack", type=int, metavar="TEAMS", help="print a generated stack and exit"
    )
    args = parser.parse_args(argv)
    if args.write_stack is not None:
        print(yaml.safe_dump(generate_stack(args.write_stack), sort_keys=False), end="")
        return 0

    packing = packing_lines(list(dict.fromkeys([*args.stack, "dev", "prod", "local"])))
    print("\n".join(packing), file=sys.stderr)
    if args.packing_only:
        return 0
    rows = measure(args)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("\n".join([*_table(rows), "", *_ratios(rows)]))
    if args.write_readme:
        write_readme(rows, ROOT / "README.md")
    return 0


def _row(row: dict[str, Any]) -> str:
    return (
        f"| {row['stack']} | {row['runs']} | {row['median_s']:.2f} | "
        f"{row['min_s']:.2f}..{row['max_s']:.2f} | {row['cpu_s']:.2f} | "
        f"{row['peak_rss_mib']:.0f} | {row['load_before']} -> {row['load_after']} |"
    )


if __name__ == "__main__":
    sys.exit(main())

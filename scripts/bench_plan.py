"""Benchmark `aksray plan` on generated stacks of 1, 10, 100 and 1000 teams.

Each generated stack is a realistic organisation: 10 teams per department, every team with its
own quota on two GPU pools (A100 and H100) and the CPU pool, sized so the team quotas add up to
exactly what the pools hold at their maximum size (no overcommit: the plan is clean). The four
workloads are enabled once per stack (the config contract has one instance per workload name),
on the first teams; every team also gets its namespace, queues, identity and federated
credential, so the stack grows with the number of teams.

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
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from manifests.capacity import node_allocatable  # noqa: E402 - after the path is set

P = "aks-ray-platform:"
TEAMS_PER_DEPARTMENT = 10
WORKLOADS = ("aurora-finetune", "qwen-lora", "vllm-batch", "llm-serve")

# Per team: 4 A100 (one Standard_NC96ads_A100_v4 node), 8 H100 (one Standard_ND96isr_H100_v5
# node), 8 CPU / 32 GiB for Ray heads (room for all four workloads' heads).
A100_PER_TEAM = 4
H100_PER_TEAM = 8
HEAD_CPU_PER_TEAM = 8
HEAD_MEMORY_GIB_PER_TEAM = 32
CPU_VM_SIZE = "Standard_D32ds_v6"


def generate_stack(teams: int) -> dict[str, Any]:
    """A stack document with `teams` teams, 10 per department, and the four workloads."""
    departments: list[dict[str, Any]] = []
    for index in range(teams):
        if index % TEAMS_PER_DEPARTMENT == 0:
            departments.append({"name": f"dept-{index // TEAMS_PER_DEPARTMENT:03d}", "teams": []})
        departments[-1]["teams"].append(
            {
                "name": f"team-{index:04d}",
                "quota": {
                    "a100": {"gpu": A100_PER_TEAM},
                    "h100": {"gpu": H100_PER_TEAM},
                    "cpu": {"cpu": HEAD_CPU_PER_TEAM, "memory": f"{HEAD_MEMORY_GIB_PER_TEAM}Gi"},
                },
                "borrowingLimit": {"a100": {"gpu": A100_PER_TEAM}},
            }
        )
    # Enough CPU nodes for every team's head quota, by node allocatable (cpu and memory).
    node = node_allocatable(CPU_VM_SIZE)
    cpu_nodes = max(
        2,
        math.ceil(teams * HEAD_CPU_PER_TEAM * 1000 / node.cpu_millis),
        math.ceil(teams * HEAD_MEMORY_GIB_PER_TEAM * 1024**3 / node.memory_bytes),
    )
    workloads = {
        name: {"enabled": True, "team": f"team-{index % teams:04d}"}
        for index, name in enumerate(WORKLOADS)
    }
    workloads["qwen-lora"]["workers"] = 4
    # The endpoint's team never borrows: a reclaimed RayService would keep its GPUs.
    serving = workloads["llm-serve"]["team"]
    for department in departments:
        for team in department["teams"]:
            if team["name"] == serving:
                team["borrowingLimit"] = {
                    "cpu": {"cpu": 0, "memory": 0},
                    "a100": {"gpu": 0},
                    "h100": {"gpu": 0},
                }
    return {
        "config": {
            P + "location": "eastus2",
            P + "cluster": {
                "mode": "aks",
                "kubernetesVersion": "1.35",
                "systemPool": {"vmSize": "Standard_D4ds_v6", "count": 3},
                "cpuPool": {"vmSize": CPU_VM_SIZE, "minCount": 2, "maxCount": cpu_nodes},
                "gpuPools": [
                    {"name": "a100", "vmSize": "Standard_NC96ads_A100_v4", "maxCount": teams},
                    {"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "maxCount": teams},
                ],
            },
            P + "storage": {"enabled": True},
            P + "scheduling": {"departments": departments},
            P + "workloads": workloads,
        }
    }


def _measure(stack_file: Path) -> tuple[float, int, int, str]:
    """(wall seconds, peak RSS in KiB, exit code, error lines) of one `aksray plan` process."""
    command = [sys.executable, "-m", "aksray.cli", "plan", "--config", str(stack_file)]
    # stderr to a file, not a pipe: a plan may warn about every team, more than a pipe buffers.
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(  # noqa: S603 - our own CLI, no shell
            command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr
        )
        _pid, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        errors = [
            line for line in stderr.read().decode().splitlines() if not line.startswith("warning")
        ]
    return elapsed, int(usage.ru_maxrss), process.returncode, "\n".join(errors)


def _runs_for(teams: int, runs: int) -> int:
    return max(3, runs // 2) if teams >= 1000 else runs


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def bench(label: str, stack_file: Path, runs: int) -> dict[str, Any]:
    times: list[float] = []
    memory: list[int] = []
    load_before = _load()
    for _ in range(runs):
        elapsed, rss, code, errors = _measure(stack_file)
        if code != 0:
            raise SystemExit(f"{label}: aksray plan exited {code}\n{errors}")
        times.append(elapsed)
        memory.append(rss)
    return {
        "stack": label,
        "runs": runs,
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "peak_rss_mib": round(statistics.median(memory) / 1024, 1),
        "load_before": load_before,
        "load_after": _load(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--teams", type=int, nargs="*", default=[1, 10, 100, 1000])
    parser.add_argument("--runs", type=int, default=5, help="runs per size (1000 teams: half)")
    parser.add_argument(
        "--stack", action="append", default=[], help="also time a project stack (dev, prod)"
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument(
        "--write-stack", type=int, metavar="TEAMS", help="print a generated stack and exit"
    )
    args = parser.parse_args(argv)
    if args.write_stack is not None:
        print(yaml.safe_dump(generate_stack(args.write_stack), sort_keys=False), end="")
        return 0

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="aksray-bench-") as tmp:
        for stack in args.stack:
            path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
            rows.append(bench(stack, path, args.runs))
            print(_row(rows[-1]), file=sys.stderr)
        for teams in args.teams:
            path = Path(tmp) / f"Pulumi.bench{teams}.yaml"
            path.write_text(yaml.safe_dump(generate_stack(teams), sort_keys=False))
            rows.append(bench(f"{teams} teams", path, _runs_for(teams, args.runs)))
            print(_row(rows[-1]), file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| stack | runs | median s | min..max s | peak RSS MiB | load before -> after |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            print(_row(row))
    return 0


def _row(row: dict[str, Any]) -> str:
    return (
        f"| {row['stack']} | {row['runs']} | {row['median_s']:.2f} | "
        f"{row['min_s']:.2f}..{row['max_s']:.2f} | {row['peak_rss_mib']:.0f} | "
        f"{row['load_before']} -> {row['load_after']} |"
    )


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check `aksray plan --since` against the real engine: for each change below to the deployed
stack, `pulumi preview --json` must list the same creates, updates, replaces and deletes (by URN)
as the change plan aksray computes offline.

    compare_change.py --stack local --stack-file stacks/Pulumi.local.yaml

Run by scripts/engine/e2e.sh while the stack is up (the engine on PATH, its state and passphrase
in the environment). Each change is written to the stack file, previewed and compared; the file
is written back as it was. Exit 0 when every change matches, 1 with the differences otherwise.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import yaml

ROOT: Final = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from aksray.offline.runner import run_program  # noqa: E402 - after the path is set
from aksray.plan.change.compute import change_plan  # noqa: E402

P: Final = "aks-ray-platform:"
# The preview's step kinds, as the change plan names them ("same", "read" and the stack: none).
OPS: Final = {
    "create": "create",
    "update": "update",
    "replace": "replace",
    "create-replacement": "replace",
    "delete-replaced": "replace",
    "delete": "delete",
}
Step = tuple[str, str]  # (URN, action)


def _teams(config: dict[str, Any]) -> list[dict[str, Any]]:
    teams: list[dict[str, Any]] = config[P + "scheduling"]["departments"][0]["teams"]
    return teams


def _set(value: dict[str, Any], key: str, item: Any) -> None:
    value[key] = item


# Changes to the local stack: each keeps it valid and touches the Kubernetes objects differently.
CHANGES: Final[dict[str, Callable[[dict[str, Any]], None]]] = {
    "a team's GPU quota cut": lambda c: _set(_teams(c)[0]["quota"]["gpu"], "gpu", 1),
    "a team added": lambda c: _teams(c).append(
        {"name": "team-b", "quota": {"cpu": {"cpu": 1, "memory": "4Gi"}}}
    ),
    "the endpoint's replicas": lambda c: _set(c[P + "workloads"]["llm-serve"], "minReplicas", 2),
    "a team's namespace renamed": lambda c: _set(_teams(c)[0], "namespace", "team-a-ns"),
    "a department renamed": lambda c: _set(c[P + "scheduling"]["departments"][0], "name", "d-2"),
}


def preview_steps(document: Mapping[str, Any]) -> set[Step]:
    """(URN, action) of every step `pulumi preview --json` lists that changes something."""
    return {
        (step["urn"], OPS[step["op"]])
        for step in document.get("steps") or []
        if step.get("op") in OPS and step.get("type") != "pulumi:pulumi:Stack"
    }


def plan_steps(old: Path, new: Path, stack: str) -> set[Step]:
    before, after = run_program(old, stack=stack), run_program(new, stack=stack)
    if not before.ok or not after.ok:
        raise SystemExit(f"compare_change: a stack does not validate: {after.problems}")
    plan = change_plan(before, after, old_label=str(old), new_label=str(new))
    return {(c.urn, c.action) for c in plan.changes}


def differences(ours: Iterable[Step], engine: Iterable[Step]) -> list[str]:
    """One line per step only one side has, with its resource's name."""
    mine, theirs = set(ours), set(engine)
    return [
        f"  {side}: {action} {urn.rsplit('::', 1)[-1]}"
        for side, steps in (("only aksray", mine - theirs), ("only pulumi preview", theirs - mine))
        for urn, action in sorted(steps)
    ]


def _preview(stack: str, cwd: Path) -> dict[str, Any]:
    done = subprocess.run(  # noqa: S603 - the engine e2e.sh put on PATH
        ["pulumi", "preview", "--json", "--stack", stack, "--non-interactive"],  # noqa: S607
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 and not done.stdout.strip():
        raise SystemExit(f"compare_change: pulumi preview failed:\n{done.stderr[-2000:]}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--stack-file", type=Path, required=True)
    args = parser.parse_args(argv)
    original = args.stack_file.read_text(encoding="utf-8")
    document = yaml.safe_load(original)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="aksray-compare-change-") as scratch:
        old = Path(scratch) / "old" / args.stack_file.name
        old.parent.mkdir()
        old.write_text(original, encoding="utf-8")
        try:
            for name, change in CHANGES.items():
                changed = copy.deepcopy(document)
                change(changed["config"])
                args.stack_file.write_text(yaml.safe_dump(changed, sort_keys=False))
                ours = plan_steps(old, args.stack_file, args.stack)
                engine = preview_steps(_preview(args.stack, ROOT))
                lines = differences(ours, engine)
                verdict = "same" if not lines else "DIFFERENT"
                print(f"{name}: {len(engine)} step(s) in pulumi preview, {verdict}")
                shown = lines or [f"  {a} {u.rsplit('::', 1)[-1]}" for u, a in sorted(ours)]
                print("\n".join(shown))
                failed += bool(lines)
        finally:
            args.stack_file.write_text(original, encoding="utf-8")
    print(f"{len(CHANGES) - failed} of {len(CHANGES)} changes as pulumi preview lists them")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

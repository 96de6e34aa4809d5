"""The deploy critical path as the plan prints it: one step per line with its figure (an
estimate, with the timeout `pulumi up` waits under where it waits, or the bound of a run it
awaits), then what the figures are (aksray/plan/model/graph.py, awaits.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aksray.plan.model.graph import format_duration


def step_figure(step: Mapping[str, Any]) -> str:
    """One step's figure: its estimate, with the timeout `pulumi up` waits under where it waits;
    for a run `pulumi up` awaits, that timeout alone (a bound, not an estimate)."""
    if step["bound"]:
        return f"at most {format_duration(step['seconds'])} (an awaited run)"
    figure = format_duration(step["seconds"])
    at_most = step["atMostSeconds"]
    return f"{figure} (at most {format_duration(at_most)})" if at_most is not None else figure


def critical_path_total(path: Mapping[str, Any]) -> str:
    """`about 16 min 14 s`, or with awaited runs `about 16 min 16 s + at most 60 min 00 s
    awaited`."""
    total = f"about {format_duration(path['estimatedSeconds'])}"
    awaited = path["awaitedAtMostSeconds"]
    return f"{total} + at most {format_duration(awaited)} awaited" if awaited else total


def critical_path_lines(path: Mapping[str, Any]) -> list[str]:
    """The chain one step per line, each with its figure: an estimate, and where `pulumi up`
    waits after the create, the most it waits (a bound); then what the figures are."""
    names, steps = path["resources"], path["steps"]
    width = max((len(name) for name in names), default=0)
    lines = [
        f"  {'→ ' if index else '  '}{name.ljust(width)}  {step_figure(step)}".rstrip()
        for index, (name, step) in enumerate(zip(names, steps, strict=True))
    ]
    estimates = "estimates from aksray/plan/model/graph.py"
    count = f"{len(names)} resources, {critical_path_total(path)}"
    if not path["awaitedAtMostSeconds"]:
        head = f"Deploy critical path ({count}; {estimates}):"
    else:
        head = f"Deploy critical path ({count}):"
        lines.append(f"  {estimates}")
    if any(s["atMostSeconds"] is not None for s in steps):
        lines.append("  at most: the timeout pulumi up waits under (aksray/plan/model/awaits.py)")
    lines += [
        f"  {name} waits {s['until']}" for name, s in zip(names, steps, strict=True) if s["bound"]
    ]
    if path["awaitedAtMostSeconds"]:
        quick = format_duration(path["runsQuickSeconds"])
        lines.append(f"  with the awaited runs quick, the longest chain takes about {quick}")
    return [head, *lines]

"""submit-all: every workload the stack enables, jobs started: each is admitted in turn and
finishes."""

from __future__ import annotations

from aksray.rehearse.scenarios.context import (
    SHORT_RUN_S,
    Context,
)
from aksray.rehearse.scenarios.sizing import (
    NotApplicableError,
)
from aksray.rehearse.scenarios.workload_state import (
    finished,
    pod_count,
    running,
)
from workloads.catalog import WORKLOADS


def play(ctx: Context) -> None:
    """Every workload the stack enables, jobs started: each is admitted in turn and finishes."""
    section = {}
    enabled = []
    for name in WORKLOADS:
        entry = dict(ctx.stack_workloads.get(name) or {})
        if entry.get("enabled", False) is True:
            enabled.append(name)
            if WORKLOADS[name].kind == "RayJob":
                entry["run"] = "rehearse-1"
                ctx.set_run_time(name, SHORT_RUN_S)
        section[name] = entry
    if not enabled:
        raise NotApplicableError("the stack enables no workload")
    ctx.apply(section, "submit-all")
    jobs = [n for n in enabled if WORKLOADS[n].kind == "RayJob"]
    services = [n for n in enabled if WORKLOADS[n].kind == "RayService"]
    done = ctx.wait(
        "every job to finish and the endpoint to run",
        lambda s: (
            all(finished(n)(s) for n in jobs)
            and all(running(n, pod_count(ctx.settings, n))(s) for n in services)
        ),
        timeout=420,
    )
    sample = ctx.observer.last
    for name in jobs:
        ctx.expect(
            f"{name} finished", bool(sample and finished(name)(sample)), "not finished in time"
        )
    for name in services:
        ctx.expect(
            f"{name} running",
            bool(sample and running(name, pod_count(ctx.settings, name))(sample)),
            "endpoint not running",
        )
    if not done:
        ctx.notes.append("not every workload reached its end state in time")

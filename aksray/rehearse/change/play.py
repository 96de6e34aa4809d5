"""A change rehearsal: the old stack applied and running, then each change previewed, applied and
checked, then destroy.

Every job the stacks enable runs for the whole rehearsal (the stand-in dashboard keeps it
RUNNING), so each change meets work in flight; the endpoint serves. Each step:

1. the engine's `pulumi preview` of the next stack, against what the change plan predicts on
   the rig (the Kubernetes half of `aksray plan --since`);
2. the nodes changed as AKS changes them (pools.py), the operators upgraded where asked
   (upgrade.py);
3. `pulumi up`, sampled throughout: it finishes, or fails where the plan says it stops;
4. the pods of every workload the plan leaves alone are still there (survivors.py), and what
   Kueue admits from then on fits the new quotas (the `admitted-within-quota` invariant, which
   spares what was admitted before the change).

At the end every job is let finish, so work still queued must be admitted, and the stack is
destroyed: nothing may be left.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from aksray.rehearse import objects as o
from aksray.rehearse.change import CHANGE_SCENARIO
from aksray.rehearse.change.monitoring import install_stand_ins, wants_monitoring
from aksray.rehearse.change.operators import restart_upgraded
from aksray.rehearse.change.pools import apply_pool_change, pool_changes
from aksray.rehearse.change.preview import differences, parse_preview
from aksray.rehearse.change.serving import ServingWatch
from aksray.rehearse.change.states import State, Step
from aksray.rehearse.change.survivors import lost_pods, running_pods, touched_objects
from aksray.rehearse.observer import Observer
from aksray.rehearse.record import Verdict
from aksray.rehearse.rig.engine import UP_TIMEOUT_S, EngineStack
from aksray.rehearse.rig.footprint import Nodes
from aksray.rehearse.rig.processes import RigError
from aksray.rehearse.run import Rehearsal, ScenarioResult, sample_while
from aksray.rehearse.scenarios.context import LONG_RUN_S, SHORT_RUN_S
from aksray.rehearse.scenarios.workload_state import last_kueue_condition
from aksray.rehearse.stack import rehearsal_config
from settings.workloads import STAGING_WORKLOAD
from workloads.catalog import WORKLOADS

SETTLE_S: Final = 120.0  # what a change sets off (evictions, new admissions) has this long
QUIET_S: Final = 8.0  # then the cluster must stay unchanged this long to count as settled
# An upgrade of the operators, played between a step's preview and its `pulumi up`: returns its
# verdicts and what the report should say of it.
Upgrade = Callable[[Observer], tuple[list[Verdict], list[str]]]


@dataclass
class ChangeRun:
    """One change rehearsal on one target."""

    rehearsal: Rehearsal
    states: list[State]
    steps: list[Step]
    upgrade: Upgrade | None = None  # played in the first step
    checks: list[Verdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def kube(self) -> Any:
        return self.rehearsal.target.kube

    def expect(self, name: str, held: bool, detail: str = "") -> None:
        self.checks.append(Verdict(name, held, "" if held else detail))

    def config(self, state: State) -> dict[str, Any]:
        return rehearsal_config(
            state.stack, self.rehearsal.target.context, state.workloads(), monitoring=True
        )

    # -- the whole run -------------------------------------------------------------------------
    def play(self) -> ScenarioResult:
        r = self.rehearsal
        result = ScenarioResult(r.name, CHANGE_SCENARIO, dict(r.target.controllers))
        result.notes += r.target.notes
        t0 = time.monotonic()
        namespaces = tuple(
            sorted({t.namespace for s in self.states for t in s.settings.scheduling.teams})
        )
        observer = r.observer(namespaces)
        observer.after_sample.append(ServingWatch(observer.note))
        for name in WORKLOADS:
            # `pulumi up` waits for the staging job to succeed (manifests/staging.py): it ends.
            r.run_times[name] = SHORT_RUN_S if name == STAGING_WORKLOAD else LONG_RUN_S
        Nodes(self.kube, self.states[0].settings, r.run_dir.name).all_at_max()
        plane = r.target.plane
        if plane is not None and any(wants_monitoring(s.stack) for s in self.states):
            count = install_stand_ins(self.kube, plane.supervisor)
            self.notes.append(
                f"the rig stands in {count} Prometheus Operator CRDs (no schema, no operator) "
                "for the scrape objects of monitoring"
            )
        engine_stack = EngineStack(
            r.engine, r.run_dir / "change", f"{r.name}-change", r.target.kubeconfig,
            Path(sys.executable).parent,
        )  # fmt: skip
        engine_stack.init()
        try:
            first = self.states[0]
            seconds = sample_while(
                observer.sample, lambda: engine_stack.up(self.config(first), "old")
            )
            observer.note("pulumi", "up", f"{first.label} in {seconds:.1f}s")
            self.settle(observer, f"{first.label}'s workloads to start")
            queued, changed_at = queued_workloads(observer), observer.now()
            for step in self.steps:
                self.play_step(step, observer, engine_stack)
            self.let_queued_work_run(observer)
            self.judge_queued(observer, queued, changed_at)
        finally:
            r.tear_down(engine_stack, observer)
        return r.finish(result, observer, self.checks, self.notes, t0)

    def settle(self, observer: Observer, what: str) -> None:
        """Sample until nothing changes for QUIET_S (at most SETTLE_S)."""
        deadline = time.monotonic() + SETTLE_S
        seen = len(observer.events)
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            observer.sample()
            if len(observer.events) != seen:
                seen, quiet_since = len(observer.events), time.monotonic()
            elif time.monotonic() - quiet_since >= QUIET_S:
                return
            time.sleep(0.5)
        observer.note("rehearsal", "still moving", f"after {SETTLE_S:.0f}s waiting for {what}")

    # -- one change ----------------------------------------------------------------------------
    def play_step(self, step: Step, observer: Observer, engine_stack: EngineStack) -> None:
        r = self.rehearsal
        r.progress(f"{r.name}: {step.title}")
        observer.note("change", str(step.number), f"{step.old.label} -> {step.new.label}")
        before = running_pods(observer.sample())
        self.compare_preview(step, engine_stack)
        removed: set[str] = set()
        for change in pool_changes(step.old.settings.cluster, step.new.settings.cluster):
            gone, evicted = apply_pool_change(self.kube, change, r.run_dir.name)
            removed |= gone
            observer.note(
                f"pool {change.pool}", "nodes", f"{change.what}; {evicted} pod(s) evicted"
            )
        self.restart_operators(step, observer)
        if self.upgrade is not None and step.number == 1:
            verdicts, lines = self.upgrade(observer)
            self.checks += verdicts
            self.notes += [f"{step.title}: {line}" for line in lines]
        last = observer.last
        observer.admitted_before = frozenset(
            o.workload_key(wl) for wl in (last.workloads if last else []) if o.is_admitted(wl)
        )
        self.apply(step, observer, engine_stack)
        self.settle(observer, f"what {step.title} sets off")
        for name in queued_workloads(observer):
            self.notes.append(f"{step.title}: {last_kueue_condition(observer.last, name)}")
        after = running_pods(observer.last) if observer.last else {}
        if removed:
            back = sorted({p.workload for uid, p in after.items() if uid not in before})
            observer.note(
                "nodes", "pods bound again", f"on the new nodes: {', '.join(back) or 'none'}"
            )
        lost = lost_pods(before, after, touched_objects(step.rig_plan.changes), removed)
        self.expect(
            f"{step.title}: what the change plan leaves alone keeps running",
            not lost,
            "; ".join(lost),
        )
        for impact in step.real_plan.impacts:
            self.notes.append(f"{step.title}: the plan on AKS: {impact.severity}: {impact.message}")

    def restart_operators(self, step: Step, observer: Observer) -> None:
        """The operator releases the plan upgrades on AKS, restarted on the rig."""
        plane = self.rehearsal.target.plane
        if plane is None:
            return
        for controller, line in restart_upgraded(plane, step.real_plan, step.new.real.settings):
            observer.note(controller, "restarted", line)

    def compare_preview(self, step: Step, engine_stack: EngineStack) -> None:
        counts = step.rig_plan.counts()
        shown = ", ".join(f"{n} {act}" for act, n in counts.items() if n and act != "same")
        name = f"{step.title}: the engine's preview lists what the plan predicts"
        try:
            text = engine_stack.preview(self.config(step.new), f"change-{step.number}")
        except RigError as failed:
            # A change the API refuses fails the provider's server-side dry run already.
            predicted = [i.message for i in step.rig_plan.errors()]
            self.expect(name, bool(predicted), f"the preview failed, not predicted: {failed}")
            self.notes.append(f"{step.title}: the preview failed: {str(failed).splitlines()[0]}")
            return
        found = differences(step.predicted(), parse_preview(text))
        self.expect(f"{name} ({shown or 'nothing'})", not found, "; ".join(found))

    def apply(self, step: Step, observer: Observer, engine_stack: EngineStack) -> None:
        """`pulumi up` of the new stack: it finishes, or stops where the plan said it would."""
        name = f"{step.title}: pulumi up finishes, or stops where the plan says it does"
        predicted = [i.message for i in step.rig_plan.errors()]
        config = self.config(step.new)
        try:
            seconds = sample_while(
                observer.sample, lambda: engine_stack.up(config, f"change-{step.number}")
            )
        except subprocess.TimeoutExpired:
            observer.note("pulumi", "up hung", f"no end in {UP_TIMEOUT_S}s")
            self.expect(name, False, f"pulumi up did not finish in {UP_TIMEOUT_S}s: a hang")
            return
        except RigError as failed:
            observer.note("pulumi", "up failed", str(failed).splitlines()[0])
            said = "; ".join(predicted)
            self.expect(name, bool(predicted), f"not predicted: {failed}")
            if predicted:
                self.notes.append(f"{step.title}: pulumi up stopped as the plan said: {said}")
            return
        observer.note("pulumi", "up", f"{step.new.label} in {seconds:.1f}s")
        self.expect(name, not predicted, "the plan said it stops: " + "; ".join(predicted))

    def judge_queued(self, observer: Observer, queued: list[str], changed_at: float) -> None:
        """Work that waited in a queue when the first change began is admitted once the jobs
        before it end; a check where the operators alone changed (the same stack: it must be),
        a note otherwise (a change may leave it never admissible, which the plan says)."""
        admitted = {
            e.workload for e in observer.events if e.what == "admitted" and e.t > changed_at
        }
        waiting = [name for name in queued if name not in admitted]
        line = f"work queued before the change admitted after it: {', '.join(queued) or 'none'}"
        if self.upgrade is not None and self.states[0].stack == self.states[-1].stack:
            self.expect(line, not waiting, f"never admitted: {', '.join(waiting)}")
        else:
            self.notes.append(line + (f"; never admitted: {', '.join(waiting)}" if waiting else ""))

    def let_queued_work_run(self, observer: Observer) -> None:
        """Every job ends; what was queued behind it must be admitted and run."""
        dashboard = self.rehearsal.target.dashboard
        if dashboard is None:
            return
        for name in WORKLOADS:
            self.rehearsal.run_times[name] = 5.0
        ended = dashboard.end_running_jobs()
        observer.note("rehearsal", "jobs end", f"{ended} running job(s) succeed now")
        self.settle(observer, "queued work to run")


def queued_workloads(observer: Observer) -> list[str]:
    """The workloads (timeline names) waiting in a queue: a Kueue Workload neither admitted nor
    finished."""
    sample = observer.last or observer.sample()
    waiting = set()
    for wl in sample.workloads:
        if o.is_admitted(wl) or o.condition_true(wl, "Finished"):
            continue
        waiting.add(sample.workload_name(wl["metadata"]["namespace"], o.owner(wl)))
    return sorted(waiting)

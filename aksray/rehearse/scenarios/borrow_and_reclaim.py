"""borrow-and-reclaim: one team borrows an idle team's GPUs; the owner submits; Kueue gives the
owner its quota back, reclaiming from the borrower when the owner lent all it had."""

from __future__ import annotations

from aksray.rehearse.scenarios.context import (
    LONG_RUN_S,
    SHORT_RUN_S,
    Context,
    all_off,
    job,
)
from aksray.rehearse.scenarios.sizing import (
    SMALL_JOBS,
    TRAINING,
    NotApplicableError,
    lending_pair,
    room_for_the_owner,
)
from aksray.rehearse.scenarios.workload_state import (
    ever_evicted,
    pod_count,
    running,
)


def play(ctx: Context) -> None:
    """One team borrows an idle team's GPUs; the owner submits; Kueue gives the owner its quota
    back, reclaiming from the borrower when the owner lent all it had."""
    lending = lending_pair(ctx.settings)
    if lending is None:
        raise NotApplicableError("no two teams of one cohort where one can borrow the other's GPUs")
    borrower, owner, flavor = lending.borrower, lending.owner, lending.flavor
    gang = room_for_the_owner(ctx.settings, lending)
    section = all_off(ctx.stack_workloads)
    section[TRAINING] = job(
        ctx.stack_workloads, TRAINING, enabled=True, team=borrower.name, priority="train",
        workers=gang, run="rehearse-1",
    )  # fmt: skip
    ctx.set_run_time(TRAINING, LONG_RUN_S)
    ctx.apply(section, "borrow")
    pods = pod_count(ctx.settings, TRAINING, gang)
    borrowed = ctx.wait(
        f"{TRAINING} of {borrower.name} to run on {gang} GPUs of {flavor}", running(TRAINING, pods)
    )
    ctx.expect(
        f"{borrower.name} borrows {owner.name}'s idle GPUs",
        borrowed,
        f"{TRAINING} never ran; {ctx.why_waiting(TRAINING)}",
    )
    if not borrowed:
        return
    small = SMALL_JOBS[0]
    section[small] = job(
        ctx.stack_workloads,
        small,
        enabled=True,
        team=owner.name,
        priority="train",
        run="rehearse-1",
    )
    ctx.set_run_time(small, SHORT_RUN_S)
    ctx.apply(section, "owner-submits")
    got = ctx.wait(
        f"{small} of {owner.name} to run", running(small, pod_count(ctx.settings, small))
    )
    ctx.expect(
        f"{owner.name} gets its quota back", got, f"{small} never ran; {ctx.why_waiting(small)}"
    )
    evictions = ever_evicted(ctx.observer, TRAINING)
    if lending.reclaim_expected:
        ctx.expect(
            "the borrower is reclaimed by Kueue",
            any("Preempted" in e for e in evictions),
            f"{TRAINING} evictions: {evictions or 'none'}",
        )
    else:
        ctx.notes.append(
            f"{owner.name} keeps GPUs of {flavor} it never lends (lendingLimit): its job ran "
            "there without reclaiming from the borrower"
        )
        ctx.expect("the borrower keeps running", not evictions, f"{TRAINING} evicted: {evictions}")

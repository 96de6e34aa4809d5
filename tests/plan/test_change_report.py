"""The change as a person reads it: one cell per change, the comment's section within its
budget."""

from __future__ import annotations

from aksray.plan.change.model import ChangePlan, Impact, PathChange, Reason, ResourceChange
from aksray.plan.report.change import change_lines, change_markdown, why

POOL = "azure-native:containerservice:AgentPool"


def _pool(index: int, action: str = "delete") -> ResourceChange:
    return ResourceChange(
        urn=f"urn:pulumi:s::p::{POOL}::pool-{index}",
        type=POOL,
        name=f"pool-{index}",
        action=action,  # type: ignore[arg-type]
        old_inputs={"agentPoolName": f"p{index}"},
    )


def test_why_names_what_forces_a_replacement_and_in_which_order() -> None:
    change = ResourceChange(
        urn="u", type=POOL, name="pool", action="replace",
        paths=(PathChange("vmSize", "update", "a", "b"),),
        replace_reasons=(Reason("vmSize", "forceNewMap", "src"),),
        delete_before_replace=True,
    )  # fmt: skip
    assert why(change) == "vmSize (forceNewMap); deleted first"


def test_why_lists_three_updated_paths_then_how_many_more() -> None:
    paths = tuple(PathChange(f"p{i}", "update", 0, 1) for i in range(5))
    change = ResourceChange(urn="u", type=POOL, name="pool", action="update", paths=paths)
    assert why(change) == "p0, p1, p2 (+2 more)"


def test_why_says_protect_stops_a_delete() -> None:
    change = ResourceChange(urn="u", type=POOL, name="pool", action="delete", protect=True)
    assert why(change) == "protected"


def _plan(count: int) -> ChangePlan:
    changes = tuple(_pool(i) for i in range(count))
    impacts = tuple(
        Impact("warning", "work-killed", c.urn, f"AgentPool p{i}: is deleted")
        for i, c in enumerate(changes)
    )
    return ChangePlan("old", "new", changes, 3, impacts)


def test_the_comment_section_fits_its_budget_saying_what_it_left_out() -> None:
    plan = _plan(2000)
    whole = change_markdown(plan, budget=None, where="the full plan")
    assert whole.count("| delete | AgentPool p") == 2000
    cut = change_markdown(plan, budget=30_000, where="[full.md](full.md)")
    assert len(cut) <= 30_000
    kept = cut.count("| delete | AgentPool p") + cut.count("- **warning** AgentPool")
    assert f"_{4000 - kept} more line(s) of the change left out: [full.md](full.md)._" in cut


def test_the_text_section_counts_every_action() -> None:
    lines = change_lines(_plan(2))
    assert (
        lines[0]
        == "Change since old: 0 to create, 0 to update, 0 to replace, 2 to delete; 3 unchanged"
    )
    assert lines[-1] == "On the running platform: 0 error(s), 2 warning(s); nothing stops it"

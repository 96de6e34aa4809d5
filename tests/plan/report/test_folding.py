"""aksray/plan/report/folding.py: folded tables and charts, and the fit of a comment into its
budget."""

from __future__ import annotations

from collections.abc import Sequence

from aksray.plan.report.folding import (
    COMMENT_BUDGET,
    COMMENT_LIMIT,
    Block,
    Chart,
    Problem,
    Table,
    Variant,
    fit,
    fit_body,
    fit_problems,
    render,
)
from aksray.plan.report.tables import markdown_table

WHERE = "[plan-full.md](https://example.com/run/1)"


def _table(rows: int, title: str = "Things") -> Table:
    lines = markdown_table(title, ("name", "size"), [(f"row-{i:03d}", i) for i in range(rows)])
    return Table.of(lines, f"{rows} rows")


def _section(lines: Sequence[str]) -> list[str]:
    return ["### Errors and warnings", "", *(lines or ["None."])]


def test_a_table_is_folded_under_its_title_and_cut_rows_are_counted() -> None:
    table = _table(3)
    assert table.lines() == [
        "#### Things",
        "",
        "<details><summary>3 rows</summary>",
        "",
        "| name | size |",
        "|---|---|",
        "| row-000 | 0 |",
        "| row-001 | 1 |",
        "| row-002 | 2 |",
        "",
        "</details>",
    ]
    assert table.lines(cap=1)[6:9] == [
        "| row-000 | 0 |",
        "",
        "The first 1 of 3 rows: the whole plan has every one.",
    ]
    assert table.lines(cap=3) == table.lines()


def test_a_chart_is_folded_or_says_why_it_is_not_there() -> None:
    drawn = Chart("Organisation chart", ("```mermaid", "flowchart TD", "```"), "Drawn per x.")
    assert drawn.lines() == [
        "<details><summary>Organisation chart</summary>",
        "",
        "```mermaid",
        "flowchart TD",
        "```",
        "",
        "</details>",
        "",
        "Drawn per x.",
    ]
    assert drawn.lines(drop=1) == ["Left out of this comment for room: the whole plan draws it."]
    refused = Chart("", None, "Left out: 1,100 edges.")
    assert refused.lines() == refused.lines(drop=2) == ["Left out: 1,100 edges."]


def test_problems_are_cut_to_their_room_with_a_count_of_the_rest() -> None:
    problems = [Problem("error", f"- **error** e{i}") for i in range(2)] + [
        Problem("warning", f"- **warning** w{i:02d}") for i in range(40)
    ]
    whole, listed = fit_problems(problems, None, WHERE)
    assert listed == 42 and whole == [p.line for p in problems]
    cut, listed = fit_problems(problems, 300, WHERE)
    assert len("\n".join(cut)) <= 300
    assert cut[:listed] == [p.line for p in problems[:listed]] and 2 <= listed < 42
    assert cut[-1] == (
        f"- … and {42 - listed} more (0 errors, {42 - listed} warnings): the whole plan lists "
        f"every one, {WHERE}"
    )
    # No room for a single one: the count alone, errors first.
    tight, listed = fit_problems(problems, 10, WHERE)
    assert listed == 0
    assert tight == [
        f"- … and 42 more (2 errors, 40 warnings): the whole plan lists every one, {WHERE}"
    ]


def test_the_body_is_the_most_detailed_variant_that_fits() -> None:
    per_team: list[Block] = [["### Summary"], _table(40)]
    per_department: list[Block] = [["### Summary"], _table(4)]
    variants = [Variant(per_team), Variant(per_department, "per department")]
    lines, reasons = fit_body(variants, 10_000)
    assert lines == render(per_team) and reasons == []
    small = len("\n".join(render(per_department)))
    lines, reasons = fit_body(variants, small)
    assert lines == render(per_department) and reasons == ["per department"]


def test_short_of_room_the_organisation_chart_goes_then_rows_are_cut() -> None:
    chart = Chart("Organisation chart", ("```mermaid", "flowchart TD", "```"))
    path = Chart("Critical path", ("```mermaid", "flowchart TD", "```"), rank=2)
    body: list[Block] = [["### Organisation"], chart, ["### Summary"], _table(50), path]
    without_chart = render(body, drop=1)
    lines, reasons = fit_body([Variant(body)], len("\n".join(without_chart)))
    assert lines == without_chart and reasons == ["the organisation chart left out"]
    room = len("\n".join(render(body, cap=20, drop=1)))
    lines, reasons = fit_body([Variant(body)], room)
    assert lines == render(body, cap=20, drop=1)
    assert reasons == ["the organisation chart left out", "every table cut to its first 20 rows"]
    # Less room than the headings and empty tables with both charts: both charts go.
    lines, reasons = fit_body([Variant(body)], len("\n".join(render(body, cap=0, drop=2))))
    assert lines == render(body, cap=0, drop=2)
    assert reasons == ["the diagrams left out", "every table cut to its first 0 rows"]


def test_a_comment_within_its_budget_is_the_whole_plan_and_says_nothing_of_shortening() -> None:
    head = ["## aksray plan: `x`", "", "**summary**"]
    problems = [Problem("warning", "- **warning** w")]
    body: list[Block] = [["### Summary"], _table(3)]
    text = fit(head, problems, [Variant(body)], section=_section, budget=None, where=WHERE)
    assert text == "\n".join([*head, "", *_section(["- **warning** w"]), "", *render(body)]) + "\n"
    assert fit(head, problems, [Variant(body)], section=_section, budget=5000, where=WHERE) == text


def test_a_long_comment_is_shortened_to_its_budget_and_says_how() -> None:
    head = ["## aksray plan: `x`", "", "**summary**"]
    problems = [Problem("warning", f"- **warning** {'w' * 400} {i}") for i in range(300)]
    variants = [
        Variant([["### Summary"], _table(3000)]),
        Variant([["### Summary"], _table(300)], "per department"),
    ]
    text = fit(head, problems, variants, section=_section, budget=COMMENT_BUDGET, where=WHERE)
    assert len(text) - 1 <= COMMENT_BUDGET < COMMENT_LIMIT
    lines = text.splitlines()
    assert lines[:3] == head
    notice = lines[4]
    assert notice.startswith(
        "*Shortened to fit a pull-request comment (65,536 characters at most): per department; "
    )
    assert notice.endswith(f" of 300 errors and warnings listed. The whole plan: {WHERE}.*")
    listed = sum(line.startswith("- **warning** ") for line in lines)
    assert 0 < listed < 300
    assert f"- … and {300 - listed} more (0 errors, {300 - listed} warnings)" in text
    # The problems keep their room first; the tables have at least what is left.
    assert len("\n".join(line for line in lines if line.startswith("- "))) > COMMENT_BUDGET / 2

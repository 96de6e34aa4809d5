"""The Markdown plan fitted into one pull-request comment.

GitHub refuses a comment body longer than 65,536 characters, and the plan of a large organisation
is many times that. The comment keeps, in this order: the title and the summary line; the errors
and warnings (errors first, every one while they fit); then the tables and diagrams, each folded
in `<details>`: per team while that fits, else per department, else with the organisation chart
left out and every table cut to its first rows. A shortened comment says so under its summary
line, what it left out, and where the whole plan is (`aksray plan --full-plan FILE` writes it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from aksray.plan.report.tables import markdown_cell

# GitHub's limit on an issue or pull-request comment body, in characters.
COMMENT_LIMIT: Final = 65_536
# What the plan itself may take: the rest of the limit is left for what a pipeline adds around
# it (a sticky-comment action's hidden marker, a header of its own).
COMMENT_BUDGET: Final = 60_000
# When the errors and warnings alone would fill the comment, the tables and diagrams keep this
# much of it (less when they need less).
BODY_RESERVE: Final = 20_000


def _size(lines: Sequence[str]) -> int:
    return len("\n".join(lines))


def details(summary: str, content: Sequence[str]) -> list[str]:
    """`content` folded under a one-line summary (GitHub and Azure DevOps render it closed)."""
    return [f"<details><summary>{markdown_cell(summary)}</summary>", "", *content, "", "</details>"]


@dataclass(frozen=True)
class Table:
    """A Markdown table under its `####` title, folded; its rows can be cut from the end."""

    title: str
    summary: str
    header: tuple[str, ...]  # the header row and the separator
    rows: tuple[str, ...]
    note: str = ""  # a line under the fold

    @classmethod
    def of(cls, lines: Sequence[str], summary: str, note: str = "") -> Table:
        """From `aksray.plan.report.tables.markdown_table`'s lines: title, blank, header,
        separator, rows."""
        return cls(lines[0], summary, tuple(lines[2:4]), tuple(lines[4:]), note)

    def lines(self, cap: int | None = None) -> list[str]:
        shown = self.rows if cap is None else self.rows[:cap]
        content = [*self.header, *shown]
        if len(shown) < len(self.rows):
            content += [
                "",
                f"The first {len(shown)} of {len(self.rows)} rows: the whole plan has every one.",
            ]
        note = ["", self.note] if self.note else []
        return [self.title, "", *details(self.summary, content), *note]


@dataclass(frozen=True)
class Chart:
    """A Mermaid block, folded; `note` says why it is drawn as it is, or left out (`block` None).

    `rank` orders what a comment short of room leaves out: 1 first (the organisation chart),
    2 only when the tables cut to no rows do not fit either."""

    summary: str
    block: tuple[str, ...] | None
    note: str = ""
    rank: int = 1

    def lines(self, drop: int = 0) -> list[str]:
        if self.block is None:
            return [self.note]
        if self.rank <= drop:
            return ["Left out of this comment for room: the whole plan draws it."]
        return [*details(self.summary, self.block), *(["", self.note] if self.note else [])]


Block = Sequence[str] | Table | Chart


def render(body: Sequence[Block], *, cap: int | None = None, drop: int = 0) -> list[str]:
    """The blocks, a blank line between them; tables cut to `cap` rows, charts up to rank
    `drop` left out."""
    lines: list[str] = []
    for block in body:
        if isinstance(block, Table):
            part = block.lines(cap)
        elif isinstance(block, Chart):
            part = block.lines(drop)
        else:
            part = list(block)
        lines += ["", *part] if lines else part
    return lines


@dataclass(frozen=True)
class Variant:
    """One way to show the tables and diagrams; `shortened` says how it differs from the
    whole plan (None for the whole plan's own)."""

    body: Sequence[Block]
    shortened: str | None = None


def _longest_cap(body: Sequence[Block], room: int, drop: int) -> int | None:
    """The most rows every table may keep for the body to fit in `room`; None: not even 0."""
    longest = max((len(b.rows) for b in body if isinstance(b, Table)), default=0)
    if _size(render(body, drop=drop)) <= room:
        return longest
    if _size(render(body, cap=0, drop=drop)) > room:
        return None
    # A cut table's size grows with its rows (the uncut one, without the closing count, is
    # handled above): the largest cap that fits, by bisection.
    low, high = 0, longest - 1  # invariant: `low` fits
    while low < high:
        middle = (low + high + 1) // 2
        if _size(render(body, cap=middle, drop=drop)) <= room:
            low = middle
        else:
            high = middle - 1
    return low


def fit_body(variants: Sequence[Variant], room: int) -> tuple[list[str], list[str]]:
    """The most detailed variant that fits in `room`; else the last one with the organisation
    chart left out and its tables cut. Returns the lines and what was shortened."""
    for variant in variants:
        lines = render(variant.body)
        if _size(lines) <= room:
            return lines, [variant.shortened] if variant.shortened else []
    last = variants[-1]
    reasons = [last.shortened] if last.shortened else []
    for drop in (1, 2):
        cap = _longest_cap(last.body, room, drop)
        if cap is not None:
            break
    else:
        cap, drop = 0, 2  # the headings alone: as short as it gets
    longest = max((len(b.rows) for b in last.body if isinstance(b, Table)), default=0)
    reasons.append("the organisation chart left out" if drop == 1 else "the diagrams left out")
    if cap < longest:
        reasons.append(f"every table cut to its first {cap} rows")
    return render(last.body, cap=cap, drop=drop), reasons


@dataclass(frozen=True)
class Problem:
    kind: str  # "error" or "warning"
    line: str  # the list item


def fit_problems(
    problems: Sequence[Problem], room: int | None, where: str
) -> tuple[list[str], int]:
    """The list, cut to fit `room` with a last line counting what it leaves out; the number
    of problems listed."""
    lines = [p.line for p in problems]
    if room is None or _size(lines) <= room:
        return lines, len(problems)

    def closing(shown: int) -> str:
        rest = problems[shown:]
        errors = sum(p.kind == "error" for p in rest)
        return (
            f"- … and {len(rest)} more ({_count(errors, 'error')}, "
            f"{_count(len(rest) - errors, 'warning')}): the whole plan lists every one, {where}"
        )

    shown, used = 0, 0
    while shown < len(lines):
        step = len(lines[shown]) + 1
        if used + step + len(closing(shown + 1)) > room:
            break
        used += step
        shown += 1
    return [*lines[:shown], closing(shown)], shown


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def fit(
    head: Sequence[str],
    problems: Sequence[Problem],
    variants: Sequence[Variant],
    *,
    section: Callable[[Sequence[str]], list[str]],
    budget: int | None,
    where: str,
) -> str:
    """The whole comment: `head` (title, summary line), the problems as `section` lays them out,
    then the body; shortened to `budget` characters when it is longer (None: never)."""
    problem_lines, _ = fit_problems(problems, None, where)
    whole = [*head, "", *section(problem_lines), "", *render(variants[0].body)]
    if budget is None or _size(whole) <= budget:
        return "\n".join(whole) + "\n"
    room = budget
    for _ in range(4):  # the notice's own length is known last: correct for it and try again
        text = _shortened(head, problems, variants, section=section, room=room, where=where)
        if len(text) - 1 <= budget:
            return text
        room -= len(text) - 1 - budget
    raise AssertionError(f"the comment does not fit in {budget} characters")  # pragma: no cover


def _shortened(
    head: Sequence[str],
    problems: Sequence[Problem],
    variants: Sequence[Variant],
    *,
    section: Callable[[Sequence[str]], list[str]],
    room: int,
    where: str,
) -> str:
    notice_room = 400 + len(where)
    fixed = _size(head) + notice_room + _size(section([])) + 4  # the blank lines between parts
    wanted = min(BODY_RESERVE, _size(render(variants[0].body)))
    problem_lines, listed = fit_problems(problems, max(0, room - fixed - wanted), where)
    problem_part = section(problem_lines)
    body, reasons = fit_body(variants, room - fixed - _size(problem_part) + _size(section([])))
    if listed < len(problems):
        reasons.append(f"{listed:,} of {len(problems):,} errors and warnings listed")
    notice = (
        f"*Shortened to fit a pull-request comment ({COMMENT_LIMIT:,} characters at most): "
        f"{'; '.join(reasons)}. The whole plan: {where}.*"
    )
    return "\n".join([*head, "", notice, "", *problem_part, "", *body]) + "\n"

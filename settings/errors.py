"""A problem in the stack configuration, and the error that reports all of them at once.

What a stack file holds is echoed in messages only in bounded form: a key or value longer than
`MAX_SHOWN` characters is cut (with its length said), a line never exceeds `MAX_LINE`, and a
list of problems shows at most `PER_KIND` of one kind (the same path, whatever the list indices)
and `MAX_PROBLEM_LINES` in all, then counts the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

# The longest piece of a stack file a message repeats whole (keys and names are far shorter).
MAX_SHOWN: Final = 80
# The longest line a problem prints (its path, its message and what to do).
MAX_LINE: Final = 2000
# Problems of one kind shown before a count of the rest, and problem lines in all.
PER_KIND: Final = 5
MAX_PROBLEM_LINES: Final = 50

_INDEX = re.compile(r"\[[0-9]+\]")


def printable(text: str) -> str:
    """One line, whatever a stack file held: control characters are shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(text: str) -> str:
    """A key or value from the stack file, cut to its first characters when it is long."""
    if len(text) <= MAX_SHOWN:
        return text
    return f"{text[: MAX_SHOWN - 20]}...({len(text):,} characters)"


def bounded(line: str) -> str:
    """`line`, cut in the middle when it exceeds MAX_LINE: its start names the key, its end
    says what to do."""
    if len(line) <= MAX_LINE:
        return line
    head, tail = MAX_LINE * 2 // 3, MAX_LINE // 4
    cut = len(line) - head - tail
    return f"{line[:head]}...({cut:,} characters left out)...{line[-tail:]}"


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return bounded(printable(f"{self.path}: {self.message}"))

    @property
    def kind(self) -> str:
        """The path with its list indices left out: what problems of one kind share."""
        return _INDEX.sub("[i]", self.path)


def problem_lines(problems: Iterable[Problem]) -> list[str]:
    """One line per problem, bounded: PER_KIND of each kind, MAX_PROBLEM_LINES in all, and one
    line per kind that had more saying how many."""
    lines: list[str] = []
    held_back: dict[str, int] = {}
    shown_per_kind: dict[str, int] = {}
    for problem in problems:
        kind = problem.kind
        if shown_per_kind.get(kind, 0) >= PER_KIND or len(lines) >= MAX_PROBLEM_LINES:
            held_back[kind] = held_back.get(kind, 0) + 1
            continue
        shown_per_kind[kind] = shown_per_kind.get(kind, 0) + 1
        lines.append(str(problem))
    kinds = sorted(held_back.items(), key=lambda item: -item[1])
    for kind, count in kinds[:PER_KIND]:
        lines.append(
            bounded(
                printable(
                    f"{kind}: {count:,} more like the above at this path (other list entries), "
                    "not shown"
                )
            )
        )
    rest = sum(count for _, count in kinds[PER_KIND:])
    if rest:
        lines.append(
            f"config: {rest:,} more problems at {len(kinds) - PER_KIND:,} other paths, not shown"
        )
    return lines


class SettingsError(Exception):
    """Every problem found in the stack configuration, one line each (bounded: problem_lines).

    What `pulumi up` sees is the `pulumi.RunError` form (settings/load.py), which the Pulumi
    language host prints without a traceback.
    """

    def __init__(self, problems: list[Problem], *, settings: Any = None) -> None:
        self.problems = tuple(problems)
        # The model, where every problem judges values that parsed (a limit, a retired size):
        # whole enough for the checks that need only the settings, which report with these.
        self.settings = settings
        count = len(self.problems)
        lines = "\n".join(f"  {line}" for line in problem_lines(self.problems))
        noun = "problem" if count == 1 else "problems"
        super().__init__(f"the stack configuration has {count:,} {noun}:\n{lines}")

"""One table, two renderings: the aligned text `aksray plan` prints, and a Markdown table.

Each summary table (aksray/plan/report/summary.py) is a title, a header and rows; a renderer turns
them into
lines. None in a cell is shown as `-`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

NONE: Final = "-"

# (title, header, rows) -> lines
Render = Callable[[str, Sequence[str], Iterable[Sequence[object]]], list[str]]


def _cells(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[list[str]]:
    return [[str(c) for c in header]] + [[NONE if c is None else str(c) for c in r] for r in rows]


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """Left-aligned columns, two spaces apart, no trailing blanks."""
    cells = _cells(header, rows)
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]


def text_table(title: str, header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """`Title:` and the table under it, indented two spaces."""
    return [f"{title}:", *(f"  {line}" for line in table(header, rows))]


def markdown_cell(text: str) -> str:
    """Text as Markdown shows it literally: outside `code spans` no escape and no HTML tag
    (`<name>`); a pipe is escaped everywhere (a table cell ends at one, even in a code span)."""
    parts = " ".join(text.split()).split("`")
    # Outside code spans: the even parts, and the last one when its backtick opens no span.
    outside = [*range(0, len(parts), 2), *([len(parts) - 1] if len(parts) % 2 == 0 else [])]
    for index in outside:
        parts[index] = parts[index].replace("\\", "\\\\").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts).replace("|", "\\|")


def markdown_table(
    title: str, header: Sequence[str], rows: Iterable[Sequence[object]]
) -> list[str]:
    """`#### Title` and a GitHub-flavoured Markdown table (an empty cell for a repeated one)."""
    cells = _cells(header, rows)
    lines = [f"| {' | '.join(markdown_cell(c) for c in row)} |" for row in cells]
    return [f"#### {markdown_cell(title)}", "", lines[0], "|" + "---|" * len(header), *lines[1:]]

"""A strict checker for the Mermaid subset `aksray plan --format markdown` writes (no browser).

The subset (aksray/plan/report/mermaid.py): the first line `flowchart TD` (or LR, TB, BT, RL);
then, each
indented two spaces, a node `id["label"]` or an edge `id --> id`. Ids are a letter, then letters,
digits or `_`, never a word Mermaid's grammar reserves (`end` breaks a flowchart), and each is
defined once, before any edge uses it. A label is one double-quoted string that holds no `"`,
no backtick and no raw `<`, `>` or `&`: characters are written as entity codes (`#34;`,
`#35;`...), and `<br/>` is the only markup. Anything else is reported: a subset this strict is
one Mermaid parses the same way everywhere.

A block must also stay within the limits Mermaid renders under by default (GitHub and Azure
DevOps cannot raise them): at most 500 edges and 50,000 characters of text.
"""

from __future__ import annotations

import re
from typing import Final

HEADER: Final = re.compile(r"flowchart (TD|TB|BT|LR|RL)")
_ID: Final = r"[A-Za-z][A-Za-z0-9_]*"
NODE: Final = re.compile(rf"  (?P<id>{_ID})\[\"(?P<label>[^\"\n]*)\"\]")
EDGE: Final = re.compile(rf"  (?P<source>{_ID}) --> (?P<target>{_ID})")
RESERVED: Final = frozenset(
    {"end", "graph", "flowchart", "subgraph", "direction", "click", "call", "href"}
    | {"style", "classdef", "class", "linkstyle", "default", "interpolate", "accdescr", "acctitle"}
)
ENTITY: Final = re.compile(r"#(?:\d+|[A-Za-z]+);")
LINE_BREAK: Final = "<br/>"
# Mermaid's defaults `maxEdges` and `maxTextSize` (mermaid-js/mermaid,
# packages/mermaid/src/schemas/config.schema.yaml): its flowchart parser throws "Edge limit
# exceeded" at the 501st edge, and a text longer than maxTextSize JavaScript characters (UTF-16
# code units) is drawn as "Maximum text size in diagram exceeded" instead of the chart.
MAX_EDGES: Final = 500
MAX_TEXT_SIZE: Final = 50_000


def limit_problems(block: str) -> list[str]:
    """Where a block is past what Mermaid draws by default."""
    found = []
    count = len(edges(block))
    if count > MAX_EDGES:
        found.append(f"{count} edges: Mermaid refuses more than {MAX_EDGES}")
    size = len(block.encode("utf-16-le")) // 2
    if size > MAX_TEXT_SIZE:
        found.append(f"{size} characters: Mermaid draws at most {MAX_TEXT_SIZE}")
    return found


def label_problems(label: str) -> list[str]:
    problems = []
    plain = ENTITY.sub("", label.replace(LINE_BREAK, ""))
    for character, why in (
        ("#", "a # that starts no entity code"),
        ("<", "a < outside <br/>"),
        (">", "a > outside <br/>"),
        ("&", "a raw &"),
        ("`", "a backtick (Markdown-string syntax)"),
    ):
        if character in plain:
            problems.append(f"label {label!r}: {why}")
    return problems


def problems(block: str) -> list[str]:
    """Everything in one Mermaid block (the text between the fences) outside the subset."""
    lines = block.splitlines()
    if not lines or not HEADER.fullmatch(lines[0]):
        return [f"line 1: not a flowchart header: {lines[0] if lines else ''!r}"]
    found: list[str] = []
    defined: set[str] = set()
    for number, line in enumerate(lines[1:], start=2):
        node, edge = NODE.fullmatch(line), EDGE.fullmatch(line)
        if node:
            node_id = node.group("id")
            if node_id.lower() in RESERVED:
                found.append(f"line {number}: {node_id!r} is a reserved word")
            if node_id in defined:
                found.append(f"line {number}: {node_id!r} is defined twice")
            defined.add(node_id)
            found += [f"line {number}: {p}" for p in label_problems(node.group("label"))]
        elif edge:
            found += [
                f"line {number}: edge to {end!r}, which no line above defines"
                for end in (edge.group("source"), edge.group("target"))
                if end not in defined
            ]
        else:
            found.append(f"line {number}: neither a node nor an edge: {line!r}")
    return found + limit_problems(block)


def blocks(markdown: str) -> list[str]:
    """The Mermaid blocks of a Markdown document, fences left out."""
    return re.findall(r"^```mermaid\n(.*?)\n```$", markdown, re.MULTILINE | re.DOTALL)


def edges(block: str) -> list[tuple[str, str]]:
    return [
        (m.group("source"), m.group("target")) for m in map(EDGE.fullmatch, block.splitlines()) if m
    ]


def labels(block: str) -> dict[str, str]:
    return {m.group("id"): m.group("label") for m in map(NODE.fullmatch, block.splitlines()) if m}

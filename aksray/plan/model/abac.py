"""Azure role-assignment conditions (ABAC, version 2.0) read back and evaluated: what a
condition the stack registers actually allows, request by request.

The grammar is the subset the stack writes (settings/access/blob_condition.py) and Microsoft's Blob
examples use: `!`/`NOT`, `AND`, `OR` (NOT binds tightest, then AND, then OR) and parentheses;
`ActionMatches{'<action>'}`, `SubOperationMatches{'<suboperation>'}`; an attribute
(`@Resource[...]`, `@Request[...]`) compared with `StringEquals`, `StringStartsWith` or
`ForAnyOfAnyValues:StringEquals {...}`. An attribute a request does not carry (a listing without
a prefix) makes its comparison false. Anything else is refused when parsed: the plan never
guesses at a condition it cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

_TOKEN = re.compile(
    r"\s*(?:(?P<open>\()|(?P<close>\))|(?P<not>!|NOT\b)|(?P<and>AND\b)|(?P<or>OR\b)"
    r"|(?P<matcher>ActionMatches|SubOperationMatches)\{'(?P<matched>[^']*)'\}"
    r"|(?P<attribute>@(?:Resource|Request)\[[^\]]+\])"
    r"|(?P<operator>ForAnyOfAnyValues:StringEquals|StringEquals|StringStartsWith)"
    r"|'(?P<string>[^']*)'|\{(?P<set>[^}]*)\})"
)
_OPERATORS: Final[dict[str, Callable[[str, tuple[str, ...]], bool]]] = {
    "StringEquals": lambda value, wanted: value == wanted[0],
    "StringStartsWith": lambda value, wanted: value.startswith(wanted[0]),
    "ForAnyOfAnyValues:StringEquals": lambda value, wanted: value in wanted,
}


class ConditionError(ValueError):
    """A condition outside the subset this module reads."""


@dataclass(frozen=True)
class BlobRequest:
    """One data-plane request as a condition sees it."""

    action: str
    attributes: Mapping[str, str] = field(default_factory=dict)  # `@Resource[...]` -> value
    suboperation: str = ""


Node = Callable[[BlobRequest], bool]


def _tokens(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    position = 0
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ConditionError(
                f"cannot read the condition at: {text[position : position + 40]!r}"
            )
        kind = match.lastgroup or ""
        if kind == "matched":  # ActionMatches / SubOperationMatches and their value
            found.append((match.group("matcher"), match.group("matched")))
        else:
            found.append((kind, match.group(kind)))
        position = match.end()
    return found


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> str:
        return self.tokens[self.at][0] if self.at < len(self.tokens) else ""

    def take(self, kind: str) -> str:
        if self.peek() != kind:
            raise ConditionError(f"expected {kind}, found {self.peek() or 'the end'}")
        self.at += 1
        return self.tokens[self.at - 1][1]

    def expression(self) -> Node:
        terms = [self.conjunction()]
        while self.peek() == "or":
            self.take("or")
            terms.append(self.conjunction())
        return lambda request: any(term(request) for term in terms)

    def conjunction(self) -> Node:
        terms = [self.unary()]
        while self.peek() == "and":
            self.take("and")
            terms.append(self.unary())
        return lambda request: all(term(request) for term in terms)

    def unary(self) -> Node:
        kind = self.peek()
        if kind == "not":
            self.take("not")
            inner = self.unary()
            return lambda request: not inner(request)
        if kind == "open":
            self.take("open")
            inner = self.expression()
            self.take("close")
            return inner
        if kind == "ActionMatches":
            action = self.take(kind)
            return lambda request: request.action == action
        if kind == "SubOperationMatches":
            suboperation = self.take(kind)
            return lambda request: request.suboperation == suboperation
        if kind == "attribute":
            return self.comparison()
        raise ConditionError(f"unexpected {kind or 'end'} in the condition")

    def comparison(self) -> Node:
        attribute = self.take("attribute")
        operator = self.take("operator")
        if self.peek() == "set":
            values = tuple(v.strip().strip("'") for v in self.take("set").split(","))
        else:
            values = (self.take("string"),)
        compare = _OPERATORS[operator]

        def node(request: BlobRequest) -> bool:
            value = request.attributes.get(attribute)
            return value is not None and compare(value, values)

        return node


def parse_condition(text: str) -> Node:
    """The condition as a predicate on requests; ConditionError when it cannot be read."""
    parser = _Parser(text)
    node = parser.expression()
    if parser.peek():
        raise ConditionError(f"unexpected {parser.peek()} after the condition's end")
    return node

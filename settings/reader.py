"""A small reader that walks the raw config with config paths and collects problems.

Each getter checks one key of a map and returns its value, or the given default after recording
a `Problem` at the key's path: a parser reads a whole section and reports every mistake in it.
A map reports the keys it does not know, with the closest known key as a suggestion.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final, TypeVar

from settings.errors import Problem, shown

Choice = TypeVar("Choice", bound=str)

# No setting of a stack needs a longer string (names are held to far less by their own rules).
MAX_STRING_LENGTH: Final = 1000
# How many valid choices an error line lists before it shows the closest ones and a count.
MAX_LISTED_CHOICES: Final = 20


def describe(value: object) -> str:
    """A value as a problem quotes it: JSON (strings in quotes), cut to 60 characters."""
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def unknown_key_message(key: str, known: tuple[str, ...]) -> str:
    guess = difflib.get_close_matches(key, known, n=1)
    hint = f'did you mean "{guess[0]}"? ' if guess else ""
    return f"unknown key; {hint}known keys here: {', '.join(known) if known else '(none)'}"


def choices_text(value: str, choices: tuple[str, ...] | list[str]) -> str:
    """The valid choices for an error line: all of a short list; of a long one the closest few
    to `value` and how many more there are."""
    if not choices:
        return "(none)"
    if len(choices) <= MAX_LISTED_CHOICES:
        return ", ".join(choices)
    if not value:
        return f"{', '.join(choices[:3])} and {len(choices) - 3} more"
    closest = difflib.get_close_matches(value, choices, n=3, cutoff=0.0)
    return f"{', '.join(closest)} and {len(choices) - len(closest)} more (the closest shown)"


def string_problem(value: str) -> str | None:
    """What is wrong with a string setting whatever its key: empty, padded, control characters,
    far too long. None when nothing is."""
    if value == "":
        return "is empty; write a value"
    if len(value) > MAX_STRING_LENGTH:
        return f"is {len(value):,} characters long; no setting needs more than {MAX_STRING_LENGTH}"
    if "\ufffd" in value:
        return (
            f"{describe(value)} holds bytes that are not UTF-8 text (shown as \ufffd, as from a "
            "!!binary value); write the setting as plain text"
        )
    if not value.isprintable():
        return f"{describe(value)} holds a control or invisible character; remove it"
    if value != value.strip():
        return f"{describe(value)} has leading or trailing whitespace; remove it"
    return None


def whole_number(
    value: object,
    path: str,
    problems: list[Problem],
    *,
    minimum: int,
    maximum: int | None,
    what: str,
    default: int,
) -> int:
    """`value` when it is a whole number within the bounds; otherwise `default`, reported."""
    bound = f" between {minimum} and {maximum}" if maximum is not None else f" >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(Problem(path, f"must be a whole number{bound}, got {describe(value)}"))
        return default
    if value < minimum or (maximum is not None and value > maximum):
        problems.append(
            Problem(
                path,
                f"must be a whole number{bound}{' (' + what + ')' if what else ''}, got {value}",
            )
        )
        return default
    return value


class Section:
    """A config map at `path`; reports keys it does not know when created."""

    def __init__(
        self, value: Mapping[str, Any], path: str, problems: list[Problem], known: tuple[str, ...]
    ) -> None:
        self.value = value
        self.path = path
        self.problems = problems
        for key in value:
            if key not in known:
                self.problem(join(path, shown(str(key))), unknown_key_message(str(key), known))

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    def has(self, key: str) -> bool:
        return key in self.value and self.value[key] is not None

    def string(
        self,
        key: str,
        default: str = "",
        *,
        required: bool = False,
        pattern: re.Pattern[str] | None = None,
        hint: str = "",
    ) -> str:
        path = join(self.path, key)
        if not self.has(key):
            if required:
                self.problem(path, f"is required{': ' + hint if hint else ''}")
            return default
        value = self.value[key]
        if not isinstance(value, str):
            self.problem(
                path,
                f"must be a string, got {describe(value)}"
                f"{' (quote it in YAML)' if isinstance(value, (int, float)) else ''}",
            )
            return default
        problem = string_problem(value)
        if problem is not None:
            if value == "" and default:
                problem = f"is empty; write a value, or remove the key for the default {default!r}"
            elif value == "" and hint:
                problem = f"is empty: {hint}"
            self.problem(path, problem)
            return default
        if pattern is not None and not pattern.fullmatch(value):
            self.problem(path, f"{describe(value)} is not valid: {hint}")
            return default
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        path = join(self.path, key)
        value = self.value.get(key, default)
        if value is None:
            return default
        if value not in choices:
            self.problem(path, f"must be one of {', '.join(choices)}, got {describe(value)}")
            return default
        return str(value)

    def literal(self, key: str, choices: tuple[Choice, ...], default: Choice) -> Choice:
        """`choice`, typed as one of `choices` (a Literal of the model)."""
        chosen = self.choice(key, choices, default)
        return next(c for c in choices if c == chosen)

    def boolean(self, key: str, default: bool) -> bool:
        path = join(self.path, key)
        if not self.has(key):
            return default
        value = self.value[key]
        if not isinstance(value, bool):
            self.problem(path, f"must be true or false, got {describe(value)}")
            return default
        return value

    def integer(
        self,
        key: str,
        default: int,
        *,
        minimum: int = 0,
        maximum: int | None = None,
        required: bool = False,
        what: str = "",
    ) -> int:
        path = join(self.path, key)
        if not self.has(key):
            if required:
                self.problem(path, "is required")
            return default
        return whole_number(
            self.value[key],
            path,
            self.problems,
            minimum=minimum,
            maximum=maximum,
            what=what,
            default=default,
        )

    def mapping(self, key: str, known: tuple[str, ...] | None) -> Section | None:
        """A nested map; `known=None` accepts any key (the caller checks them)."""
        path = join(self.path, key)
        if not self.has(key):
            return None
        value = self.value[key]
        if not isinstance(value, Mapping):
            self.problem(path, f"must be a map, got {describe(value)}")
            return None
        return Section(value, path, self.problems, known if known is not None else tuple(value))

    def items(self, key: str) -> Iterator[tuple[str, Any]]:
        """(path, value) per entry of a list."""
        path = join(self.path, key)
        if not self.has(key):
            return
        value = self.value[key]
        if not isinstance(value, list):
            self.problem(path, f"must be a list, got {describe(value)}")
            return
        for index, entry in enumerate(value):
            yield f"{path}[{index}]", entry

    def child(self, path: str, value: object, known: tuple[str, ...]) -> Section | None:
        if not isinstance(value, Mapping):
            self.problem(path, f"must be a map, got {describe(value)}")
            return None
        return Section(value, path, self.problems, known)

"""The config reader's rules for every string setting, and how it lists valid choices."""

from __future__ import annotations

import re

import pytest

from settings.errors import Problem
from settings.reader import MAX_LISTED_CHOICES, MAX_STRING_LENGTH, Section, choices_text


def _read(value: object, *, default: str = "", hint: str = "") -> tuple[str, list[str]]:
    problems: list[Problem] = []
    section = Section({"key": value}, "top", problems, ("key",))
    result = section.string("key", default, pattern=re.compile(r"[a-z0-9. ]+"), hint=hint)
    return result, [str(p) for p in problems]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "top.key: is empty: a hint"),
        (" abc", "top.key: ' abc' has leading or trailing whitespace; remove it"),
        ("abc\t", "top.key: 'abc\\t' holds a control or invisible character; remove it"),
        ("1.35\n", "top.key: '1.35\\n' holds a control or invisible character; remove it"),
        ("a\u200bb", "top.key: 'a\\u200bb' holds a control or invisible character; remove it"),
        (
            "a" * (MAX_STRING_LENGTH + 1),
            f"top.key: is {MAX_STRING_LENGTH + 1:,} characters long; no setting needs more "
            f"than {MAX_STRING_LENGTH}",
        ),
    ],
)
def test_every_string_setting_refuses_what_no_setting_means(value: str, message: str) -> None:
    assert _read(value, hint="a hint") == ("", [message])


def test_an_empty_string_with_a_default_names_it() -> None:
    assert _read("", default="x1") == (
        "x1",
        ["top.key: is empty; write a value, or remove the key for the default 'x1'"],
    )


def test_a_pattern_must_match_the_whole_value() -> None:
    assert _read("abc", hint="h") == ("abc", [])
    assert _read("abc!", hint="h") == ("", ["top.key: 'abc!' is not valid: h"])


def test_a_short_list_of_choices_is_shown_whole() -> None:
    choices = tuple(f"c{i}" for i in range(MAX_LISTED_CHOICES))
    assert choices_text("x", choices) == ", ".join(choices)
    assert choices_text("x", ()) == "(none)"


def test_a_long_list_of_choices_shows_the_closest_and_a_count() -> None:
    teams = [f"team-{i:04d}" for i in range(1000)]
    assert choices_text("team-0999x", teams) == (
        "team-0999, team-0998, team-0997 and 997 more (the closest shown)"
    )
    assert choices_text("", teams) == "team-0000, team-0001, team-0002 and 997 more"


def test_bytes_that_are_not_text_are_named_as_such() -> None:
    # A !!binary value whose bytes are not UTF-8 arrives as U+FFFD, as the Pulumi CLI passes it.
    assert _read("\ufffd", hint="h") == (
        "",
        [
            "top.key: '\ufffd' holds bytes that are not UTF-8 text (shown as \ufffd, as from a "
            "!!binary value); write the setting as plain text"
        ],
    )


def test_an_unknown_key_is_shown_cut_however_long() -> None:
    problems: list[Problem] = []
    Section({"k" * 200_000: 1}, "top", problems, ("key",))
    assert [p.path for p in problems] == ["top." + "k" * 60 + "...(200,000 characters)"]

"""The bounded YAML reading of a stack file: size, encoding, nesting and alias expansion."""

from __future__ import annotations

import codecs
import time

import pytest

from aksray.stackfile.bounded_yaml import (
    ALIAS_ALLOWANCE,
    MAX_NESTING,
    MAX_STACK_FILE_BYTES,
    StackFileError,
    load_stack_yaml,
)


def _refusal(data: bytes) -> str:
    with pytest.raises(StackFileError) as caught:
        load_stack_yaml(data, "Pulumi.x.yaml")
    assert caught.value.path == "Pulumi.x.yaml"
    return caught.value.message


def _nested(depth: int) -> bytes:
    """`depth` levels of maps below the document's own."""
    return "".join(" " * i + f"k{i}:\n" for i in range(depth)).encode() + b" " * depth + b"1\n"


def _bomb(levels: int) -> bytes:
    lines = ['l0: &l0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"l{n}: &l{n} [{','.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines).encode()


def test_a_file_larger_than_any_stack_file_is_refused_unread() -> None:
    message = _refusal(b"#" * (MAX_STACK_FILE_BYTES + 1))
    assert message.startswith(f"is {MAX_STACK_FILE_BYTES + 1:,} bytes, more than")


def test_a_file_at_the_size_limit_is_read() -> None:
    data = b"config: {}\n"
    assert load_stack_yaml(data + b"#" * (MAX_STACK_FILE_BYTES - len(data)), "x") == {"config": {}}


@pytest.mark.parametrize(
    ("bom", "encoding"),
    [
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
    ],
)
def test_utf16_and_utf32_are_named(bom: bytes, encoding: str) -> None:
    name = "UTF-32" if "32" in encoding else "UTF-16"
    message = _refusal(bom + "config: {}\n".encode(encoding))
    assert message == f"is {name} text; save it as UTF-8 (the Pulumi CLI reads only UTF-8)"


def test_a_non_utf8_byte_is_named_with_its_line() -> None:
    message = _refusal(b"config:\n  # caf\xe9\n")
    assert message.startswith("is not UTF-8 text (byte 0xe9 at line 2);")


def test_a_utf8_byte_order_mark_is_accepted() -> None:
    assert load_stack_yaml(codecs.BOM_UTF8 + b"config: {a: 1}\n", "x") == {"config": {"a": 1}}


def test_nesting_up_to_the_limit_is_read_and_one_level_more_refused() -> None:
    document = load_stack_yaml(_nested(MAX_NESTING - 1), "x")
    for level in range(MAX_NESTING - 1):
        document = document[f"k{level}"]
    assert document == 1
    message = _refusal(_nested(MAX_NESTING))
    assert message.endswith(f"nests deeper than {MAX_NESTING} levels; flatten it")


def test_aliases_that_repeat_a_little_are_fine() -> None:
    data = b"quota: &q {gpu: 1}\nteams: [{quota: *q}, {quota: *q}]\n"
    assert load_stack_yaml(data, "x")["teams"] == [{"quota": {"gpu": 1}}] * 2


def test_an_alias_bomb_is_refused_quickly_whatever_its_expansion() -> None:
    for levels in (6, 12):  # 9**6 = 531441 and 9**12 = 282 billion values
        started = time.perf_counter()
        data = _bomb(levels)
        message = _refusal(data)
        assert time.perf_counter() - started < 1.0
        assert message.startswith(
            f"its aliases (*name) expand to more than {len(data) + ALIAS_ALLOWANCE:,} values"
        )


def test_an_alias_that_contains_itself_is_refused() -> None:
    message = _refusal(b"a: &a [1, *a]\n")
    assert message == "at line 1, column 4: an alias (*name) refers to a value containing it"


def test_a_control_character_is_named_with_its_line() -> None:
    message = _refusal(b'a: 1\nb: "x\x1by"\n')
    assert message.startswith("holds a control character (0x1b) at line 2,")


def test_a_map_as_a_key_is_refused() -> None:
    assert "a key must be a plain value" in _refusal(b"? {a: 1}\n: 2\n")


def test_a_number_too_large_for_a_float_stays_text() -> None:
    # The Pulumi CLI's YAML reads what overflows a 64-bit float as text
    # (tests/stackfile/test_cli_reading.py
    # covers the other numbers).
    digits = "9" * 5000
    assert load_stack_yaml(f"n: {digits}\nm: 0x1F\n".encode(), "x") == {"n": digits, "m": 31}

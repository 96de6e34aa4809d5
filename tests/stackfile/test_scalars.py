"""The scalar rules of the Pulumi CLI's YAML reading (values confirmed against Pulumi 3.260.0:
tests/stackfile/test_cli_reading.py)."""

from __future__ import annotations

import math

import pytest

from aksray.stackfile.scalars import ScalarError, Timestamp, as_passed, number_text, plain_scalar


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("010", 8),
        ("-010", -8),
        ("0", 0),
        ("0x1F", 31),
        ("0X1f", 31),
        ("0o17", 15),
        ("0b101", 5),
        ("1_000", 1000),
        ("0_10", 8),
        ("+5", 5),
        ("08", 8.0),  # not octal, so a float
        ("9223372036854775807", 2**63 - 1),
        ("18446744073709551615", 2**64 - 1),  # unsigned 64-bit
        ("-9223372036854775809", -9.223372036854776e18),  # beyond: a float
        ("1e3", 1000.0),
        (".5", 0.5),
        ("1e400", "1e400"),  # overflows a float: text
        ("0x", "0x"),
        ("1e", "1e"),
        ("_1", "_1"),
        ("12:30", "12:30"),
        ("+10:00", "+10:00"),
        ("yes", "yes"),
        ("True", True),
        ("FALSE", False),
        ("Null", None),
        ("~", None),
        ("", None),
    ],
)
def test_a_plain_scalar_reads_as_go_reads_it(text: str, read: object) -> None:
    value = plain_scalar(text)
    assert value == read and type(value) is type(read)


def test_infinity_and_nan_read_but_cannot_pass() -> None:
    assert plain_scalar(".inf") == math.inf and plain_scalar("-.Inf") == -math.inf
    assert math.isnan(plain_scalar(".NaN"))  # type: ignore[arg-type]
    with pytest.raises(ScalarError):
        as_passed(math.inf)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("2024-01-01", "2024-01-01 00:00:00 +0000 UTC"),
        ("2024-1-2", "2024-01-02 00:00:00 +0000 UTC"),
        ("2024-1-2t3:4:5.120Z", "2024-01-02 03:04:05.12 +0000 UTC"),
        ("2024-01-02 03:04:05", "2024-01-02 03:04:05 +0000 UTC"),
        ("2024-01-02T03:04:05+02:30", "2024-01-02 03:04:05 +0230 +0230"),
        ("2024-01-02T03:04:05-00:00", "2024-01-02 03:04:05 +0000 UTC"),
    ],
)
def test_a_timestamp_prints_as_go_prints_a_time(text: str, printed: str) -> None:
    assert plain_scalar(text) == Timestamp(printed)


@pytest.mark.parametrize("text", ["2024-02-30", "2024-01-02T24:00:00Z", "2024-01-02T03:04:05"])
def test_what_is_not_a_valid_time_stays_text(text: str) -> None:
    assert plain_scalar(text) == text


@pytest.mark.parametrize(
    ("value", "passed"),
    [(5.0, 5), (-0.0, 0), (1e20, 10**20), (1.8446744073709552e19, 18446744073709552000)],
)
def test_a_whole_float_passes_as_an_int(value: float, passed: int) -> None:
    assert as_passed(value) == passed and type(as_passed(value)) is int


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (8, "8"),
        (5.0, "5"),
        (2.5, "2.5"),
        (1e6, "1000000"),
        (1e-7, "1e-7"),
        (1.5e-5, "0.000015"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (123456789.125, "123456789.125"),
    ],
)
def test_a_number_setting_is_passed_as_go_json_writes_it(value: float, text: str) -> None:
    assert number_text(value) == text

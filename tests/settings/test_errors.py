"""Problems print bounded: long keys cut, long lines cut, many problems of a kind counted."""

from __future__ import annotations

from settings.errors import (
    MAX_LINE,
    MAX_PROBLEM_LINES,
    MAX_SHOWN,
    PER_KIND,
    Problem,
    SettingsError,
    bounded,
    problem_lines,
    shown,
)


def test_a_long_key_is_shown_cut_with_its_length() -> None:
    assert shown("a" * MAX_SHOWN) == "a" * MAX_SHOWN
    assert shown("k" * 200_000) == "k" * (MAX_SHOWN - 20) + "...(200,000 characters)"


def test_a_long_line_keeps_its_start_and_its_end() -> None:
    line = "path: " + "x" * 10_000 + " fix it this way"
    cut = bounded(line)
    assert len(cut) < MAX_LINE + 50
    assert cut.startswith("path: xxx") and cut.endswith("x fix it this way")
    assert "characters left out" in cut
    assert str(Problem("p", "y" * 50_000)).startswith("p: yyy")
    assert len(str(Problem("p", "y" * 50_000))) < MAX_LINE + 50


def test_problems_of_one_kind_past_the_limit_are_counted_in_one_line() -> None:
    problems = [
        Problem(f"scheduling.departments[{d}].teams[{t}].quota.a100.gpu", "must be >= 0")
        for d in range(100)
        for t in range(100)
    ]
    lines = problem_lines(problems)
    assert lines[:PER_KIND] == [str(p) for p in problems[:PER_KIND]]
    assert lines[PER_KIND:] == [
        f"scheduling.departments[i].teams[i].quota.a100.gpu: {10_000 - PER_KIND:,} more like "
        "the above at this path (other list entries), not shown"
    ]


def test_many_kinds_are_capped_in_all_and_the_rest_counted() -> None:
    problems = [Problem(f"cluster.key{n}", "unknown key") for n in range(1000)]
    lines = problem_lines(problems)
    assert lines[:MAX_PROBLEM_LINES] == [str(p) for p in problems[:MAX_PROBLEM_LINES]]
    assert len(lines) == MAX_PROBLEM_LINES + PER_KIND + 1
    assert lines[-1] == (
        f"config: {1000 - MAX_PROBLEM_LINES - PER_KIND:,} more problems at "
        f"{1000 - MAX_PROBLEM_LINES - PER_KIND:,} other paths, not shown"
    )


def test_the_error_pulumi_up_prints_is_bounded_too() -> None:
    problems = [Problem(f"x[{n}]", "bad") for n in range(10_000)]
    message = str(SettingsError(problems))
    assert message.splitlines()[0] == "the stack configuration has 10,000 problems:"
    assert len(message.splitlines()) == 1 + PER_KIND + 1

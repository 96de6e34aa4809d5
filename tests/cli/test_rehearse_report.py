"""A rehearsal on a terminal prints its timeline once: as it happens (progress on stderr), and
the report on the same terminal says so instead of printing it again; piped, the report has it."""

from __future__ import annotations

import io

from aksray.cli.rehearse import timeline_shown_live
from aksray.rehearse.record import TimelineEvent, Verdict
from aksray.rehearse.report import text_lines
from aksray.rehearse.run import ScenarioResult


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


RESULT = ScenarioResult(
    "dev",
    "submit-all",
    {"kueue": "v0.19.2"},
    events=[TimelineEvent(1.5, "qwen-lora", "admitted", "a100"), TimelineEvent(2.0, "x", "y", "")],
    invariants=[Verdict("gang-all-or-nothing")],
)


def test_the_timeline_goes_to_a_pipe_in_full() -> None:
    lines = text_lines([RESULT])
    assert lines[lines.index("  timeline:") + 1 :][:2] == [
        "    t=+1.5s qwen-lora admitted a100",
        "    t=+2.0s x y",
    ]


def test_a_timeline_shown_live_is_not_printed_twice() -> None:
    lines = text_lines([RESULT], timeline_shown=True)
    assert "  timeline: 2 event(s), shown above as they happened" in lines
    assert not any("qwen-lora admitted" in line for line in lines)


def test_shown_live_only_where_both_streams_are_the_terminal() -> None:
    tty, pipe = _Terminal(), io.StringIO()
    assert timeline_shown_live(tty, tty, multikueue=False)
    assert not timeline_shown_live(pipe, tty, multikueue=False)  # the report to a file: in full
    assert not timeline_shown_live(tty, pipe, multikueue=False)  # no progress printed
    assert not timeline_shown_live(tty, tty, multikueue=True)  # MultiKueue prints steps only

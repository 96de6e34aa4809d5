"""The rehearsal's timeline and verdicts, as text lines or the `--json` document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aksray.rehearse.run import ScenarioResult


def text_lines(results: Sequence[ScenarioResult], *, timeline_shown: bool = False) -> list[str]:
    """The report. `timeline_shown`: each event was printed as it happened on the terminal the
    report goes to (aksray/cli/rehearse.py), so it is not printed a second time."""
    lines: list[str] = []
    for result in results:
        lines.append(f"Rehearsal of {result.stack}: {result.scenario} ({result.seconds:.0f}s)")
        versions = ", ".join(f"{name} {version}" for name, version in result.controllers.items())
        lines.append(f"  controllers: {versions}")
        for note in result.notes:
            lines.append(f"  note: {note}")
        if timeline_shown:
            count = len(result.events)
            lines.append(f"  timeline: {count} event(s), shown above as they happened")
        else:
            lines.append("  timeline:")
            lines += [f"    {event.line()}" for event in result.events]
        lines.append("  invariants:")
        for verdict in result.invariants:
            text = verdict.inapplicable_why if verdict.applicable is False else verdict.detail
            detail = f": {text}" if text else ""
            lines.append(f"    {verdict.mark:6} {verdict.name}{detail}")
        lines.append("")
    return lines


def json_document(results: Sequence[ScenarioResult]) -> Any:
    documents = [r.as_json() for r in results]
    return documents[0] if len(documents) == 1 else documents

"""The rehearsal's timeline and verdicts, as text lines or the `--json` document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aksray.rehearse.run import ScenarioResult


def text_lines(results: Sequence[ScenarioResult]) -> list[str]:
    lines: list[str] = []
    for result in results:
        lines.append(f"Rehearsal of {result.stack}: {result.scenario} ({result.seconds:.0f}s)")
        versions = ", ".join(f"{name} {version}" for name, version in result.controllers.items())
        lines.append(f"  controllers: {versions}")
        for note in result.notes:
            lines.append(f"  note: {note}")
        lines.append("  timeline:")
        lines += [f"    {event.line()}" for event in result.events]
        lines.append("  invariants:")
        for verdict in result.invariants:
            mark = "held" if verdict.held else "BROKEN"
            detail = f": {verdict.detail}" if verdict.detail else ""
            lines.append(f"    {mark:6} {verdict.name}{detail}")
        lines.append("")
    return lines


def json_document(results: Sequence[ScenarioResult]) -> Any:
    documents = [r.as_json() for r in results]
    return documents[0] if len(documents) == 1 else documents

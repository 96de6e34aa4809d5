"""The `--json` document and the stack outputs are documented key by key, and the keys the docs
name are the ones the plan prints (docs/planner.md, README's Deploying)."""

from __future__ import annotations

import json
import re
from typing import Any, Final

import pytest

from aksray.offline.runner import PROJECT_ROOT
from tests.support.harness import cli

PLANNER: Final = (PROJECT_ROOT / "docs" / "planner.md").read_text(encoding="utf-8")
STACKS: Final = ("dev", "prod", "local", "multiregion")


def _document(stack: str) -> dict[str, Any]:
    run = cli("plan", "--stack", stack, "--json")
    assert run.stdout, run.stderr
    document: dict[str, Any] = json.loads(run.stdout)
    return document


def _section(heading: str) -> str:
    start = PLANNER.index(f"\n## {heading}\n")
    end = PLANNER.find("\n## ", start + 1)
    return PLANNER[start : end if end != -1 else len(PLANNER)]


def _rows(section: str) -> list[dict[str, str]]:
    """Every table row of a section: {key: its `holds` cell}."""
    tables: list[dict[str, str]] = []
    for block in re.split(r"\n(?!\|)", section):
        rows = [line for line in block.splitlines() if line.startswith("| `")]
        if rows:
            tables.append(
                {re.sub(r"[`|]", "", r.split("|")[1]).strip(): r.split("|", 2)[2] for r in rows}
            )
    return tables


def _names(text: str) -> set[str]:
    return set(re.findall(r"`([A-Za-z]\w*)`", text))


def _fields(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return set().union(*(set(item) for item in value))
    return set()


def test_every_key_of_the_document_and_its_summary_is_documented() -> None:
    top, summary = _rows(_section("The JSON document"))[:2]
    document = _document("prod")
    assert set(top) == set(document)
    assert set(summary) == set(document["summary"])
    for key, value in document["summary"].items():
        assert _fields(value) <= _names(summary[key]), key
    steps = document["summary"]["criticalPath"]["steps"]
    assert _fields(steps) <= _names(summary["criticalPath"])


def test_the_multiregion_document_is_documented() -> None:
    section = _section("The JSON document")
    paragraph = section[section.index("A stack with `multikueue`") :]
    document = _document("multiregion")
    summary = document["summary"]
    assert set(summary) <= _names(paragraph)
    for key in ("clusters", "quotas", "workloads"):
        assert _fields(summary[key]) <= _names(paragraph), key
    assert "workerClusters" in document["outputs"] and "`workerClusters`" in paragraph


@pytest.mark.parametrize("stack", STACKS)
def test_the_readme_lists_every_stack_output(stack: str) -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("Stack outputs:")
    listed = _names(readme[start : readme.index("\n\n", start)])
    assert set(_document(stack)["outputs"]) <= listed

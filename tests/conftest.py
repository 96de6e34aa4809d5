"""Tests marked `reference` validate against the upstream reference data (aksray/reference.py).
Without it they do not run, and one line says how to get it; every other test still runs.
AKSRAY_REQUIRE_REFERENCE=1 (CI) makes a missing reference a failure instead."""

from __future__ import annotations

import os
from typing import Final

import pytest

from aksray.reference import HOW_TO_GET, REFERENCE_ENV
from tests.support.reference import REFERENCE_FOUND

REQUIRE_ENV: Final = "AKSRAY_REQUIRE_REFERENCE"
_LEFT_OUT = pytest.StashKey[int]()


def _where() -> str:
    configured = os.environ.get(REFERENCE_ENV)
    return f"none under {REFERENCE_ENV}={configured}" if configured else "none found"


def pytest_sessionstart(session: pytest.Session) -> None:
    if REFERENCE_FOUND is None and os.environ.get(REQUIRE_ENV) == "1":
        pytest.exit(
            f"the upstream reference data is required ({REQUIRE_ENV}=1) but there is "
            f"{_where()}: {HOW_TO_GET}",
            returncode=1,
        )
    session.config.stash[_LEFT_OUT] = 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if REFERENCE_FOUND is not None:
        return
    left_out = [item for item in items if item.get_closest_marker("reference")]
    if left_out:
        items[:] = [item for item in items if not item.get_closest_marker("reference")]
        config.hook.pytest_deselected(items=left_out)
        config.stash[_LEFT_OUT] = len(left_out)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    count = terminalreporter.config.stash.get(_LEFT_OUT, 0)
    if count:
        terminalreporter.write_line(
            f"skipped {count} upstream-conformance tests: no upstream reference data "
            f"({_where()}); {HOW_TO_GET}"
        )

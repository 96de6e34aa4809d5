"""Tests marked `reference` validate against the upstream reference data (aksray/reference.py).
Without it they do not run, and one line says how many were left out and how to get it; every
other test still runs. AKSRAY_REQUIRE_REFERENCE=1 (CI) makes a missing reference a failure instead.

Every test that reads the reference data must be marked: while an unmarked test runs (its
fixtures included), opening or listing anything in the reference folder fails that test at once,
so an unmarked reader shows up in every run that has the data, and CI also runs the suite in a
clone without it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from typing import Any, Final

import pytest

from aksray.reference import FETCHED, HOW_TO_GET, REFERENCE_ENV
from tests.support.reference import REFERENCE_FOUND

REQUIRE_ENV: Final = "AKSRAY_REQUIRE_REFERENCE"
MARKER: Final = "reference"
_LEFT_OUT = pytest.StashKey[int]()
# The folders that hold reference data here, as given and as resolved.
_GUARDED: Final = tuple(
    {
        os.path.join(str(path), "")
        for folder in (REFERENCE_FOUND, FETCHED)
        if folder is not None
        for path in (folder, folder.resolve())
    }
)
_AUDITED: Final = frozenset({"open", "os.listdir", "os.scandir"})


class UnmarkedReferenceReadError(AssertionError):
    """An unmarked test read the upstream reference data."""


class _Guard:
    test: str | None = None  # the unmarked test running now, if any


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _Guard.test is None or event not in _AUDITED or not args:
        return
    target = args[0]
    if not isinstance(target, str | os.PathLike):
        return  # a file descriptor, or bytes: never a path we hand out
    path = os.path.abspath(os.fspath(target))
    if os.path.join(path, "").startswith(_GUARDED):
        test, _Guard.test = _Guard.test, None  # report once; pytest may read files while failing
        raise UnmarkedReferenceReadError(
            f"{test} reads the upstream reference data ({path}) but is not marked: add "
            f"@pytest.mark.{MARKER}, or a clone without the data fails this test"
        )


sys.addaudithook(_audit)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    _Guard.test = None if item.get_closest_marker(MARKER) else item.nodeid
    try:
        return (yield)
    finally:
        _Guard.test = None


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
    left_out = [item for item in items if item.get_closest_marker(MARKER)]
    if left_out:
        items[:] = [item for item in items if not item.get_closest_marker(MARKER)]
        config.hook.pytest_deselected(items=left_out)
        config.stash[_LEFT_OUT] = len(left_out)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    count = terminalreporter.config.stash.get(_LEFT_OUT, 0)
    if count:
        terminalreporter.write_line(
            f"skipped {count} upstream-conformance tests: no upstream reference data "
            f"({_where()}); {HOW_TO_GET}"
        )

"""Fail the whole run at once, with the fix, when the upstream reference data is missing."""

from __future__ import annotations

import pytest

from tests.support.reference import REFERENCE


def pytest_sessionstart(session: pytest.Session) -> None:
    del session
    if not (REFERENCE / "crds").is_dir() or not (REFERENCE / "charts").is_dir():
        pytest.exit(
            f"the upstream reference data is missing: no crds/ and charts/ under {REFERENCE}; "
            "the conformance tests validate against it. Put the reference folder beside the "
            "checkout (../shared/reference) or point AKSRAY_REFERENCE at it.",
            returncode=1,
        )

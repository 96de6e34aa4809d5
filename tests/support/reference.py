"""Where the upstream reference data lives: light enough for every test environment to import
(the payload tier has no Pulumi)."""

from __future__ import annotations

from pathlib import Path

from aksray.reference import FETCHED, chart_dir, crds_dir, locate

# The upstream contracts (Kueue, KubeRay and KAI CRDs; the pinned charts) the conformance tests
# validate against: reference data kept outside the repository (aksray/reference.py). Tests that
# read it are marked `reference`; without it they do not run (tests/conftest.py).
REFERENCE_FOUND = locate()
REFERENCE = REFERENCE_FOUND or FETCHED


def chart(name: str) -> Path:
    """The whole pinned chart `name` (its release's chart name) in the reference."""
    return chart_dir(REFERENCE, name)


def crds(project: str) -> Path:
    """The pinned CRDs of `project` (kueue, kuberay, kai) in the reference."""
    return crds_dir(REFERENCE, project)

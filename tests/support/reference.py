"""Where the upstream reference data lives: light enough for every test environment to import
(the payload tier has no Pulumi)."""

from __future__ import annotations

from aksray.reference import FETCHED, locate

# The upstream contracts (Kueue, KubeRay and KAI CRDs; the charts' values.yaml) the conformance
# tests validate against: reference data kept outside the repository (aksray/reference.py).
# Tests that read it are marked `reference`; without it they do not run (tests/conftest.py).
REFERENCE_FOUND = locate()
REFERENCE = REFERENCE_FOUND or FETCHED

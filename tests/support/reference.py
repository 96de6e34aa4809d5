"""Where the upstream reference data lives: light enough for every test environment to import
(the payload tier has no Pulumi)."""

from __future__ import annotations

import os
from pathlib import Path

# The upstream contracts (Kueue, KubeRay and KAI CRDs; the charts' values.yaml) the conformance
# tests validate against. They are reference data kept beside the checkout, never in it:
# `../shared/reference`, or wherever AKSRAY_REFERENCE points.
REFERENCE = Path(
    os.environ.get("AKSRAY_REFERENCE")
    or Path(__file__).resolve().parents[2].parent / "shared" / "reference"
)

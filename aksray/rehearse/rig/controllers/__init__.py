"""The controllers a rig runs on its control plane, one module each: Kueue, KAI, the KubeRay
operator.

A module here is a controller (aksray/rehearse/rig/controller.py): it declares `NAME` (how
reports name it), `ORDER` (the rig starts controllers in rising order), `BUILD` (what
`make rig` builds), `crds(data)` (the CRDs applied before any controller starts) and
`start(launch)`. Adding a controller is one new module here and its version pin in
scripts/rig/versions.env; the build, the toolchain check, the bring-up and the reports find it.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def controllers() -> list[ModuleType]:
    """Every controller module, in start order."""
    found = [
        importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(__path__)
    ]
    return sorted((m for m in found if hasattr(m, "BUILD")), key=lambda m: int(m.ORDER))

"""The Pulumi project's name: stack-file keys read `aks-ray-platform:<key>`, and every object the
stack manages says it is managed by it."""

from __future__ import annotations

from typing import Final

PROJECT: Final = "aks-ray-platform"

"""The project's build backend: setuptools for the editable install `make install` makes (uv
installs the project into .venv that way), and a refusal for a wheel or an sdist.

aks-ray-platform runs from its checkout only: `aksray` finds the Pulumi program (`__main__.py`),
`Pulumi.yaml`, the stack files, the dashboards and the policy pack beside its own package, and
`pulumi up` runs in that folder. An installed wheel would hold the packages without any of them
and fail at its first command, so none is built.
"""

from __future__ import annotations

from typing import Any, NoReturn

from setuptools import build_meta as _setuptools

REFUSAL = (
    "aks-ray-platform runs from its checkout only (git clone, then `make install`): a wheel or "
    "an sdist would lack the Pulumi program, Pulumi.yaml and the stack files, so none is built"
)

# What an editable install (PEP 660) asks for, and the metadata every frontend reads.
get_requires_for_build_editable = _setuptools.get_requires_for_build_editable
prepare_metadata_for_build_editable = _setuptools.prepare_metadata_for_build_editable


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' editable install in its `compat` mode: a .pth file that puts the checkout on
    the path, so a package added to the checkout (a `git pull`) imports without reinstalling;
    the default mode maps only the packages found at install time."""
    settings = {"editable_mode": "compat", **(config_settings or {})}
    return str(_setuptools.build_editable(wheel_directory, settings, metadata_directory))


get_requires_for_build_wheel = _setuptools.get_requires_for_build_wheel
prepare_metadata_for_build_wheel = _setuptools.prepare_metadata_for_build_wheel
get_requires_for_build_sdist = _setuptools.get_requires_for_build_sdist


def build_wheel(wheel_directory: str, *args: Any, **kwargs: Any) -> NoReturn:
    raise SystemExit(f"error: {REFUSAL}")


def build_sdist(sdist_directory: str, *args: Any, **kwargs: Any) -> NoReturn:
    raise SystemExit(f"error: {REFUSAL}")

"""Where the upstream reference data is: the pinned CRDs and charts, kept outside the code.

The conformance tests validate what the program renders against them, and `aksray rehearse`
installs the shipped CRDs from them. They are never part of the repository: `make reference`
fetches each file from its official release location (or copies it from the folder
AKSRAY_REFERENCE names), checked against its digest in scripts/reference/files.tsv, into
.cache/reference/.

Looked for only where the user puts it: the folder (or `file://` URL) AKSRAY_REFERENCE names, or
else what `make reference` fetched.

Inside a reference folder each project's CRDs sit in `crds/<project>/` and each chart, whole, in
`charts/<chart>/`; KubeRay's, kept at more than one version, sit below `kuberay-v<version>/`, and
the version the platform ships is the one read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlparse

from catalog.versions import CHARTS, KUBERAY_OPERATOR

PROJECT_ROOT: Final = Path(__file__).resolve().parents[1]
REFERENCE_ENV: Final = "AKSRAY_REFERENCE"
FETCHED: Final = PROJECT_ROOT / ".cache" / "reference"  # what `make reference` writes
HOW_TO_GET: Final = (
    "run `make reference` (fetches the pinned upstream CRDs and charts and checks their "
    "digests), or set AKSRAY_REFERENCE to a folder that holds them"
)
# The projects whose CRDs the reference holds (crds/<project>/).
CRD_PROJECTS: Final = ("kueue", "kuberay", "kai")
_KUBERAY_FOLDER: Final = f"kuberay-v{KUBERAY_OPERATOR.version}"
_VERSIONED: Final = {"kuberay": _KUBERAY_FOLDER, KUBERAY_OPERATOR.chart: _KUBERAY_FOLDER}


def as_folder(source: str) -> Path:
    """A folder named as a path or as a `file://` URL."""
    if source.startswith("file://"):
        return Path(unquote(urlparse(source).path))
    return Path(source)


def crds_dir(base: Path, project: str) -> Path:
    """The CRDs of one project (`kueue`, `kuberay`, `kai`) at the version the platform ships."""
    return base / _VERSIONED.get(project, "") / "crds" / project


def chart_dir(base: Path, chart: str) -> Path:
    """One whole chart, at the version the platform ships."""
    return base / _VERSIONED.get(chart, "") / "charts" / chart


def has_reference(folder: Path) -> bool:
    """Whether `folder` holds every project's CRDs and every chart at the pinned versions (a copy
    made for older pins does not count: `make reference` brings it up to date)."""
    return all(crds_dir(folder, project).is_dir() for project in CRD_PROJECTS) and all(
        chart_dir(folder, chart.chart).is_dir() for chart in CHARTS
    )


def locate(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The reference folder to use, or None when there is none. A folder AKSRAY_REFERENCE names
    is the only one looked at: a wrong setting never falls back to another copy."""
    configured = environ.get(REFERENCE_ENV)
    folder = as_folder(configured) if configured else FETCHED
    return folder if has_reference(folder) else None

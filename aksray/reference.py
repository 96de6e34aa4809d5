"""Where the upstream reference data is: the pinned CRDs and chart files, kept outside the code.

The conformance tests validate what the program renders against them, and `aksray rehearse`
installs the shipped CRDs from them. They are never part of the repository: `make reference`
fetches each from its official release location (or copies it from the folder AKSRAY_REFERENCE
names), checked against its digest in scripts/reference/files.tsv, into .cache/reference/.

Looked for, in order: the folder (or `file://` URL) AKSRAY_REFERENCE names, then what
`make reference` fetched, then a `shared/reference` folder beside the checkout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlparse

PROJECT_ROOT: Final = Path(__file__).resolve().parents[1]
REFERENCE_ENV: Final = "AKSRAY_REFERENCE"
FETCHED: Final = PROJECT_ROOT / ".cache" / "reference"  # what `make reference` writes
BESIDE: Final = PROJECT_ROOT.parent / "shared" / "reference"
HOW_TO_GET: Final = (
    "run `make reference` (fetches the pinned upstream CRDs and chart values and checks their "
    "digests), or set AKSRAY_REFERENCE to a folder that holds them"
)


def as_folder(source: str) -> Path:
    """A folder named as a path or as a `file://` URL."""
    if source.startswith("file://"):
        return Path(unquote(urlparse(source).path))
    return Path(source)


def has_reference(folder: Path) -> bool:
    return (folder / "crds").is_dir() and (folder / "charts").is_dir()


def locate(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The reference folder to use, or None when there is none. A folder AKSRAY_REFERENCE names
    is the only one looked at: a wrong setting never falls back to another copy."""
    configured = environ.get(REFERENCE_ENV)
    candidates = [as_folder(configured)] if configured else [FETCHED, BESIDE]
    return next((folder for folder in candidates if has_reference(folder)), None)

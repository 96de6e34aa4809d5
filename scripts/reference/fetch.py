"""`make reference`: the pinned upstream files the conformance tests and `aksray rehearse` read.

Each file listed in files.tsv (the CRDs of Kueue, KubeRay and KAI, and every file of each pinned
chart's directory at its release tag) is fetched from its official location, or copied from the
folder (a path or a `file://` URL) that AKSRAY_REFERENCE or `--from` names, checked against its
SHA-256 and written to .cache/reference/ (aksray/reference.py looks there). A file already there
with the right digest is kept, so a second run needs no network. A digest that differs is an
error: nothing unchecked is ever written. The files stay outside the repository.

    .venv/bin/python scripts/reference/fetch.py                      # from the official locations
    AKSRAY_REFERENCE=/path/to/reference .venv/bin/python scripts/reference/fetch.py
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from aksray.reference import FETCHED, REFERENCE_ENV, as_folder

MANIFEST: Final = Path(__file__).with_name("files.tsv")
TIMEOUT_SECONDS: Final = 60
# The first file is tried alone, sooner given up: a machine without network hears so once,
# not in a line per file after minutes of timeouts.
PROBE_TIMEOUT_SECONDS: Final = 15
MAX_PROBLEM_LINES: Final = 10
# Files read at once: a few hundred small files, from one host.
PARALLEL: Final = 8


@dataclass(frozen=True)
class Pinned:
    path: str  # under the reference folder
    sha256: str
    url: str  # the official location


def read_manifest(manifest: Path = MANIFEST) -> list[Pinned]:
    entries = []
    for line in manifest.read_text().splitlines():
        if line and not line.startswith("#"):
            path, sha256, url = line.split("\t")
            entries.append(Pinned(path, sha256, url))
    return entries


def _source(entry: Pinned, base: str | None) -> str:
    """Where to read one file: under the folder `base` names, or its official location."""
    if base is None:
        return entry.url
    return (as_folder(base).resolve() / entry.path).as_uri()


def _read(url: str, timeout: float = TIMEOUT_SECONDS) -> bytes:
    if not url.startswith(("https://", "file://")):
        raise ValueError(f"not an https or file URL: {url}")
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - checked
        data: bytes = response.read()
    return data


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fetch_one(entry: Pinned, base: str | None, dest: Path) -> tuple[int, str | None]:
    """(1 if written else 0, the problem if any) for one file."""
    target = dest / entry.path
    if _present(entry, dest):
        return 0, None
    url = _source(entry, base)
    try:
        data = _read(url)
    except (OSError, URLError, ValueError) as exc:
        return 0, f"{entry.path}: cannot read {url} ({exc})"
    if _digest(data) != entry.sha256:
        return 0, (
            f"{entry.path}: {url} has sha256 {_digest(data)}, not the pinned {entry.sha256}: "
            "not the upstream file at the pinned tag"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(data)
    partial.replace(target)
    return 1, None


def fetch(entries: list[Pinned], base: str | None, dest: Path) -> tuple[int, list[str]]:
    """(files fetched, problems in the manifest's order); a file already in `dest` with its
    digest is left as it is."""
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        results = list(pool.map(lambda entry: _fetch_one(entry, base, dest), entries))
    return sum(written for written, _ in results), [p for _, p in results if p is not None]


def _present(entry: Pinned, dest: Path) -> bool:
    target = dest / entry.path
    return target.is_file() and _digest(target.read_bytes()) == entry.sha256


def cannot_start(missing: list[Pinned], total: int, base: str | None) -> str | None:
    """Why no file can be had at all, in one line, or None: a folder to copy from that is not
    there, or official locations that do not answer the first try (no network)."""
    if not missing:
        return None
    if base is not None:
        folder = as_folder(base)
        if folder.is_dir():
            return None
        return (
            f"make reference: {base} (--from, or {REFERENCE_ENV}) is not a folder: name the "
            f"folder that holds the reference data, or leave {REFERENCE_ENV} unset to fetch it"
        )
    first = missing[0]
    try:
        _read(first.url, timeout=PROBE_TIMEOUT_SECONDS)
    except HTTPError:
        return None  # the host answers: each file is judged in its turn
    except (OSError, URLError) as exc:
        reason = exc.reason if isinstance(exc, URLError) else exc
        reason = getattr(reason, "strerror", None) or reason
        host = urlsplit(first.url).hostname
        return (
            f"make reference: cannot reach {host} ({reason}): none of the {total} upstream "
            "files was fetched. Without network, copy them from a folder that holds them (a "
            ".cache/reference/ made where there is network): "
            f"{REFERENCE_ENV}=/path/to/reference make reference"
        )
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--from",
        dest="base",
        default=os.environ.get(REFERENCE_ENV) or None,
        help=f"a folder or file:// URL to copy from (default: ${REFERENCE_ENV}, else the "
        "official locations)",
    )
    parser.add_argument("--dest", type=Path, default=FETCHED, help="where to write")
    args = parser.parse_args(argv)
    entries = read_manifest()
    stop = cannot_start([e for e in entries if not _present(e, args.dest)], len(entries), args.base)
    if stop:
        print(stop, file=sys.stderr)
        return 1
    fetched, problems = fetch(entries, args.base, args.dest)
    for problem in problems[:MAX_PROBLEM_LINES]:
        print(f"error: {problem}", file=sys.stderr)
    if len(problems) > MAX_PROBLEM_LINES:
        print(
            f"error: ... and {len(problems) - MAX_PROBLEM_LINES} more like these", file=sys.stderr
        )
    if problems:
        print(f"make reference: {len(problems)} of {len(entries)} files failed", file=sys.stderr)
        return 1
    origin = args.base or "their official locations"
    if fetched == len(entries):
        how = f"all from {origin}"
    elif fetched:
        how = f"{fetched} from {origin}, the rest already there"
    else:
        how = "all already there"
    print(
        f"make reference: {len(entries)} upstream files in {args.dest}, each matching its "
        f"sha256 ({how})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

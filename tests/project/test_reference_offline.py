"""`make reference` where the upstream hosts cannot be reached: one line that says so and how to
copy the data from a folder instead (AKSRAY_REFERENCE), after one try, not a line per file; and
many problems stay readable. No test touches the network: the reader is replaced."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError

import pytest

from tests.support.scripts import load_script

fetch = load_script("reference/fetch")  # what `make reference` runs
ENTRIES = fetch.read_manifest()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.delenv("AKSRAY_REFERENCE", raising=False)
    return []


def test_no_network_is_one_line_after_one_try(
    reads: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    def unreachable(url: str, timeout: float = 0) -> bytes:
        reads.append(url)
        raise URLError(socket.gaierror(-3, "Temporary failure in name resolution"))

    monkeypatch.setattr(fetch, "_read", unreachable)
    assert fetch.main(["--dest", str(tmp_path / "ref")]) == 1
    assert len(reads) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"make reference: cannot reach {ENTRIES[0].url.split('/')[2]} (Temporary failure in "
        f"name resolution): none of the {len(ENTRIES)} upstream files was fetched. Without "
        "network, copy them from a folder that holds them (a .cache/reference/ made where "
        "there is network): AKSRAY_REFERENCE=/path/to/reference make reference"
    ]
    assert not (tmp_path / "ref").exists()


def test_a_folder_to_copy_from_that_is_not_there_is_one_line(
    reads: list[str], tmp_path: Path, capsys: Any
) -> None:
    gone = tmp_path / "gone"
    assert fetch.main(["--from", str(gone), "--dest", str(tmp_path / "ref")]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"make reference: {gone} (--from, or AKSRAY_REFERENCE) is not a folder: name the "
        "folder that holds the reference data, or leave AKSRAY_REFERENCE unset to fetch it"
    ]


def test_a_server_that_answers_is_reachable_and_each_file_is_judged(
    reads: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    """An HTTP error is an answer: the files are each tried, and the problems stay readable
    (at most ten lines, then how many more)."""

    def not_found(url: str, timeout: float = 0) -> bytes:
        reads.append(url)
        raise HTTPError(url, 404, "Not Found", {}, None)  # type: ignore[arg-type]

    monkeypatch.setattr(fetch, "_read", not_found)
    assert fetch.main(["--dest", str(tmp_path / "ref")]) == 1
    assert len(reads) == len(ENTRIES) + 1  # the first one tried twice: the probe, then its turn
    err = capsys.readouterr().err.splitlines()
    assert len(err) == fetch.MAX_PROBLEM_LINES + 2
    assert err[0].startswith(f"error: {ENTRIES[0].path}: cannot read {ENTRIES[0].url}")
    assert err[-2] == f"error: ... and {len(ENTRIES) - fetch.MAX_PROBLEM_LINES} more like these"
    assert err[-1] == f"make reference: {len(ENTRIES)} of {len(ENTRIES)} files failed"

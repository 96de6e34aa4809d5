"""The upstream reference data: where the tests find it, how `make reference` gets it (checked
against the digests kept in the repository), and a clone without it still passing its tests."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aksray.offline.runner import PROJECT_ROOT
from aksray.reference import CRD_PROJECTS, FETCHED, chart_dir, crds_dir, has_reference, locate
from catalog.versions import CHARTS, GPU_OPERATOR, KAI_SCHEDULER, KUBERAY_OPERATOR, KUEUE
from tests.support.reference import REFERENCE
from tests.support.scripts import load_script

fetch = load_script("reference/fetch")  # what `make reference` runs

ENTRIES = fetch.read_manifest()
PATHS = {e.path for e in ENTRIES}
# The repository of each pinned project and the git tag of its pinned chart.
TAGS = {
    "kubernetes-sigs/kueue": f"v{KUEUE.version}",
    "ray-project/kuberay": f"ray-operator/v{KUBERAY_OPERATOR.version}",
    "kai-scheduler/KAI-Scheduler": KAI_SCHEDULER.version,
    "NVIDIA/gpu-operator": GPU_OPERATOR.version,
}


def test_every_file_is_pinned_to_the_charts_tag_with_a_digest() -> None:
    assert len(PATHS) == len(ENTRIES) == 301
    for entry in ENTRIES:
        assert re.fullmatch(r"[0-9a-f]{64}", entry.sha256), entry.path
        found = re.fullmatch(
            r"https://raw\.githubusercontent\.com/([^/]+/[^/]+)/refs/tags/(.+?)/"
            r"(config|ray-operator|helm-chart|deployments|charts)/.+",
            entry.url,
        )
        assert found, entry.url
        assert TAGS[found.group(1)] == found.group(2), entry.url
        # The same file upstream: its name, and for a chart file its place in the chart.
        assert entry.url.rsplit("/", 1)[1] == entry.path.rsplit("/", 1)[1], entry.url
        if "/charts/" in f"/{entry.path}":
            in_chart = f"/{entry.path}".split("/charts/", 1)[1]
            assert entry.url.endswith("/" + in_chart), entry.url


def test_the_whole_of_each_chart_and_every_crd_folder_is_listed() -> None:
    """Each chart the stacks install, with its Chart.yaml, values.yaml and templates, and the CRDs
    of every project, where the readers look (aksray/reference.py)."""
    base = Path("/")
    for chart in CHARTS:
        root = chart_dir(base, chart.chart).relative_to(base).as_posix()
        files = {p.removeprefix(root + "/") for p in PATHS if p.startswith(root + "/")}
        assert {"Chart.yaml", "values.yaml"} <= files, chart.chart
        assert any(f.startswith("templates/") for f in files), chart.chart
    for project in CRD_PROJECTS:
        root = crds_dir(base, project).relative_to(base).as_posix()
        assert any(p.startswith(root + "/") for p in PATHS), project
    # Every file is in a folder a reader looks in: nothing of another version rides along.
    roots = [chart_dir(base, c.chart) for c in CHARTS] + [crds_dir(base, p) for p in CRD_PROJECTS]
    roots.append(base / "manifests" / "kai")
    for path in PATHS:
        assert any((base / path).is_relative_to(root) for root in roots), path


@pytest.mark.reference
def test_every_file_of_the_reference_folders_is_listed() -> None:
    """Nothing the readers could open is missing from what `make reference` fetches."""
    base = REFERENCE
    roots = [chart_dir(base, c.chart) for c in CHARTS] + [crds_dir(base, p) for p in CRD_PROJECTS]
    present = {
        path.relative_to(base).as_posix()
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and not path.name.endswith(".partial")
    }
    assert present <= PATHS


def test_no_reference_file_is_in_the_repository() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    digests = {e.sha256 for e in ENTRIES} - {hashlib.sha256(b"").hexdigest()}
    copied = [
        name.decode()
        for name in tracked
        if name
        and (PROJECT_ROOT / name.decode()).is_file()
        and hashlib.sha256((PROJECT_ROOT / name.decode()).read_bytes()).hexdigest() in digests
    ]
    assert copied == []


@pytest.mark.reference
def test_make_reference_copies_from_a_file_url_and_checks_each_digest(tmp_path: Path) -> None:
    dest = tmp_path / "reference"
    fetched, problems = fetch.fetch(ENTRIES, REFERENCE.resolve().as_uri(), dest)
    assert (fetched, problems) == (len(ENTRIES), [])
    for entry in ENTRIES:
        assert hashlib.sha256((dest / entry.path).read_bytes()).hexdigest() == entry.sha256
    assert locate({"AKSRAY_REFERENCE": str(dest)}) == dest, "what it writes is a reference"
    # A second run reads nothing: not even the source must still be there.
    assert fetch.fetch(ENTRIES, (tmp_path / "gone").as_uri(), dest) == (0, [])


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    source, dest = tmp_path / "source", tmp_path / "dest"
    for entry in ENTRIES[:2]:
        (source / entry.path).parent.mkdir(parents=True, exist_ok=True)
        (source / entry.path).write_text("kind: NotTheUpstreamFile\n")
    fetched, problems = fetch.fetch(ENTRIES[:3], str(source), dest)
    assert fetched == 0
    assert [p.split(":")[0] for p in problems] == [e.path for e in ENTRIES[:3]]
    assert "not the pinned" in problems[0] and "cannot read" in problems[2]
    assert not dest.exists(), "nothing unchecked is written"
    code = fetch.main(["--from", str(source), "--dest", str(dest)])
    assert code == 1


def _complete(folder: Path) -> Path:
    for chart in CHARTS:
        chart_dir(folder, chart.chart).mkdir(parents=True)
    for project in CRD_PROJECTS:
        crds_dir(folder, project).mkdir(parents=True)
    return folder


def test_the_reference_is_found_where_it_is_configured(tmp_path: Path) -> None:
    folder = _complete(tmp_path / "reference")
    assert locate({"AKSRAY_REFERENCE": str(folder)}) == folder
    assert locate({"AKSRAY_REFERENCE": folder.as_uri()}) == folder
    # A configured folder without the data is not silently replaced by another copy.
    assert locate({"AKSRAY_REFERENCE": str(tmp_path / "empty")}) is None
    # Unset: only what `make reference` wrote; no folder beside the checkout is looked at.
    assert locate({}) == (FETCHED if has_reference(FETCHED) else None)


def test_a_copy_made_for_other_pins_is_not_a_reference(tmp_path: Path) -> None:
    """A reference fetched before a version bump lacks the new version's folder: the tests then
    say `make reference`, instead of validating against the old files."""
    folder = _complete(tmp_path / "reference")
    shutil.rmtree(crds_dir(folder, "kuberay"))
    (folder / "crds" / "kuberay").mkdir()  # where an older layout kept KubeRay's CRDs
    assert not has_reference(folder)
    assert locate({"AKSRAY_REFERENCE": str(folder)}) is None


def test_nothing_names_a_reference_folder_beside_the_checkout() -> None:
    """The product looks only where the user puts the data; CI names its folder itself."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    beside = re.compile(r"\.\./shared|shared/reference|PROJECT_ROOT\.parent")
    named = [
        name
        for name in tracked
        if name.endswith((".py", ".md", ".sh", ".toml", ".yaml", ".tsv", "Makefile", "run"))
        and name != "tests/project/test_reference.py"
        and beside.search((PROJECT_ROOT / name).read_text(encoding="utf-8", errors="replace"))
    ]
    assert named == [".ci/run"], "only CI names where its machine keeps the data"


def _pytest(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AKSRAY_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=PROJECT_ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_a_clone_without_the_reference_runs_every_other_test(tmp_path: Path) -> None:
    """As in a fresh clone without the data: the conformance tests are left out, with one line
    saying how to get them, and every other test runs and passes."""
    empty = tmp_path / "no-reference"
    empty.mkdir()
    done = _pytest({"AKSRAY_REFERENCE": str(empty)}, "tests/components/test_operators.py")
    assert done.returncode == 0, done.stdout[-3000:]
    lines = [line for line in done.stdout.splitlines() if "upstream-conformance" in line]
    assert len(lines) == 1, done.stdout[-3000:]
    left_out = re.fullmatch(
        r"skipped (\d+) upstream-conformance tests: .*make reference.*", lines[0]
    )
    assert left_out and int(left_out.group(1)) > 0, lines[0]
    summary = done.stdout.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) > 0, summary
    assert "skipped" not in summary and "failed" not in summary, summary


def test_ci_fails_rather_than_leave_the_conformance_tests_out(tmp_path: Path) -> None:
    env = {"AKSRAY_REFERENCE": str(tmp_path), "AKSRAY_REQUIRE_REFERENCE": "1"}
    done = _pytest(env, "tests/project/test_reference.py", "-k", "digest")
    assert done.returncode == 1
    assert "the upstream reference data is required" in done.stdout + done.stderr
    ci = (PROJECT_ROOT / ".ci" / "run").read_text()
    assert re.search(r'^export AKSRAY_REFERENCE="\$\{AKSRAY_REFERENCE:-.+\}"$', ci, re.M)
    assert "export AKSRAY_REQUIRE_REFERENCE=1" in ci
    assert ci.index("make reference") < ci.index("make test")


def test_ci_runs_the_readmes_test_command_in_a_clone_without_the_data() -> None:
    ci = (PROJECT_ROOT / ".ci" / "run").read_text()
    clone = ci.index('git clone --quiet "$root" "$fresh/clone"')
    run = ci.index("env -u AKSRAY_REFERENCE -u AKSRAY_REQUIRE_REFERENCE", clone)
    readme = (PROJECT_ROOT / "README.md").read_text()
    assert "make test" in readme
    assert ci.index("make test", run) < ci.index("\n", ci.index("make test", run))
    assert 'grep -q "upstream-conformance tests: no upstream reference data"' in ci[run:]


UNMARKED_READER = """
import pytest

from tests.support.reference import chart


def test_unmarked_reads_the_chart() -> None:
    (chart("kueue") / "values.yaml").read_text()


@pytest.mark.reference
def test_marked_reads_the_chart() -> None:
    (chart("kueue") / "values.yaml").read_text()
"""


def test_a_test_that_reads_the_data_unmarked_fails_whether_or_not_the_data_is_here(
    tmp_path: Path,
) -> None:
    """The check behind "every test that reads the reference data is marked": with the data, the
    unmarked reader fails naming the marker (the marked one runs); without it, the same."""
    (tmp_path / "test_readers.py").write_text(UNMARKED_READER)
    args = ("-p", "tests.conftest", "--rootdir", str(PROJECT_ROOT), str(tmp_path))
    empty = tmp_path / "none"
    empty.mkdir()
    with_data = _pytest({"AKSRAY_REFERENCE": str(REFERENCE)}, *args)
    without = _pytest({"AKSRAY_REFERENCE": str(empty)}, *args)
    for done in (with_data, without):
        assert "test_unmarked_reads_the_chart reads the upstream reference data" in done.stdout
        assert "is not marked: add @pytest.mark.reference" in done.stdout
        assert done.returncode == 1, done.stdout[-2000:]
    assert "1 failed, 1 deselected" in without.stdout, without.stdout[-2000:]
    if has_reference(REFERENCE):
        assert "1 failed, 1 passed" in with_data.stdout, with_data.stdout[-2000:]

"""Packaging: the lock pins everything for every supported Python, and `make install` picks the
interpreter as documented (newest present, or the one named; sticky; a new one rebuilds .venv).

The Makefile tests run a copy of the Makefile in a temporary folder, with a PATH of stand-ins and a
stand-in `uv` that only records its arguments: no network, no real install.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name, parse_wheel_filename
from setuptools import find_packages

from aksray.offline.runner import PROJECT_ROOT

ROOT = PROJECT_ROOT
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LOCK = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
PROJECT = canonicalize_name(PYPROJECT["project"]["name"])
PACKAGES: list[dict[str, Any]] = LOCK["package"]
LOCKED = [p for p in PACKAGES if canonicalize_name(p["name"]) != PROJECT]


def makefile_python_versions() -> list[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(r"^PYTHON_VERSIONS := (.+)$", text, re.MULTILINE)
    assert match, "Makefile: no PYTHON_VERSIONS line"
    return match.group(1).split()


SUPPORTED = makefile_python_versions()


def minors_allowed(spec: str) -> list[str]:
    specifiers = SpecifierSet(spec)
    return [f"3.{m}" for m in range(30) if specifiers.contains(f"3.{m}.0")]


# --- the lock ------------------------------------------------------------------------------------


def test_supported_versions_are_one_list_everywhere() -> None:
    assert SUPPORTED == ["3.13", "3.12", "3.11"], "newest first: the order make install tries"
    assert minors_allowed(PYPROJECT["project"]["requires-python"]) == sorted(SUPPORTED)
    assert SpecifierSet(LOCK["requires-python"]) == SpecifierSet(
        PYPROJECT["project"]["requires-python"]
    ), "uv.lock was resolved for another Python range: run `make lock`"
    oldest = min(SUPPORTED, key=lambda v: tuple(map(int, v.split("."))))
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py" + oldest.replace(".", "")
    assert PYPROJECT["tool"]["mypy"]["python_version"] == oldest


def test_every_direct_dependency_is_an_exact_pin_and_the_lock_has_it() -> None:
    direct = list(PYPROJECT["project"]["dependencies"])
    for extra in PYPROJECT["project"]["optional-dependencies"].values():
        direct += extra
    for group in PYPROJECT["dependency-groups"].values():
        direct += group
    versions = {canonicalize_name(p["name"]): p["version"] for p in LOCKED}
    for line in direct:
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", f"{line}: pin it exactly"
        assert versions.get(canonicalize_name(req.name)) == spec.version, (
            f"{line}: uv.lock has {versions.get(canonicalize_name(req.name))}; run `make lock`"
        )


def test_the_lock_is_for_this_pyproject() -> None:
    (project,) = [p for p in PACKAGES if canonicalize_name(p["name"]) == PROJECT]
    locked = {
        (canonicalize_name(d["name"]), d.get("specifier", ""), d.get("marker", ""))
        for d in project["metadata"]["requires-dist"]
    }
    wanted = {
        (canonicalize_name(r.name), str(r.specifier), "")
        for r in map(Requirement, PYPROJECT["project"]["dependencies"])
    }
    for extra, lines in PYPROJECT["project"]["optional-dependencies"].items():
        wanted |= {
            (canonicalize_name(r.name), str(r.specifier), f"extra == '{extra}'")
            for r in map(Requirement, lines)
        }
    assert locked == wanted, "uv.lock is stale: run `make lock`"
    groups = {
        group: sorted((canonicalize_name(d["name"]), d["specifier"]) for d in deps)
        for group, deps in project["metadata"].get("requires-dev", {}).items()
    }
    assert groups == {
        group: sorted(
            (canonicalize_name(r.name), str(r.specifier)) for r in map(Requirement, lines)
        )
        for group, lines in PYPROJECT["dependency-groups"].items()
    }, "uv.lock is stale: run `make lock`"


def test_make_install_installs_uv_at_the_locked_version() -> None:
    (uv,) = [p for p in LOCKED if p["name"] == "uv"]
    assert PYPROJECT["dependency-groups"]["installer"] == [f"uv=={uv['version']}"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert '["package"] if p["name"] == "uv"' in makefile, "the installer comes from uv.lock"
    assert "--require-hashes" in makefile


def test_the_lock_pins_every_transitive_dependency_once_with_hashes() -> None:
    names = [canonicalize_name(p["name"]) for p in LOCKED]
    assert len(names) == len(set(names)), "one version per package for every supported Python"
    assert len(LOCKED) > 40
    for package in LOCKED:
        name = package["name"]
        assert re.fullmatch(r"[0-9]+(\.[0-9]+)*((a|b|rc|\.post)[0-9]+)?", package["version"]), name
        assert package["source"] == {"registry": "https://pypi.org/simple"}, name
        assert package.get("wheels"), f"{name}: no wheel, it would be built on install"
        for dist in [*package["wheels"], *([package["sdist"]] if "sdist" in package else [])]:
            assert re.fullmatch(r"sha256:[0-9a-f]{64}", dist["hash"]), f"{name}: {dist['url']}"
    known = {canonicalize_name(p["name"]) for p in PACKAGES}
    for package in PACKAGES:
        deps = list(package.get("dependencies", []))
        for extra_deps in package.get("optional-dependencies", {}).values():
            deps += extra_deps
        for dep in deps:
            assert canonicalize_name(dep["name"]) in known, f"{package['name']} -> {dep['name']}"


def _manylinux_x86_64() -> list[str]:
    return [f"manylinux_2_{m}_x86_64" for m in range(39, 4, -1)] + [
        "manylinux2014_x86_64",
        "manylinux2010_x86_64",
        "manylinux1_x86_64",
    ]


PLATFORMS = {
    "Linux x86_64": _manylinux_x86_64(),
    "macOS arm64": list(mac_platforms((14, 0), "arm64")),
    "Windows x64": ["win_amd64"],
}


@pytest.mark.parametrize("version", sorted(SUPPORTED))
@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_every_locked_package_installs_from_a_wheel(version: str, platform: str) -> None:
    py = tuple(int(part) for part in version.split("."))
    tags: set[Tag] = set(cpython_tags(py, platforms=PLATFORMS[platform]))
    tags |= set(compatible_tags(py, platforms=PLATFORMS[platform]))
    missing = []
    for package in LOCKED:
        wheel_tags: set[Tag] = set()
        for wheel in package["wheels"]:
            wheel_tags |= parse_wheel_filename(wheel["url"].rsplit("/", 1)[1])[3]
        if not wheel_tags & tags:
            missing.append(f"{package['name']}=={package['version']}")
    assert not missing, f"no wheel for Python {version} on {platform}: {missing}"


def test_pulumi_finds_the_provider_plugins_in_the_venv() -> None:
    """The language host `make e2e` builds (sdk v3.68, before toolchains) runs `python -m pip
    list -v --format json` in the venv and reads each package's pulumi-plugin.json; uv's
    toolchain lists the same packages from uv.lock (see the next tests)."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "list", "-v", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    packages, _ = json.JSONDecoder().raw_decode(listed)
    locked: dict[str, str] = {canonicalize_name(p["name"]): p["version"] for p in LOCKED}
    plugins = {}
    for package in packages:
        plugin = (
            Path(package["location"]) / package["name"].replace("-", "_") / "pulumi-plugin.json"
        )
        if plugin.exists():
            meta = json.loads(plugin.read_text(encoding="utf-8"))
            if meta.get("resource"):
                plugins[meta["name"]] = meta["version"]
    assert plugins == {
        "azure-native": locked["pulumi-azure-native"],
        "kubernetes": locked["pulumi-kubernetes"],
        "random": locked["pulumi-random"],
        "grafana": locked["pulumiverse-grafana"],
    }


def _makefile_value(name: str) -> str:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{name} := (.+)$", text, re.MULTILINE)
    assert match, f"Makefile: no {name} line"
    return match.group(1).strip()


def test_pulumis_language_host_uses_uv_and_the_venv_make_install_builds() -> None:
    """With `toolchain: uv` the host resolves the virtualenv option against the project root,
    finds uv.lock and pyproject.toml (with a [project] table) by searching up from it, and runs
    `uv sync --inexact` there with UV_PROJECT_ENVIRONMENT set to that virtualenv."""
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))
    assert project["runtime"] == {
        "name": "python",
        "options": {"toolchain": "uv", "virtualenv": _makefile_value("VENV")},
    }
    assert (ROOT / "uv.lock").is_file() and "name" in PYPROJECT["project"]
    assert "--locked" in (ROOT / "Makefile").read_text(encoding="utf-8"), "the lock is what runs"


def test_the_language_hosts_sync_leaves_the_venv_as_make_install_built_it() -> None:
    """What the host runs before every `pulumi up` (offline and dry here): nothing to change, so a
    deploy runs exactly the versions the tests ran with."""
    # `make install`'s, else the one on PATH (as Pulumi finds it).
    installed = ROOT / _makefile_value("UV_HOME") / "bin" / "uv"
    uv = str(installed) if installed.exists() else shutil.which("uv")
    if uv is None:
        pytest.skip("uv is installed by `make install`")
    venv = Path(sys.prefix)
    done = subprocess.run(
        [uv, "sync", "--inexact", "--dry-run", "--offline"],
        cwd=ROOT,
        env={**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv), "UV_PYTHON_DOWNLOADS": "never"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Would make no changes" in done.stderr + done.stdout, done.stderr


def test_the_plugins_uv_lock_lists_are_the_ones_installed() -> None:
    """uv's toolchain reads the Pulumi packages from uv.lock: each provider package there is the
    version installed in the venv, with its pulumi-plugin.json."""
    locked = {str(canonicalize_name(p["name"])): str(p["version"]) for p in LOCKED}
    site = Path(yaml.__file__).resolve().parents[1]
    for package in ("pulumi-azure-native", "pulumi-kubernetes", "pulumi-random"):
        plugin = json.loads((site / package.replace("-", "_") / "pulumi-plugin.json").read_text())
        assert plugin["resource"] is True, package
        assert plugin.get("version", locked[package]) == locked[package], package
    grafana = json.loads((site / "pulumiverse_grafana" / "pulumi-plugin.json").read_text())
    assert grafana["name"] == "grafana" and grafana["version"] == locked["pulumiverse-grafana"]


# --- the project runs from its checkout ----------------------------------------------------------


def _backend() -> Any:
    build = PYPROJECT["build-system"]
    assert build["backend-path"] == ["scripts/packaging"]
    sys.path.insert(0, str(ROOT / "scripts" / "packaging"))
    try:
        return importlib.import_module(build["build-backend"])
    finally:
        sys.path.remove(str(ROOT / "scripts" / "packaging"))


def test_no_wheel_or_sdist_is_built(tmp_path: Path) -> None:
    """`aksray` reads the program, Pulumi.yaml and the stacks beside its package: an installed
    copy could not plan, so building one fails with the reason."""
    backend = _backend()
    for build in (backend.build_wheel, backend.build_sdist):
        with pytest.raises(SystemExit, match="runs from its checkout only") as refused:
            build(str(tmp_path))
        assert "git clone, then `make install`" in str(refused.value)
    assert list(tmp_path.iterdir()) == []
    assert callable(backend.build_editable), "what `make install` uses"
    # A clone has it: `make install` builds the editable install with it.
    path = Path(backend.__file__).resolve().relative_to(ROOT).as_posix()
    tracked = subprocess.run(
        ["git", "ls-files", "--error-unmatch", path], cwd=ROOT, capture_output=True, check=False
    )
    assert tracked.returncode == 0, f"{path} is not in git (ignored?): a clone cannot install"


def test_the_editable_install_puts_the_checkout_on_the_path() -> None:
    """A package the checkout gains after `make install` (a `git pull`) imports in the
    installed `aksray` command without reinstalling: the install is a .pth of the checkout."""
    site = Path(sysconfig.get_paths()["purelib"])
    lines = {line.strip() for pth in site.glob("*.pth") for line in pth.read_text().splitlines()}
    assert str(ROOT) in lines


def test_the_editable_install_finds_every_package() -> None:
    """Packages are found, not listed: each folder with an __init__.py under the program's
    top-level packages is one (workloads.model_stage once went missing from a list)."""
    find = PYPROJECT["tool"]["setuptools"]["packages"]["find"]
    assert find["namespaces"] is False
    include = find["include"]
    found = set(find_packages(str(ROOT), include=include))
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in {pattern.rstrip("*") for pattern in include}
        for init in (ROOT / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert on_disk == found and "workloads.model_stage" in found
    # Every top-level package of the checkout is the program's (tests/ and the tools aside): a
    # new layer (scheduling/ once) is found without anyone remembering this list.
    tops = {
        init.parent.name
        for init in ROOT.glob("*/__init__.py")
        if init.parent.name not in {"tests", "scripts", "policy"}
    }
    assert tops == {pattern.rstrip("*") for pattern in include}
    assert {"aksray", "catalog", "settings", "scheduling", "manifests", "components"} <= tops
    # Imported the way the installed console script runs, from another folder.
    done = subprocess.run(
        [sys.executable, "-c", "import workloads.model_stage, aksray.cli.main"],
        cwd="/",
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_ci_runs_the_suite_on_the_oldest_and_the_newest() -> None:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for version in (SUPPORTED[-1], SUPPORTED[0]):
        assert re.search(rf"\bpython{re.escape(version)}\b", text), version


# --- make install's choice of interpreter --------------------------------------------------------

TOOLS = (
    "sh", "make", "cat", "cut", "date", "grep", "mkdir", "rm", "sed", "sort", "tail", "touch", "tr",
)  # fmt: skip


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A copy of the Makefile, a PATH of stand-ins (no pyenv), and a stand-in uv."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "uv.lock").write_text("")
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (tools / tool).symlink_to(found)
    real = os.path.realpath(sys.executable)
    for name in ("python3.90", "python3.0", "python3.1"):
        (tools / name).symlink_to(real)  # each reports the running interpreter's version
    (tools / "python3.99").write_text("#!/bin/sh\nexit 127\n")  # present but does not run
    (tools / "python3.99").chmod(0o755)
    time.sleep(0.01)
    uv = tmp_path / "uv-stand-in"
    # Newer than uv.lock, so make does not try to install it.
    uv.write_text(f'#!/bin/sh\necho "$@" >>{tmp_path / "uv-calls"}\nmkdir -p .venv\n')
    uv.chmod(0o755)
    return tmp_path


RUNNING = "{}.{}".format(*sys.version_info[:2])
RUNNING_FULL = "{}.{}.{}".format(*sys.version_info[:3])


def make(sandbox: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(sandbox / "tools"), "HOME": str(sandbox)}
    return subprocess.run(
        ["make", "--no-print-directory", f"UV={sandbox / 'uv-stand-in'}", *args],
        cwd=sandbox,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def uv_calls(sandbox: Path) -> list[str]:
    log = sandbox / "uv-calls"
    return log.read_text().splitlines() if log.exists() else []


def test_make_install_takes_the_newest_that_runs_and_says_so(sandbox: Path) -> None:
    # Tried newest first: 3.99 does not run, 3.90 runs but is another version, then ours.
    versions = f"PYTHON_VERSIONS=3.99 3.90 {RUNNING} 3.0"
    fake = sandbox / "tools" / f"python{RUNNING}"
    fake.symlink_to(os.path.realpath(sys.executable))
    done = make(sandbox, versions, "install")
    assert done.returncode == 0, done.stderr
    assert f"chose Python {RUNNING_FULL} ({fake}), the newest of" in done.stdout
    assert f"make install: Python {RUNNING_FULL} ({fake})" in done.stdout
    # A newcomer sees how long it takes, before and after (uv shows its own progress between).
    assert "(cold, downloading about 90 MB: about 20 s; from uv's cache: seconds)" in done.stdout
    assert re.search(rf"^make install: done in \d+s \(Python {RUNNING_FULL}\)$", done.stdout, re.M)
    assert uv_calls(sandbox) == [f"sync --locked --extra dev --python {fake}"]
    assert (sandbox / ".venv" / ".installed").exists()
    assert (sandbox / ".cache" / "python").read_text() == f"{fake} {RUNNING_FULL}\n"


def test_make_install_is_idempotent_sticky_and_rebuilds_for_another_python(sandbox: Path) -> None:
    versions = f"PYTHON_VERSIONS={RUNNING}"
    first, second = sandbox / "tools" / "python3.0", sandbox / "tools" / "python3.1"
    assert make(sandbox, versions, f"PYTHON={first}", "install").returncode == 0
    (sandbox / ".venv" / "kept").write_text("")
    again = make(sandbox, versions, "install")  # no PYTHON: the recorded choice stands
    assert again.returncode == 0, again.stderr
    assert "make install" not in again.stdout
    assert len(uv_calls(sandbox)) == 1

    other = make(sandbox, versions, f"PYTHON={second}", "install")
    assert other.returncode == 0, other.stderr
    assert uv_calls(sandbox)[-1] == f"sync --locked --extra dev --python {second}"
    assert not (sandbox / ".venv" / "kept").exists(), "a new interpreter starts .venv afresh"

    (sandbox / ".venv" / "kept").write_text("")
    time.sleep(0.01)
    (sandbox / "pyproject.toml").write_text("# changed\n")
    changed = make(sandbox, versions, "install")
    assert changed.returncode == 0, changed.stderr
    assert uv_calls(sandbox)[-1] == f"sync --locked --extra dev --python {second}"
    assert len(uv_calls(sandbox)) == 3
    assert (sandbox / ".venv" / "kept").exists(), "same interpreter: uv syncs the .venv in place"


def test_make_install_refuses_an_unsupported_or_missing_python(sandbox: Path) -> None:
    named = make(sandbox, "PYTHON_VERSIONS=3.99", "PYTHON=python3.0", "install")
    assert named.returncode != 0
    assert f"PYTHON=python3.0 is Python {RUNNING_FULL}; supported: 3.99" in named.stderr
    gone = make(sandbox, f"PYTHON_VERSIONS={RUNNING}", "PYTHON=python-missing", "install")
    assert gone.returncode != 0
    assert "PYTHON=python-missing does not run" in gone.stderr
    none = make(sandbox, "PYTHON_VERSIONS=3.99 3.98", "install")
    assert none.returncode != 0
    assert "no Python 3.99 3.98 found (tried python3.99 python3.98)" in none.stderr
    assert uv_calls(sandbox) == []

"""Running the engine by hand (pulumi.sh) leaves the tracked stack files as they were: the
passphrase provider's `encryptionsalt:` lives in .e2e/salts/, back in the file only while a
command runs (run: python -m pytest scripts/engine/test_pulumi_wrapper.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import stack_salt

HERE = Path(__file__).resolve().parent
STACK = (
    "# local: a comment the engine must not lose\nconfig:\n  aks-ray-platform:location: eastus2\n"
)
SALT = "encryptionsalt: v1:c2FsdHNhbHQ=:v1:bm9uY2Vub25jZQ==:Y2lwaGVydGV4dA==\n"

# A stand-in engine: `stack init` writes the salt at the top as Pulumi does, `config set` adds a
# key, `up` records whether it found its salt, `fail` exits 7.
FAKE_PULUMI = f"""#!/bin/sh
file=stacks/Pulumi.local.yaml
case "$1" in
  stack) printf '%s' '{SALT}' | cat - "$file" >"$file.new" && mv "$file.new" "$file" ;;
  config) printf '  aks-ray-platform:%s: %s\\n' "$3" "$4" >>"$file" ;;
  up) if grep -q '^encryptionsalt: ' "$file"; then echo salt >>calls; else echo none >>calls; fi ;;
  fail) exit 7 ;;
esac
"""


def test_stash_moves_only_the_provider_lines_and_restore_puts_them_back(tmp_path: Path) -> None:
    stacks, store = tmp_path / "stacks", tmp_path / "salts"
    stacks.mkdir()
    path = stacks / "Pulumi.local.yaml"
    path.write_text(SALT + STACK)
    assert stack_salt.stash(stacks, store) == ["Pulumi.local.yaml"]
    assert path.read_text() == STACK
    assert (store / "Pulumi.local.yaml").read_text() == SALT
    assert stack_salt.restore(stacks, store) == ["Pulumi.local.yaml"]
    assert path.read_text() == SALT + STACK
    path.write_text("secretsprovider: awskms://k\nencryptedkey: AAAA\n" + STACK)
    assert stack_salt.restore(stacks, store) == []  # the file has its own: left alone
    stack_salt.stash(stacks, store)
    assert path.read_text() == STACK
    assert (
        store / "Pulumi.local.yaml"
    ).read_text() == "secretsprovider: awskms://k\nencryptedkey: AAAA\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: aks-ray-platform\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.local.yaml").write_text(STACK)
    env = {**os.environ, "AKSRAY_ENGINE_CACHE": str(tmp_path / "cache")}
    bin_dir = subprocess.run(  # noqa: S603 - our own script
        [HERE / "bootstrap.sh", "--print-bin-dir"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(bin_dir).mkdir(parents=True)
    (Path(bin_dir) / "pulumi").write_text(FAKE_PULUMI)
    (Path(bin_dir) / "pulumi").chmod(0o755)
    return tmp_path


def _pulumi(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "AKSRAY_ENGINE_CACHE": str(project / "cache"),
        "AKSRAY_PROJECT_DIR": str(project),
    }
    return subprocess.run(  # noqa: S603 - our own script
        [HERE / "pulumi.sh", *args], env=env, capture_output=True, text=True, check=False
    )


def test_running_the_engine_by_hand_adds_no_salt_to_the_stack_file(project: Path) -> None:
    stack_file = project / "stacks" / "Pulumi.local.yaml"
    assert _pulumi(project, "stack", "init", "local").returncode == 0
    assert stack_file.read_text() == STACK
    assert (project / ".e2e" / "salts" / "Pulumi.local.yaml").read_text() == SALT
    assert _pulumi(project, "up", "--yes", "--stack", "local").returncode == 0
    assert (project / "calls").read_text() == "salt\n", "the engine finds its salt while it runs"
    assert stack_file.read_text() == STACK
    assert _pulumi(project, "config", "set", "mode", "x").returncode == 0
    assert stack_file.read_text() == STACK + "  aks-ray-platform:mode: x\n", "edits stay"
    failed = _pulumi(project, "fail")
    assert failed.returncode == 7, "the engine's exit status comes back"
    assert "encryptionsalt" not in stack_file.read_text()


def test_without_the_engine_it_says_how_to_build_it(tmp_path: Path) -> None:
    env = {**os.environ, "AKSRAY_ENGINE_CACHE": str(tmp_path), "AKSRAY_PROJECT_DIR": str(tmp_path)}
    done = subprocess.run(  # noqa: S603 - our own script
        [HERE / "pulumi.sh", "up"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "run make engine first" in done.stderr

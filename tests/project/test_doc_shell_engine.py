"""The shell blocks that need the engine `make engine` builds (tests/support/doc_shell.py), run as
written (`make docs-e2e`): the README's deploy environment, on a PATH whose first Python is not
the project's, previews the local stack with a local state backend; the by-hand engine run of
docs/development.md; and the docs' `pulumi config set --path` examples, set by the real CLI."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from aksray.offline.runner import PROJECT_ROOT
from tests.support.doc_shell import (
    OFFLINE,
    PLACES,
    ConfigExample,
    Where,
    block,
    checkout_copy,
    config_examples,
    run_bash,
)
from tests.support.harness import planned

pytestmark = pytest.mark.engine

ENGINE_BIN: Final = Path(
    subprocess.run(
        [PROJECT_ROOT / "scripts" / "engine" / "bootstrap.sh", "--print-bin-dir"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
)


def test_the_engine_blocks_are_these() -> None:
    engine = sorted(key for key, place in PLACES.items() if place.where is Where.ENGINE)
    assert engine == ["README.md#deploy", "docs/development.md#engine"]


@pytest.fixture
def engine() -> Path:
    if not (ENGINE_BIN / "pulumi").is_file():
        pytest.fail(f"the engine is not built ({ENGINE_BIN}): run make engine (or make docs-e2e)")
    return ENGINE_BIN


def _another_python(folder: Path) -> Path:
    """A Python of the user's own, first on PATH: a real interpreter without pip or the
    project's packages, as any other virtualenv or system Python is to this project."""
    subprocess.run(
        [getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", folder],
        check=True,
    )
    return folder / "bin"


def _user_env(tmp_path: Path, engine: Path) -> dict[str, str]:
    """A user's shell: another Python first on PATH, then the Pulumi CLI; the state and
    plugins of this test only; no plugin downloads, no update check, no kubeconfig."""
    path = f"{_another_python(tmp_path / 'python')}:{engine}:/usr/local/bin:/usr/bin:/bin"
    return {
        "HOME": str(tmp_path / "home"),
        "PATH": path,
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "PULUMI_HOME": str(tmp_path / "pulumi-home"),
        "PULUMI_SKIP_UPDATE_CHECK": "1",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "1",
        "PULUMI_CONFIG_PASSPHRASE": "docs-e2e-throwaway",
    }


def _local_backend(tmp_path: Path) -> str:
    state = tmp_path / "state"
    state.mkdir()
    return f"pulumi login {shlex.quote(state.as_uri())}\n"


def _exports(key: str) -> str:
    return "".join(
        line for line in block(key).text.splitlines(keepends=True) if line.startswith("export ")
    )


def test_the_readme_deploy_environment_previews_the_local_stack(
    tmp_path: Path, engine: Path
) -> None:
    key = "README.md#deploy"
    copy = checkout_copy(tmp_path / "checkout")
    script = (
        block(key).without(PLACES[key].not_here)  # the exports and the plan, as written
        + _local_backend(tmp_path)
        + "pulumi stack init local --non-interactive\n"
        + "pulumi preview --stack local --non-interactive\n"
    )
    run = run_bash(script, copy, _user_env(tmp_path, engine))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Checks: 0 errors, 0 warnings" in run.stdout  # aksray plan --stack dev
    created = re.search(r"\+ (\d+) to create", run.stdout)
    assert created, run.stdout[-2000:]
    # Every resource the offline run records, and the stack itself.
    assert int(created.group(1)) == len(planned("local").resources) + 1


def test_without_the_readme_environment_the_other_python_breaks_the_preview(
    tmp_path: Path, engine: Path
) -> None:
    """The harness above can fail: with the user's Python first and the README's line left out,
    the language host runs that Python, which has no pip and no Pulumi SDK."""
    copy = checkout_copy(tmp_path / "checkout")
    script = (
        _local_backend(tmp_path)
        + "pulumi stack init local --non-interactive\n"
        + "pulumi preview --stack local --non-interactive\n"
    )
    run = run_bash(script, copy, _user_env(tmp_path, engine))
    assert run.returncode != 0
    assert "pip list" in run.stdout + run.stderr


def test_the_readme_environment_puts_the_project_s_python_first(tmp_path: Path) -> None:
    """What the first line does on any PATH: the project's python3 and uv come first."""
    copy = checkout_copy(tmp_path / "checkout")
    other = _another_python(tmp_path / "python")
    script = _exports("README.md#deploy") + "command -v python3 uv\n"
    run = run_bash(script, copy, {"PATH": f"{other}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [f"{copy}/.venv/bin/python3", f"{copy}/.cache/uv/bin/uv"]


def test_the_by_hand_engine_run_of_the_local_stack(tmp_path: Path, engine: Path) -> None:
    key = "docs/development.md#engine"
    copy = checkout_copy(tmp_path / "checkout", install=False)  # make engine installs first
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "KUBECONFIG"))}
    run = run_bash(block(key).without(PLACES[key].not_here), copy, {**env, **OFFLINE})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(r"Resources:\s+\+ \d+ created", run.stdout), run.stdout[-2000:]
    assert re.search(r"Resources:\s+- \d+ deleted", run.stdout), run.stdout[-2000:]
    # The tracked stack file is as committed: the passphrase's salt stayed in .e2e/.
    local = "stacks/Pulumi.local.yaml"
    assert (copy / local).read_bytes() == (PROJECT_ROOT / local).read_bytes()


@pytest.mark.parametrize("example", config_examples(), ids=lambda e: e.command)
def test_a_config_example_set_by_the_cli_plans_as_the_docs_say(
    example: ConfigExample, tmp_path: Path, engine: Path
) -> None:
    """Each `pulumi config set` the docs show, set by the real CLI on the stack it names (dev
    when none), gives a stack `aksray plan` accepts without an error; the flat dotted key the
    README shows as the mistake is refused at that key, naming the `--path` form."""
    copy = checkout_copy(tmp_path / "checkout")
    script = (
        _local_backend(tmp_path)
        + f"pulumi stack init {example.stack} --non-interactive\n"
        + f"pulumi config set --stack {example.stack} {example.arguments}\n"
        + f".venv/bin/aksray plan --config stacks/Pulumi.{example.stack}.yaml >/dev/null\n"
    )
    run = run_bash(script, copy, _user_env(tmp_path, engine))
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    if example.flat:
        key = example.words[0]
        assert run.returncode == 1, run.stderr[-2000:]
        assert len(errors) == 1 and errors[0].startswith(f"error: {key}: "), errors
        assert f"pulumi config set --path '{key}'" in errors[0]
    else:
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        assert errors == []

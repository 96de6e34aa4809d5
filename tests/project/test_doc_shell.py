"""Every shell block of README.md and docs/ is placed (tests/support/doc_shell.py), and the ones
that run here run as written: installed and planned offline, in a copy of the checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any, Final

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT
from tests.support.doc_shell import (
    CI_RUNS_IT,
    OFFLINE,
    PLACES,
    ConfigExample,
    Where,
    block,
    checkout_copy,
    command_of,
    config_examples,
    run_bash,
    shell_blocks,
)
from tests.support.harness import plan_findings, stack_document

HERE: Final = sorted(key for key, place in PLACES.items() if place.where is Where.HERE)


def test_every_shell_block_is_marked_and_placed() -> None:
    blocks = shell_blocks()
    unmarked = [f"{b.file}:{b.line}" for b in blocks if not b.key]
    assert unmarked == [], "mark each with <!-- shell: NAME --> and place it in PLACES"
    keys = [b.key for b in blocks]
    assert len(keys) == len(set(keys)), "a marker names one block of its file"
    assert sorted(keys) == sorted(PLACES)


def test_a_left_out_command_is_one_of_its_block() -> None:
    strays = [
        f"{key}: {command!r}"
        for key, place in PLACES.items()
        for command in place.not_here
        if command not in block(key).commands
    ]
    assert strays == []


def test_what_ci_is_said_to_run_it_runs() -> None:
    ci = {command_of(line) for line in (PROJECT_ROOT / ".ci" / "run").read_text().splitlines()}
    claimed = {
        command
        for place in PLACES.values()
        for command, why in place.not_here.items()
        if why.startswith(CI_RUNS_IT)
    }
    assert claimed and claimed <= ci, sorted(claimed - ci)


def test_the_blocks_the_default_tier_runs_have_commands_to_run() -> None:
    for key in HERE:
        assert set(block(key).commands) - set(PLACES[key].not_here), key


def test_the_marker_reader_sees_markers_only_right_above_a_fence(tmp_path: Path) -> None:
    """A test that cannot fail is a defect: a marker two lines up, or none, is no marker."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text(
        "<!-- shell: one -->\n```bash\necho 1  # one\n```\n\n"
        "<!-- shell: far -->\n\ntext\n```sh\necho 2 \\\n  two\n```\n"
        "```python\nprint(3)\n```\n"
    )
    (tmp_path / "README.md").write_text("```console\nls '#not a comment'\n```\n")
    import tests.support.doc_shell as module

    documents = module.DOCUMENTS
    try:
        module.DOCUMENTS = ("README.md", "docs/x.md")  # type: ignore[misc]
        found = shell_blocks(tmp_path)
    finally:
        module.DOCUMENTS = documents  # type: ignore[misc]
    assert [(b.key, b.commands) for b in found] == [
        ("", ["ls '#not a comment'"]),
        ("docs/x.md#one", ["echo 1"]),
        ("", ["echo 2 two"]),
    ]


# --------------------------------------------------------------------------------------------
# The blocks that run here, as written
# --------------------------------------------------------------------------------------------


def _quick_start(copy: Path, run: CompletedProcess[str]) -> None:
    assert "make install: done in" in run.stdout  # a fresh checkout: it installed
    assert "Checks: 0 errors, 0 warnings" in run.stdout
    assert (copy / ".venv" / "bin" / "aksray").is_file()


def _plan(copy: Path, run: CompletedProcess[str]) -> None:
    golden = PROJECT_ROOT / "tests" / "golden" / "dev" / "render" / "kubernetes"
    rendered = copy / "out" / "dev" / "kubernetes"
    assert sorted(p.name for p in rendered.iterdir()) == sorted(p.name for p in golden.iterdir())
    assert (copy / "out" / "dev" / "resources.json").is_file()
    assert '"stack": "prod"' in run.stdout  # the JSON document
    assert "usage: aksray plan" in run.stdout  # --help
    assert "\naksray 0.1.0 (aks-ray-platform)\n" in run.stdout  # --version


def _policy_pack(copy: Path, run: CompletedProcess[str]) -> None:
    venv = copy / "policy" / "venv"
    assert (venv / "bin" / "pip").exists()
    # The Python `make install` chose in this checkout (it may differ from the one running tests).
    assert _venv_version(venv) == _venv_version(copy / ".venv")


def _venv_version(venv: Path) -> str:
    config = dict(line.split(" = ", 1) for line in (venv / "pyvenv.cfg").read_text().splitlines())
    return config.get("version") or config["version_info"]


def _bench(copy: Path, run: CompletedProcess[str]) -> None:
    document = yaml.safe_load((copy / "Pulumi.bench100.yaml").read_text())
    departments = document["config"]["aks-ray-platform:scheduling"]["departments"]
    assert sum(len(d["teams"]) for d in departments) == 100


def _since(copy: Path, run: CompletedProcess[str]) -> None:
    assert run.stdout.count("Checks: 0 errors, 0 warnings") == 1  # the text plan
    assert '"change": {' in run.stdout  # --json: the change under `change`
    assert "## aksray plan: `prod`" in run.stdout  # the comment


def _a_git_checkout_with_the_folders_it_names(copy: Path) -> dict[str, str]:
    """docs/changing.md's block reads OLD from git (origin/main) and from two folders: the
    copy becomes a repository whose origin/main is its one commit, with prod's stack file in
    `new/` and `deployed/`; aksray on PATH as the README's deploy line has it."""
    git = ["git", "-c", "user.name=docs", "-c", "user.email=docs@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "docs"],
                 ["update-ref", "refs/remotes/origin/main", "HEAD"]):  # fmt: skip
        subprocess.run([*git, *args], cwd=copy, check=True, capture_output=True)
    for folder in ("new", "deployed"):
        (copy / folder).mkdir()
        shutil.copy2(copy / "stacks" / "Pulumi.prod.yaml", copy / folder / "Pulumi.prod.yaml")
    return {"PATH": f"{copy}/.venv/bin:{os.environ['PATH']}"}


# What a block needs around it that a user's checkout has: run first, its environment added.
SETUP: Final[dict[str, Callable[[Path], dict[str, str]]]] = {
    "docs/changing.md#since": _a_git_checkout_with_the_folders_it_names,
}

EXPECTED: Final[dict[str, Callable[[Path, CompletedProcess[str]], None]]] = {
    "docs/changing.md#since": _since,
    "README.md#quick-start": _quick_start,
    "README.md#plan": _plan,
    "README.md#policy-pack": _policy_pack,
    "docs/development.md#bench": _bench,
}


def test_every_block_run_here_says_what_it_shows() -> None:
    assert sorted(EXPECTED) == HERE


# The blocks that install: their copy of the checkout has no .venv yet.
INSTALLS: Final = frozenset({"README.md#quick-start"})


@pytest.mark.parametrize("key", HERE)
def test_the_block_runs_as_written(key: str, tmp_path: Path) -> None:
    """In a fresh checkout (installed as `make install` leaves it, unless the block installs),
    offline: every command succeeds, and nothing says error or warning."""
    copy = checkout_copy(tmp_path, install=key not in INSTALLS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AKSRAY_DEBUG")}
    env.update(SETUP[key](copy) if key in SETUP else {})
    run = run_bash(block(key).without(PLACES[key].not_here), copy, {**env, **OFFLINE})
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    said = [line for line in run.stderr.splitlines() if line.startswith(("error", "warning"))]
    assert said == [] and "Traceback" not in run.stderr
    EXPECTED[key](copy, run)


def test_the_policy_pack_pins_the_project_s_versions() -> None:
    """The pack's requirements, which its block installs, are the versions uv.lock holds."""
    lock = tomllib.loads((PROJECT_ROOT / "uv.lock").read_text())
    locked = {p["name"]: p["version"] for p in lock["package"]}
    pins = dict(
        line.split("==")
        for line in (PROJECT_ROOT / "policy" / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert pins == {name: locked[name] for name in pins}
    assert set(pins) == {"pulumi", "pulumi-policy"}


# --------------------------------------------------------------------------------------------
# The docs' `pulumi config set` examples (the real CLI sets them in make docs-e2e)
# --------------------------------------------------------------------------------------------

_SEGMENT = re.compile(r"(?P<key>[^.\[\]]+)|\[(?P<index>\d+)\]")


def _set_path(config: dict[str, Any], key: str, text: str) -> None:
    """`pulumi config set --path KEY TEXT` on a stack's `config:` map, as the CLI writes it: a
    whole number as a number, true/false as a boolean, anything else as a string."""
    value: object = {"true": True, "false": False}.get(text, text)
    if re.fullmatch(r"-?\d+", text):
        value = int(text)
    steps = [m.group("key") or int(m.group("index")) for m in _SEGMENT.finditer(key)]
    node: Any = config
    steps[0] = f"aks-ray-platform:{steps[0]}"
    for step, following in zip(steps, [*steps[1:], None], strict=True):
        if isinstance(node, list) and step == len(node):
            node.append(None)  # the CLI appends at the index one past the end
        if following is None:
            node[step] = value
        elif (node.get(step) if isinstance(node, dict) else node[step]) is None:
            node[step] = [] if isinstance(following, int) else {}
        if following is not None:
            node = node[step]


def test_the_path_setter_writes_what_the_cli_writes() -> None:
    config: dict[str, Any] = {"aks-ray-platform:workloads": {"qwen-lora": {"enabled": True}}}
    _set_path(config, "workloads.qwen-lora.run", "1")
    _set_path(config, "scheduling.departments[0].name", "research")
    assert config == {
        "aks-ray-platform:workloads": {"qwen-lora": {"enabled": True, "run": 1}},
        "aks-ray-platform:scheduling": {"departments": [{"name": "research"}]},
    }


@pytest.mark.parametrize(
    "example", [e for e in config_examples() if "--secret" not in e.words], ids=lambda e: e.command
)
def test_a_config_example_gives_the_plan_the_docs_promise(
    example: ConfigExample, tmp_path: Path
) -> None:
    """Set on the stack it names, a `--path` example plans without an error; the flat dotted
    key the README shows as the mistake is refused at that key, naming the `--path` form."""
    document = stack_document(example.stack)
    words = [word for word in example.words if word not in ("--path", "--plaintext")]
    if example.flat:
        document["config"][f"aks-ray-platform:{words[0]}"] = words[1]
    else:
        _set_path(document["config"], *words)
    code, errors, _warnings = plan_findings(tmp_path, document)
    if example.flat:
        assert code == 1 and len(errors) == 1, errors
        assert errors[0].startswith(f"error: {words[0]}: ")
        assert f"pulumi config set --path '{words[0]}'" in errors[0]
    else:
        assert (code, errors) == (0, [])

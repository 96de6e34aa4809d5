"""`aksray plan --since OLD`: the old stack from a file or from git, the change first in every
format, its impacts on stderr, exit 1 when `pulumi up` would fail or stop halfway."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.change import gpu_pool
from tests.support.harness import cli, mutated, stack_document, write_stack


def _stacks(tmp_path: Path, mutate: Any) -> tuple[Path, Path]:
    old = write_stack(tmp_path / "old", stack_document("dev"), "Pulumi.dev.yaml")
    new = write_stack(tmp_path, mutated("dev", mutate), "Pulumi.dev.yaml")
    return old, new


@pytest.fixture
def more_nodes(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "old").mkdir()
    return _stacks(tmp_path, lambda c: gpu_pool(c).__setitem__("maxCount", 8))


def test_the_text_plan_shows_the_change_first(more_nodes: tuple[Path, Path]) -> None:
    old, new = more_nodes
    run = cli("plan", "--config", new, "--since", old)
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == (
        f"Change since {old}: 0 to create, 1 to update, 0 to replace, 0 to delete; 57 unchanged"
    )
    assert lines[2].split() == ["update", "AgentPool", "a100", "maxCount"]
    assert lines[3] == "On the running platform: 0 error(s), 0 warning(s); nothing stops it"
    assert lines[5].startswith("Resources (58):")
    assert run.error_lines == []


def test_the_json_plan_carries_the_change(more_nodes: tuple[Path, Path]) -> None:
    old, new = more_nodes
    run = cli("plan", "--config", new, "--since", old, "--json")
    assert run.code == 0
    change = json.loads(run.stdout)["change"]
    assert change["counts"] == {"create": 0, "update": 1, "replace": 0, "delete": 0, "same": 57}
    (pool,) = change["changes"]
    assert pool["action"] == "update"
    assert pool["paths"] == [{"path": "maxCount", "kind": "update", "old": 5, "new": 8}]
    assert pool["urn"].startswith(
        "urn:pulumi:dev::aks-ray-platform::aksray:platform:Platform$aksray:platform:AksCluster$"
    )


def test_the_comment_shows_the_change_before_the_plan(
    more_nodes: tuple[Path, Path], tmp_path: Path
) -> None:
    old, new = more_nodes
    full = tmp_path / "full.md"
    run = cli("plan", "--config", new, "--since", old, "--format", "markdown", "--full-plan", full)
    assert run.code == 0
    assert run.stdout.startswith(f"## aksray plan: the change from `{old}`\n\n**`pulumi up` would")
    assert run.stdout.index("| update | AgentPool a100 | maxCount |") < run.stdout.index(
        "## aksray plan: `dev`"
    )
    assert full.read_text().startswith(f"## aksray plan: the change from `{old}`")


def test_a_change_azure_refuses_exits_1_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    old, new = _stacks(tmp_path, lambda c: gpu_pool(c).__setitem__("spot", True))
    run = cli("plan", "--config", new, "--since", old)
    assert run.code == 1
    assert [line.split(":")[:3] for line in run.error_lines] == [
        ["error", " change", " AgentPool a100"]
    ]
    assert "scaleSetPriority, scaleSetEvictionPolicy in place" in run.error_lines[0]
    assert "Traceback" not in run.output


def _repository(tmp_path: Path) -> Path:
    """A git repository holding the dev stack at its first commit."""
    repo = tmp_path / "repo"
    (repo / "stacks").mkdir(parents=True)
    write_stack(repo / "stacks", stack_document("dev"), "Pulumi.dev.yaml")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "dev"], check=True)
    return repo


def test_old_read_from_git_as_ref_and_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repository(tmp_path)
    monkeypatch.chdir(repo)
    new = write_stack(tmp_path, mutated("dev", lambda c: gpu_pool(c).__setitem__("maxCount", 8)))
    run = cli("plan", "--config", new, "--since", "HEAD:stacks/Pulumi.dev.yaml", "--json")
    assert run.code == 0, run.stderr
    change = json.loads(run.stdout)["change"]
    assert (change["old"], change["counts"]["update"]) == ("HEAD:stacks/Pulumi.dev.yaml", 1)


@pytest.mark.parametrize(
    ("since", "expected"),
    [
        (
            "HEAD~3:stacks/Pulumi.dev.yaml",
            "error: --since HEAD~3:stacks/Pulumi.dev.yaml: git cannot read it (invalid object "
            "name 'HEAD~3'); name a branch, tag or commit that has the file",
        ),
        (
            "HEAD:stacks/Pulumi.prod.yaml",
            "error: --since HEAD:stacks/Pulumi.prod.yaml: git cannot read it (path "
            "'stacks/Pulumi.prod.yaml' does not exist in 'HEAD'); PATH is relative to the "
            "repository's root and must exist in REF",
        ),
        (
            "old.yaml",
            "error: --since old.yaml: no such file; name the stack file as deployed, or REF:PATH",
        ),
    ],
)
def test_an_old_stack_that_cannot_be_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, since: str, expected: str
) -> None:
    monkeypatch.chdir(_repository(tmp_path))
    run = cli("plan", "--stack", "dev", "--since", since)
    assert run.code == 1
    assert len(run.error_lines) == 1
    assert run.error_lines[0].startswith(expected)
    assert run.stdout == ""


def test_an_old_stack_that_does_not_validate_names_its_key(tmp_path: Path) -> None:
    old = write_stack(
        tmp_path, mutated("dev", lambda c: gpu_pool(c).__setitem__("maxCount", -1)), "old.yaml"
    )
    run = cli("plan", "--stack", "dev", "--since", old)
    assert run.code == 1
    assert run.error_lines[0].startswith(f"error: --since {old}: cluster.gpuPools[0].maxCount:")


def test_the_old_run_gives_the_same_change_in_this_process_as_in_a_child(
    more_nodes: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import aksray.cli.since as since

    old, new = more_nodes
    forked = cli("plan", "--config", new, "--since", old, "--json")
    monkeypatch.setattr(since, "_can_fork", lambda: False)
    here = cli("plan", "--config", new, "--since", old, "--json")
    assert json.loads(forked.stdout)["change"] == json.loads(here.stdout)["change"]


def test_a_new_stack_that_does_not_validate_leaves_no_old_run(
    more_nodes: tuple[Path, Path], tmp_path: Path
) -> None:
    import multiprocessing

    old, _ = more_nodes
    broken = write_stack(
        tmp_path, mutated("dev", lambda c: gpu_pool(c).__setitem__("maxCount", -1)), "new.yaml"
    )
    run = cli("plan", "--config", broken, "--since", old)
    assert run.code == 1
    assert run.error_lines[0].startswith("error: cluster.gpuPools[0].maxCount:")
    assert multiprocessing.active_children() == []

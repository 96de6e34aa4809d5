"""`aksray rehearse` refuses what it cannot play with one line, before anything starts: a stack
file it cannot read, a --kubeconfig that names no cluster it can use, a one-cluster scenario
named for a stack with `multikueue` (the default scenario follows the stack)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from aksray.cli.usage import EXIT_PROBLEMS, EXIT_USAGE
from aksray.offline.runner import stack_file
from tests.support.harness import cli


@pytest.fixture(autouse=True)
def nothing_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused means nothing started: a rehearsal that would start fails the test instead."""
    import aksray.rehearse.multikueue.run as multikueue_run
    import aksray.rehearse.run as one_cluster_run

    def started(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a rehearsal started instead of a refusal")

    monkeypatch.setattr(one_cluster_run, "rehearse", started)
    monkeypatch.setattr(multikueue_run, "rehearse_multikueue", started)


def test_a_multikueue_stack_refuses_submit_all_named_on_the_command_line() -> None:
    """submit-all is the default of a one-cluster stack, not a scenario a multiregion stack
    plays: named, it is refused like any other one-cluster scenario (docs/rehearsal.md)."""
    run = cli("rehearse", "--config", stack_file("multiregion"), "--scenario", "submit-all")
    assert run.code == EXIT_PROBLEMS, run.output
    assert run.stderr.splitlines() == [
        "error: --scenario submit-all: a stack with `multikueue` plays the `multikueue` "
        "scenario (the default); the one-cluster scenarios play a stack without `multikueue`"
    ]


def test_a_stack_file_it_cannot_read_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "Pulumi.gone.yaml"
    run = cli("rehearse", "--config", missing)
    assert run.code == EXIT_PROBLEMS, run.output
    assert run.stderr.splitlines() == [
        f"error: {missing}: cannot read the stack file (No such file or directory)"
    ]


def _kubeconfig(tmp_path: Path, server: str, user: dict[str, object]) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
                "clusters": [{"name": "k", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": user}],
            }
        )
    )
    return path


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda t: t / "absent", "cannot read it (No such file or directory)"),
        (lambda t: t, "cannot read it (Is a directory)"),
        (lambda t: (t / "list").write_text("- a\n- b\n") and t / "list",
         "is not a kubeconfig (no contexts, clusters and users)"),
        (lambda t: _kubeconfig(t, "https://127.0.0.1:6443", {"exec": {"command": "kubelogin"}}),
         "its user signs in through a plugin; give a context with a client certificate or a "
         "token (kind's kubeconfig has one)"),
        (lambda t: _kubeconfig(t, f"https://127.0.0.1:{_closed_port()}", {"token": "t"}),
         "cannot reach its cluster at https://127.0.0.1:"),
    ],
    ids=["absent", "a folder", "not a kubeconfig", "exec plugin", "unreachable"],
)  # fmt: skip
def test_a_kubeconfig_it_cannot_use_is_one_usage_line(
    tmp_path: Path, make: object, says: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    run = cli("rehearse", "--stack", "dev", "--kubeconfig", path)
    assert run.code == EXIT_USAGE, run.output
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"error: --kubeconfig {path}: {says}"), line

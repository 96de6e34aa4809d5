"""A stack that sets nothing of its own plans with one warning naming the defaults it used."""

from __future__ import annotations

from pathlib import Path

import pytest

from settings.defaults import DEFAULT_CPU_POOL, DEFAULT_KUBERNETES_VERSION, DEFAULT_LOCATION
from settings.unset import defaults_planned, nothing_set_warning
from tests.support.harness import cli

P = "aks-ray-platform:"


def test_the_defaults_named_are_the_defaults_table() -> None:
    text = defaults_planned()
    assert f"location {DEFAULT_LOCATION}," in text
    assert f"Kubernetes {DEFAULT_KUBERNETES_VERSION}," in text
    assert f"{DEFAULT_CPU_POOL.vm_size} x {DEFAULT_CPU_POOL.min_count}.." in text
    assert "no GPU pool, no team, no workload enabled" in text


@pytest.mark.parametrize(
    "settings", [{}, {"location": DEFAULT_LOCATION}], ids=["nothing", "the default location"]
)
def test_nothing_of_its_own_is_warned(settings: dict[str, str]) -> None:
    warning = nothing_set_warning(settings)
    assert warning is not None and warning.path == "config"
    assert warning.message.startswith(f"sets no {P} setting of its own, so the stack plans ")


@pytest.mark.parametrize("settings", [{"location": "westeurope"}, {"cluster": "{}"}])
def test_any_setting_of_its_own_is_not_warned(settings: dict[str, str]) -> None:
    assert nothing_set_warning(settings) is None


@pytest.mark.parametrize(
    "body",
    [
        "config: {}\n",
        "config:\n",
        "config:\n  azure-native:subscriptionId: 00000000-0000-0000-0000-000000000000\n",
        f"config:\n  {P}location: {DEFAULT_LOCATION}\n",
    ],
    ids=["empty map", "no value", "another namespace only", "only the default location"],
)
def test_plan_gives_one_warning_naming_the_defaults(tmp_path: Path, body: str) -> None:
    stack = tmp_path / "Pulumi.empty.yaml"
    stack.write_text(body)
    run = cli("plan", "--config", stack)
    assert run.code == 0, run.stderr
    assert run.stderr.splitlines() == [
        f"warning: config: sets no {P} setting of its own, so the stack plans every default: "
        f"{defaults_planned()}; a stack that sets nothing is almost always the wrong file or "
        f"keys under another prefix (write `{P}<key>`, or the bare key)"
    ]


def test_the_project_stacks_are_not_warned() -> None:
    run = cli("plan", "--stack", "dev")
    assert "sets no" not in run.stderr

"""Declared against live values (aksray/verify/compare.py), and the command's own failures."""

from __future__ import annotations

import json
from pathlib import Path

from aksray.verify.compare import (
    RIG_DIFFERS_ANNOTATION,
    differences,
    explained,
    inactive,
    rig_differs,
)
from tests.support.harness import cli


def test_what_the_plan_declares_must_be_there_and_equal() -> None:
    declared = {"spec": {"a": 1, "list": [{"q": "64Gi"}, {"q": 2}], "gone": "x"}}
    live = {"spec": {"a": 1, "list": [{"q": "68719476736"}, {"q": 3}], "extra": True}, "status": {}}
    assert differences(declared, live) == [
        ("spec.list[1].q", "is 3, the plan says 2"),
        ("spec.gone", 'is missing, the plan says "x"'),
    ]
    assert differences({"l": [1, 2]}, {"l": [1]}) == [("l", "is [1], the plan says [1, 2]")]
    # a quantity is compared by value, a word is not
    assert differences({"v": "1e11"}, {"v": "100e9"}) == []
    assert differences({"v": "Any"}, {"v": "any"}) == [("v", 'is "any", the plan says "Any"')]


def test_the_rigs_own_differences_are_read_from_its_annotation() -> None:
    obj = {"metadata": {"annotations": {RIG_DIFFERS_ANNOTATION: json.dumps({"a.b": "scaled"})}}}
    differs = rig_differs(obj)
    assert differs == {"a.b": "scaled"}
    assert explained("a.b", differs) == "scaled"
    assert explained("a.b.c", differs) == "scaled"
    assert explained("a.bc", differs) is None
    assert rig_differs({"metadata": {"annotations": {RIG_DIFFERS_ANNOTATION: "not json"}}}) == {}


def test_active_is_the_active_condition() -> None:
    assert inactive({"status": {"conditions": [{"type": "Active", "status": "True"}]}}) is None
    assert inactive({"status": {}}) == "has no Active condition yet"
    stopped = {"type": "Active", "status": "False", "reason": "Stopped", "message": "held"}
    assert inactive({"status": {"conditions": [stopped]}}) == "is not active: Stopped: held"


def test_a_cluster_that_cannot_be_reached_is_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    run = cli("verify", "--stack", "dev", "--kubeconfig", kubeconfig)
    assert run.code == 2
    assert run.stdout == ""
    assert run.stderr.startswith(f"error: --kubeconfig: cannot reach the cluster of {kubeconfig}: ")
    assert len(run.stderr.splitlines()) == 1


def test_a_stack_that_does_not_validate_is_refused_before_the_cluster(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text("config:\n  aks-ray-platform:cluster: {mode: nowhere}\n")
    run = cli("verify", "--config", stack, "--kubeconfig", tmp_path / "absent")
    assert run.code == 1
    assert run.stderr.startswith("error: cluster.mode: ")

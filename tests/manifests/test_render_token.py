"""Render mode never writes the Hugging Face token: with `cluster.renderYamlTo` the stack
registers no token Secret (so the Kubernetes provider has none to write into the YAML), the
pods still read the token from the Secret by name, and `aksray plan` / `aksray render` say what
to create by hand. A stack that applies keeps its Secret, the token a Pulumi secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import run_program
from components.workloads import render_token_warning
from tests.support.harness import P, cli, stack_document, with_runs, write_stack

SECRET = "kubernetes:core/v1:Secret"
RAY_SERVICE = "kubernetes:ray.io/v1:RayService"
CIPHERTEXT = {"secure": "v1:QUJDREVGR0g=:c2VjcmV0"}
PLAIN_TOKEN = "hf_plainTextTokenNeverOnDisk"
WARNING = (
    "cluster.renderYamlTo: the Hugging Face token is left out of the YAML rendered to "
    "out/local-yaml (the provider would write Secret huggingface-token there in plain text); "
    "before applying it, create that Secret in namespace team-a: kubectl create secret generic "
    'huggingface-token --namespace <namespace> --from-literal=token="$HF_TOKEN"'
)


def _with_token(stack: str) -> dict[str, Any]:
    document = stack_document(stack)
    document["config"][P + "huggingfaceToken"] = dict(CIPHERTEXT)
    return document


def test_the_render_stack_registers_no_token_secret(tmp_path: Path) -> None:
    result = run_program(
        write_stack(tmp_path, _with_token("local")), secret_values={"huggingfaceToken": PLAIN_TOKEN}
    )
    assert result.ok, result.problems
    assert result.by_type(SECRET) == []
    assert result.warnings == [WARNING]
    # The endpoint still reads the token from the Secret, by name: created by hand, it works.
    (service,) = result.by_type(RAY_SERVICE)
    cluster = service.inputs["spec"]["rayClusterConfig"]
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert {
        "name": "HF_TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "huggingface-token", "key": "token"}},
    } in head["env"]
    assert PLAIN_TOKEN not in json.dumps([r.to_json() for r in result.resources])


def test_a_stack_that_applies_keeps_its_token_secret(tmp_path: Path) -> None:
    result = run_program(
        write_stack(tmp_path, with_runs(_with_token("dev"))),
        secret_values={"huggingfaceToken": PLAIN_TOKEN},
    )
    assert result.ok, result.problems
    secrets = result.by_type(SECRET)
    assert [s.inputs["metadata"]["namespace"] for s in secrets] == ["team-a"]
    assert secrets[0].inputs["stringData"] == "[secret]"  # the whole map stays a secret
    assert result.warnings == []


def test_without_a_token_the_render_stack_says_nothing(tmp_path: Path) -> None:
    result = run_program(write_stack(tmp_path, stack_document("local")))
    assert result.by_type(SECRET) == []
    assert result.warnings == []


@pytest.mark.parametrize("command", ["plan", "render"])
def test_the_cli_says_so_and_writes_no_secret(tmp_path: Path, command: str) -> None:
    stack = write_stack(tmp_path, _with_token("local"), "Pulumi.local.yaml")
    out = tmp_path / "out"
    args = ("--out", out) if command == "render" else ()
    run = cli(command, "--config", stack, *args)
    assert run.code == 0, run.output
    assert f"warning: {WARNING}" in run.stderr.splitlines()
    if command == "render":
        files = sorted(p.name for p in (out / "kubernetes").iterdir())
        assert files and not [name for name in files if name.startswith("secret-")]


def test_the_warning_names_every_namespace() -> None:
    text = render_token_warning("out/x", ["nlp", "llm-serving"])
    assert "create that Secret in namespaces nlp, llm-serving: kubectl create secret" in text

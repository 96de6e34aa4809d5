"""What `pulumi up` reads from the stack file that an offline plan cannot act out: disabled
default providers (found by the plan: an error where `pulumi up` would refuse a resource) and
Pulumi ESC environments (named: a warning that their values are not in the plan)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.stackfile.reader import load_stack_config
from tests.support.harness import cli, stack_document, write_stack
from tests.support.minimal_stack import config, minimal

KEY = "pulumi:disable-default-providers"


def _plan(tmp_path: Path, document: dict[str, Any] | str) -> tuple[int, list[str]]:
    run = cli("plan", "--config", write_stack(tmp_path, document))
    assert "Traceback" not in run.output
    return run.code, run.stderr.splitlines()


def _default_provider_counts(tmp_path: Path, document: dict[str, Any], packages: str) -> str:
    """`18 azure-native, 1 random`: what the program registers of each package (every resource
    of these packages takes the default provider), read from a plan of the same stack."""
    run = cli("plan", "--config", write_stack(tmp_path / "clean", document), "--json")
    types = [r["type"] for r in json.loads(run.stdout)["resources"]]
    found = {p: sum(t.split(":")[0] == p for t in types) for p in packages.split(", ")}
    return ", ".join(f"{n} {p}" for p, n in found.items())


@pytest.mark.parametrize(
    ("disabled", "packages"),
    [
        # `*` also bars the Python dynamic provider of the deployer's access wait.
        (["*"], "azure-native, pulumi-python, random"),
        (["azure-native", "random"], "azure-native, random"),
    ],
)
def test_disabling_the_default_providers_the_program_uses_is_an_error(
    tmp_path: Path, disabled: list[str], packages: str
) -> None:
    document = minimal()
    (tmp_path / "clean").mkdir()
    counts = _default_provider_counts(tmp_path, document, packages)
    assert all(int(n.split()[0]) > 0 for n in counts.split(", "))
    config(document)[KEY] = disabled
    code, lines = _plan(tmp_path, document)
    assert code == 1
    assert lines == [
        f"error: {KEY}: turns off the default provider of {packages}, but this "
        f"program creates {counts} resources with it (only its Kubernetes "
        "resources have an explicit provider), and `pulumi up` would refuse the first one; "
        f"remove {packages} from the list (or the key); the offline plan does not "
        "apply it"
    ]


def test_disabling_only_the_kubernetes_default_provider_is_fine(tmp_path: Path) -> None:
    document = minimal()
    config(document)[KEY] = ["kubernetes"]
    assert _plan(tmp_path, document) == (0, [])


def test_an_existing_cluster_stack_uses_explicit_providers_only(tmp_path: Path) -> None:
    document = stack_document("local")
    document["config"][KEY] = ["*"]
    code, lines = _plan(tmp_path, document)
    assert code == 0 and not any(KEY in line for line in lines), lines


def test_an_esc_environment_is_named_as_unseen(tmp_path: Path) -> None:
    document = minimal()
    document["environment"] = ["ml-platform/azure-creds", "ml-platform/quotas"]
    code, lines = _plan(tmp_path, document)
    assert (code, lines) == (
        0,
        [
            "warning: environment: the stack file imports Pulumi ESC environments "
            "ml-platform/azure-creds, ml-platform/quotas, whose pulumiConfig `pulumi up` merges "
            "into the config; this plan did not see those values (it reads only config:), so "
            "any key they set is planned at the file's value or the default: see them with "
            "`pulumi env open ml-platform/azure-creds pulumiConfig`, and put them in config: "
            "to plan them"
        ],
    )


@pytest.mark.parametrize(
    ("environment", "names"),
    [
        ("shared", ("shared",)),
        (["a/b"], ("a/b",)),
        ({"imports": ["a/b", {"c/d": {"merge": False}}]}, ("a/b", "c/d")),
        ({"values": {"pulumiConfig": {"x": 1}}}, ("(inline values)",)),
        ([], ()),
        ({"imports": []}, ()),
    ],
)
def test_every_form_of_environment_is_read(
    tmp_path: Path, environment: Any, names: tuple[str, ...]
) -> None:
    text = yaml.safe_dump({"environment": environment, **minimal()})
    assert load_stack_config(write_stack(tmp_path, text)).environments == names


def test_a_stack_file_without_environment_has_none(tmp_path: Path) -> None:
    assert load_stack_config(write_stack(tmp_path, minimal())).environments == ()

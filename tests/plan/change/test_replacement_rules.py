"""catalog/replacement.py against what the providers publish offline: the installed SDKs.

azure-native's force-new metadata is inside its provider binary, but its URL path parameters
are the arguments of each resource's `get_<resource>` invoke, and its API version is in that
invoke's docstring; `location` is create-only on every resource that has one. Every type the
shipped stacks register has a row, and the rows were read at the installed versions."""

from __future__ import annotations

import importlib
import inspect
import re
from importlib.metadata import version
from typing import Any

import pytest

from aksray.plan.change.rules import known_type
from catalog.replacement import (
    AZURE_NATIVE_VERSION,
    AZURE_ROWS,
    GRAFANA_VERSION,
    KUBERNETES_VERSION,
    RANDOM_VERSION,
    AzureRow,
)
from tests.support.harness import planned

STACKS = ("dev", "prod", "local", "multiregion")


@pytest.mark.parametrize(
    ("package", "pinned"),
    [
        ("pulumi-azure-native", AZURE_NATIVE_VERSION),
        ("pulumi-kubernetes", KUBERNETES_VERSION),
        ("pulumi-random", RANDOM_VERSION),
        ("pulumiverse-grafana", GRAFANA_VERSION),
    ],
)
def test_the_rules_were_read_at_the_installed_provider_versions(package: str, pinned: str) -> None:
    """A provider upgrade must bring its rows up to date (and this pin with them)."""
    assert version(package) == pinned


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _inputs(args_class: type) -> dict[str, str]:
    """An input type's wire names -> the annotation of each (as the SDK's getters declare)."""
    getters: list[Any] = [v.fget for v in vars(args_class).values() if isinstance(v, property)]
    return {
        getter._pulumi_name: str(inspect.signature(getter).return_annotation)
        for getter in getters
        if hasattr(getter, "_pulumi_name")
    }


def _sdk(row: AzureRow) -> tuple[Any, dict[str, str], set[str], str]:
    """(the module, the resource's inputs, the get invoke's arguments, its API version)."""
    _, module_name, class_name = row.type.split(":")
    module: Any = importlib.import_module(f"pulumi_azure_native.{module_name}")
    get = getattr(module, f"get_{_snake(class_name)}")
    invoke = set(re.findall(r"__args__\['(\w+)'\]", inspect.getsource(get)))
    found = re.search(r"Uses Azure REST API version (\S+?)\.?\s", inspect.getdoc(get) or "")
    assert found is not None
    return module, _inputs(getattr(module, f"{class_name}Args")), invoke, found.group(1)


def _known_path(module: Any, inputs: dict[str, str], path: str) -> bool:
    """Whether `a` or `a.b` names an input of the resource (b: of a's own input type)."""
    head, _, rest = path.partition(".")
    if head not in inputs:
        return False
    if not rest:
        return True
    nested = re.search(r"(\w+Args)", inputs[head])
    inputs_module = importlib.import_module(f"{module.__name__}._inputs")
    return nested is not None and rest in _inputs(getattr(inputs_module, nested.group(1)))


@pytest.mark.parametrize("row", AZURE_ROWS, ids=lambda row: row.type)
def test_azure_path_parameters_are_the_get_invokes_arguments(row: AzureRow) -> None:
    _, inputs, invoke, api_version = _sdk(row)
    assert set(row.path) | set(row.query) == invoke
    assert set(row.path) <= set(inputs)
    assert not set(row.query) & set(inputs)
    assert row.api_version == api_version


@pytest.mark.parametrize("row", AZURE_ROWS, ids=lambda row: row.type)
def test_azure_create_only_inputs_are_the_resources_own(row: AzureRow) -> None:
    module, inputs, _, _ = _sdk(row)
    create_only = dict(row.create_only)
    assert [p for p in create_only if not _known_path(module, inputs, p)] == []
    # Every tracked resource's location is create-only (common-types TrackedResource).
    assert ("location" in create_only) == ("location" in inputs)


def test_every_type_the_stacks_register_has_replacement_rules() -> None:
    types = {r.type for stack in STACKS for r in planned(stack).resources if r.custom}
    assert {t for t in types if not known_type(t)} == set()
    assert {row.type for row in AZURE_ROWS} == {t for t in types if t.startswith("azure-native:")}


def test_an_unknown_type_is_not_taken_for_a_known_one() -> None:
    assert not known_type("azure-native:compute:VirtualMachine")
    assert not known_type("aws:s3/bucket:Bucket")
    assert known_type("kubernetes:apps/v1:Deployment")

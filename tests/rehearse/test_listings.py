"""A scenario, an invariant or a rig controller is one module plus one line where it is listed
(docs/development.md, "Adding to the rehearsal"): each listing names exactly the modules that
are there, and nothing else in the program names them."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

from aksray.offline.runner import PROJECT_ROOT
from aksray.rehearse import invariants, scenarios
from aksray.rehearse.rig import recipes
from aksray.rehearse.rig.controllers import controllers
from aksray.rehearse.rig.toolchain import RIG_SCRIPTS, read_env_file


def _modules(package: ModuleType, attribute: str) -> set[str]:
    """The modules of `package` that define `attribute`."""
    found = set()
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if hasattr(module, attribute):
            found.add(info.name)
    return found


def _program_files() -> list[Path]:
    tops = ("aksray", "catalog", "settings", "scheduling", "manifests", "components")
    found = sorted(path for top in tops for path in (PROJECT_ROOT / top).rglob("*.py"))
    return [PROJECT_ROOT / "__main__.py", *found]


def _named_in(text: str) -> list[str]:
    """Program files other than the listing and the module itself that hold `text` in quotes."""
    return [
        path.relative_to(PROJECT_ROOT).as_posix()
        for path in _program_files()
        if f'"{text}"' in path.read_text()
    ]


def test_every_scenario_listed_has_its_module_and_every_module_is_listed() -> None:
    listed = {scenarios.module_name(n).rsplit(".", 1)[1] for n in scenarios.SCENARIOS}
    assert listed == _modules(scenarios, "play")


def test_every_sampled_invariant_is_listed_and_has_its_module() -> None:
    listed = {invariants.module_name(n).rsplit(".", 1)[1] for n in invariants.SAMPLED}
    assert listed == _modules(invariants, "watch")
    checks = {name: invariants.watch(name) for name in invariants.SAMPLED}
    assert all(callable(check) for check in checks.values())


@pytest.mark.parametrize("scenario", scenarios.SCENARIOS[1:])
def test_a_scenario_is_named_only_where_it_is_listed(scenario: str) -> None:
    """The command line, the run and `--scenario all` read the listing, not a copy of it."""
    assert _named_in(scenario) == ["aksray/rehearse/scenarios/__init__.py"]


@pytest.mark.parametrize(
    "invariant", [n for n in invariants.SAMPLED if n != "destroy-leaves-nothing"]
)
def test_an_invariant_is_named_only_where_it_is_listed(invariant: str) -> None:
    """MultiKueue's watch reads some verdicts by name: which cluster owns which."""
    named = [n for n in _named_in(invariant) if n != "aksray/rehearse/multikueue/watch.py"]
    assert named == ["aksray/rehearse/invariants/__init__.py"]


def test_every_controller_module_builds_from_a_pin_and_is_started_in_order() -> None:
    pins = read_env_file(RIG_SCRIPTS / "versions.env")
    found = controllers()
    assert [c.NAME for c in found] == ["kueue", "kai-scheduler", "kuberay-operator"]
    assert all(c.BUILD.pin in pins for c in found)
    assert [line.split("\t")[0] for line in recipes.recipes()] == [
        "kueue",
        "kueue-v0.17.1",
        "kai",
        "kuberay",
        "kuberay-v1.6.1",
    ]


def test_a_controller_recipe_is_what_the_build_script_reads() -> None:
    versions = {"KUEUE_VERSION": "v0.19.2"}
    (kueue,) = [c for c in controllers() if c.NAME == "kueue"]
    fields = kueue.BUILD.recipe(versions).split("\t")
    assert fields == [
        "kueue",
        "sigs.k8s.io/kueue",
        "v0.19.2",
        "kueue v0.19.2",
        "kueue=cmd/kueue",
        "-X sigs.k8s.io/kueue/pkg/version.GitVersion=v0.19.2",
        "kueue/crds=config/components/crd/bases/*.yaml "
        "kueue/webhooks.yaml=config/components/webhook/manifests.yaml",
    ]

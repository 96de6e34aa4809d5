"""How `make rig` builds a controller, at its own version and at the one the platform shipped
before: the recipe lines scripts/rig/build.sh reads, and the cache key they leave alone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from aksray.rehearse.rig.controller import GoBuild, versioned_binary, versioned_data
from aksray.rehearse.rig.controllers import kuberay, kueue
from aksray.rehearse.rig.toolchain import RIG_SCRIPTS, read_env_file

PINS = read_env_file(RIG_SCRIPTS / "versions.env")


def fields(line: str) -> list[str]:
    return line.split("\t")


def test_the_previous_pair_is_the_one_microsofts_registry_shipped() -> None:
    assert PINS["KUEUE_PREVIOUS_VERSION"] == "v0.17.1"
    assert PINS["KUBERAY_PREVIOUS_VERSION"] == "v1.6.1"


def test_kueue_at_its_previous_version_builds_beside_the_current_one() -> None:
    line = kueue.BUILD.previous_recipe(PINS)
    assert line is not None
    assert fields(line) == [
        "kueue-v0.17.1",
        "sigs.k8s.io/kueue",
        "v0.17.1",
        "kueue-v0.17.1 v0.17.1",
        "kueue-v0.17.1=cmd/kueue",
        "-X sigs.k8s.io/kueue/pkg/version.GitVersion=v0.17.1",
        "kueue-v0.17.1/crds=config/components/crd/bases/*.yaml "
        "kueue-v0.17.1/webhooks.yaml=config/components/webhook/manifests.yaml",
    ]


def test_kuberay_takes_its_previous_crds_from_its_module_download() -> None:
    line = kuberay.BUILD.previous_recipe(PINS)
    assert line is not None
    piece, _, version, stamp, commands, _, data = fields(line)
    assert (piece, version, stamp) == ("kuberay-v1.6.1", "v1.6.1", "kuberay-v1.6.1 v1.6.1")
    assert commands == "ray-operator-v1.6.1="
    assert data == "kuberay-v1.6.1/crds=config/crd/bases/*.yaml"
    # The current build keeps no data: its CRDs come from the upstream reference data.
    assert fields(kuberay.BUILD.recipe(PINS))[6] == ""


def test_a_controller_without_a_previous_pin_has_no_second_line() -> None:
    build = GoBuild("x", "example.com/x", "X_VERSION", {"x": ""}, previous_pin="X_PREVIOUS")
    assert build.previous_recipe({"X_VERSION": "v1"}) is None
    assert GoBuild("y", "example.com/y", "Y_VERSION", {"y": ""}).previous_recipe(PINS) is None


def test_versioned_names() -> None:
    assert versioned_binary("ray-operator", "v1.6.1") == "ray-operator-v1.6.1"
    assert versioned_data("kueue/crds", "v0.17.1") == "kueue-v0.17.1/crds"
    assert versioned_data("kueue", "v0.17.1") == "kueue-v0.17.1"


def test_the_cache_key_ignores_the_previous_pins(tmp_path: Path) -> None:
    """A previous pin moving must not orphan the built rig: the key names only what runs."""
    copy = tmp_path / "rig"
    shutil.copytree(RIG_SCRIPTS, copy)
    env = copy / "versions.env"
    env.write_text(
        env.read_text(encoding="utf-8")
        .replace("KUEUE_PREVIOUS_VERSION=v0.17.1", "KUEUE_PREVIOUS_VERSION=v0.16.0")
        .replace("KUBERAY_PREVIOUS_VERSION=v1.6.1", "KUBERAY_PREVIOUS_VERSION=v1.5.0"),
        encoding="utf-8",
    )

    def key(scripts: Path) -> str:
        out = subprocess.run(
            [str(scripts / "build.sh"), "--print-dir"], capture_output=True, text=True, check=True
        )
        return Path(out.stdout.strip()).name

    assert key(copy) == key(RIG_SCRIPTS)
    assert key(RIG_SCRIPTS) == (
        "etcdv3.6.16-k8sv1.34.4-kwokv0.8.0-kueuev0.19.2-kuberayv1.6.2-kaiv0.12.0"
    )


def test_the_build_script_reads_every_field_even_an_empty_one() -> None:
    """KAI has data but no ldflags, the previous KubeRay the same: read as tab-separated fields
    with tab as `read`'s separator, the empty field collapsed and the data landed in ldflags
    (the linker refused them, and no CRD was copied)."""
    out = subprocess.run(
        [str(RIG_SCRIPTS / "build.sh"), "--list-controllers"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    listed = {line.split("|")[0]: line.split("|")[1:] for line in out.stdout.splitlines()}
    assert listed["kai"][2:] == ["", "kai/crds=deployments/kai-scheduler/crds/*.yaml"]
    assert listed["kuberay"][1:] == ["ray-operator=", "", ""]
    assert listed["kuberay-v1.6.1"] == [
        "v1.6.1", "ray-operator-v1.6.1=", "", "kuberay-v1.6.1/crds=config/crd/bases/*.yaml"
    ]  # fmt: skip
    assert listed["kueue"][2].startswith("-X sigs.k8s.io/kueue/pkg/version.GitVersion=v0.19.2")

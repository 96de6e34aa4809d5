"""What a rehearsal needs built before it starts, and the versions each report names.

The rig (scripts/rig/build.sh: the control plane and every controller of controllers/), the real
Pulumi engine (scripts/engine/) and the upstream reference data: each missing one is named with
the `make` target that makes it, before anything starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from aksray.rehearse.rig.controller import versioned_binary
from aksray.rehearse.rig.controllers import controllers
from aksray.rehearse.rig.controllers.kai import NAME as KAI
from aksray.rehearse.rig.controllers.kai import NOT_RUN as KAI_NOT_RUN
from aksray.rehearse.rig.toolchain import (
    CONTROL_PLANE_BINARIES,
    ENGINE_BINARIES,
    ENGINE_HOW,
    ENGINE_SCRIPTS,
    RIG_HOW,
    RIG_SCRIPTS,
    EngineToolchain,
    RigToolchain,
    ToolchainMissingError,
    _print_dir,
    read_env_file,
)


def controller_versions(
    tools: RigToolchain, scheduler: str = KAI, previous: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Name -> version of everything the rig runs (what every report names), with what the
    platform ships beside each controller that differs; `previous`: controllers started at their
    previous build, upgraded to the rig's own during the rehearsal."""
    v = tools.versions
    found = {
        "etcd": v["ETCD_VERSION"],
        "kube-apiserver": v["KUBERNETES_VERSION"],
        "kube-controller-manager": v["KUBERNETES_VERSION"],
        "kube-scheduler": v["KUBERNETES_VERSION"],
        "kwok": v["KWOK_VERSION"],
    }
    for controller in controllers():
        build = controller.BUILD
        ran = v[build.pin]
        shipped = v.get(build.shipped_pin, ran) if build.shipped_pin else ran
        found[controller.NAME] = ran if shipped == ran else f"{ran} (the platform ships {shipped})"
        if previous and controller.NAME in previous:
            found[controller.NAME] = f"{previous[controller.NAME]} -> {found[controller.NAME]}"
    if scheduler != KAI:
        found[KAI] = KAI_NOT_RUN
    return found


def rig_binaries() -> tuple[str, ...]:
    """Every binary a built rig has: the control plane's and each controller's."""
    return CONTROL_PLANE_BINARIES + tuple(
        name for controller in controllers() for name in controller.BUILD.commands
    )


def _data_targets(tools: RigToolchain) -> list[tuple[Path, bool]]:
    """(path under data/, whether it is a folder) of every controller's data files."""
    return [
        (tools.data / target, "*" in source)
        for controller in controllers()
        for target, source in controller.BUILD.data.items()
    ]


def _data_there(target: tuple[Path, bool]) -> bool:
    path, folder = target
    return any(path.glob("*")) if folder else path.is_file()


def _rig() -> tuple[RigToolchain, list[str]]:
    versions = read_env_file(RIG_SCRIPTS / "versions.env")
    tools = RigToolchain(_print_dir(RIG_SCRIPTS / "build.sh", "--print-dir"), versions)
    missing = [name for name in rig_binaries() if not os.access(tools.binary(name), os.X_OK)]
    if not (tools.kwok_stages.is_file() and all(map(_data_there, _data_targets(tools)))):
        missing.append("data files")
    return tools, missing


def rig_missing() -> str | None:
    """What the rehearsal rig lacks, with how to build it; None when it is built."""
    tools, missing = _rig()
    if not missing:
        return None
    return f"the rehearsal rig (missing in {tools.root}: {', '.join(missing)}): run {RIG_HOW}"


def rig_toolchain() -> RigToolchain:
    """The rig cache named by `scripts/rig/build.sh --print-dir`, checked to be complete."""
    tools, _ = _rig()
    problem = rig_missing()
    if problem:
        raise ToolchainMissingError(f"not built: {problem}")
    return tools


def _engine() -> tuple[EngineToolchain, list[str]]:
    versions = read_env_file(ENGINE_SCRIPTS / "versions.env")
    bin_dir = _print_dir(ENGINE_SCRIPTS / "bootstrap.sh", "--print-bin-dir")
    missing = [name for name in ENGINE_BINARIES if not os.access(bin_dir / name, os.X_OK)]
    return EngineToolchain(bin_dir, versions), missing


def engine_missing() -> str | None:
    """What the Pulumi engine lacks, with how to build it; None when it is built."""
    engine, missing = _engine()
    if not missing:
        return None
    return f"the Pulumi engine (missing in {engine.bin}: {', '.join(missing)}): run {ENGINE_HOW}"


def engine_toolchain() -> EngineToolchain:
    engine, _ = _engine()
    problem = engine_missing()
    if problem:
        raise ToolchainMissingError(f"not built: {problem}")
    return engine


def previous_versions() -> dict[str, str]:
    """Controller name -> the version the platform shipped before, for every controller with a
    previous build pinned (`<NAME>_PREVIOUS_VERSION`)."""
    versions = read_env_file(RIG_SCRIPTS / "versions.env")
    return {
        c.NAME: versions[c.BUILD.previous_pin]
        for c in controllers()
        if c.BUILD.previous_pin and versions.get(c.BUILD.previous_pin)
    }


def previous_missing() -> str | None:
    """What the rig lacks to start its controllers at their previous versions; None: nothing."""
    tools, _ = _rig()
    missing = []
    for controller in controllers():
        version = previous_versions().get(controller.NAME)
        if version is None:
            continue
        line = controller.BUILD.previous_recipe(tools.versions)
        piece = line.split("\t", 1)[0] if line else controller.NAME
        names = [versioned_binary(name, version) for name in controller.BUILD.commands]
        if not all(os.access(tools.binary(name), os.X_OK) for name in names):
            missing.append(piece)
    if not missing:
        return None
    return (
        f"the previous operator builds (missing in {tools.root}: {', '.join(missing)}): run "
        "`make rig` (builds them beside the rig's own; Kueue's takes about 4 min on 2 cores)"
    )


def missing_prerequisites(*, rig: bool) -> list[str]:
    """Everything a rehearsal needs that is not there, each with the `make` target that makes it:
    the engine, the rig (when it starts one) and the upstream reference data (the shipped KubeRay
    CRDs it installs). Checked before anything starts."""
    from aksray.reference import locate

    found = [engine_missing(), rig_missing() if rig else None]
    if rig and locate() is None:
        found.append(
            "the upstream reference data (the shipped KubeRay CRDs the rig installs): run "
            "`make reference`, or set AKSRAY_REFERENCE to a folder that holds it"
        )
    return [problem for problem in found if problem]

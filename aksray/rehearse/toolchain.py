"""Where the rig's binaries and data are, and what versions they are.

`scripts/rig/build.sh` (`make rig`) builds them from the Go module proxy into a cache keyed by the
pins in `scripts/rig/versions.env`; this module reads the same file, so both sides agree on the
key. The engine (tier T4) comes from `scripts/engine/`, the same way.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

REPO_ROOT: Final = Path(__file__).resolve().parents[2]
RIG_SCRIPTS: Final = REPO_ROOT / "scripts" / "rig"
ENGINE_SCRIPTS: Final = REPO_ROOT / "scripts" / "engine"

RIG_BINARIES: Final = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
    "kueue",
    "ray-operator",
    "kai-scheduler",
    "kai-binder",
    "kai-podgrouper",
    "kai-queuecontroller",
    "kai-admission",
)
ENGINE_BINARIES: Final = (
    "pulumi",
    "pulumi-language-python",
    "pulumi-language-python-exec",
    "pulumi-resource-kubernetes",
)


class ToolchainMissingError(Exception):
    """A binary the rehearsal needs is not built; the message says how to build it."""


def read_env_file(path: Path) -> dict[str, str]:
    """Plain `KEY=value` lines, `#` comments (the format of the versions.env files)."""
    values: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


@dataclass(frozen=True)
class RigToolchain:
    """The built rig: binaries, upstream data files, versions."""

    root: Path
    versions: dict[str, str]

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def binary(self, name: str) -> Path:
        return self.bin / name

    @property
    def kueue_crds(self) -> Path:
        return self.root / "data" / "kueue" / "crds"

    @property
    def kueue_webhooks(self) -> Path:
        return self.root / "data" / "kueue" / "webhooks.yaml"

    @property
    def kai_crds(self) -> Path:
        return self.root / "data" / "kai" / "crds"

    @property
    def kwok_stages(self) -> Path:
        return self.root / "data" / "kwok" / "stages.yaml"

    def controller_versions(self, scheduler: str = "kai-scheduler") -> dict[str, str]:
        """Name -> version of every controller the rig runs (what every report names), with
        what the platform ships beside each one that differs."""
        v = self.versions

        def versus(ran: str, shipped_key: str) -> str:
            shipped = v.get(shipped_key, ran)
            return ran if shipped == ran else f"{ran} (the platform ships {shipped})"

        kai = versus(v["KAI_VERSION"], "KAI_SHIPPED_VERSION")
        return {
            "etcd": v["ETCD_VERSION"],
            "kube-apiserver": v["KUBERNETES_VERSION"],
            "kube-controller-manager": v["KUBERNETES_VERSION"],
            "kube-scheduler": v["KUBERNETES_VERSION"],
            "kwok": v["KWOK_VERSION"],
            "kueue": v["KUEUE_VERSION"],
            "kuberay-operator": versus(v["KUBERAY_VERSION"], "KUBERAY_SHIPPED_VERSION"),
            "kai-scheduler": kai
            if scheduler == "kai-scheduler"
            else "not run (--scheduler kube-scheduler: kube-scheduler binds the Ray pods)",
        }


RIG_HOW: Final = "`make rig` (cold: 30-35 min on 2 free cores, up to 72 when loaded; then cached)"
ENGINE_HOW: Final = "`make engine` (cold: 17-54 min on 2 cores, then cached)"


def _print_dir(script: Path, flag: str) -> Path:
    out = subprocess.run(  # noqa: S603 - our own build script
        [str(script), flag], check=True, capture_output=True, text=True
    )
    return Path(out.stdout.strip())


def _rig() -> tuple[RigToolchain, list[str]]:
    versions = read_env_file(RIG_SCRIPTS / "versions.env")
    tools = RigToolchain(_print_dir(RIG_SCRIPTS / "build.sh", "--print-dir"), versions)
    missing = [name for name in RIG_BINARIES if not os.access(tools.binary(name), os.X_OK)]
    data = (
        tools.kueue_webhooks.is_file()
        and tools.kwok_stages.is_file()
        and any(tools.kai_crds.glob("*.yaml"))
    )
    if not data:
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


@dataclass(frozen=True)
class EngineToolchain:
    """The real Pulumi engine of tier T4."""

    bin: Path
    versions: dict[str, str]


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

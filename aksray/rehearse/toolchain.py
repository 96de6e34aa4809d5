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
    def kwok_stages(self) -> Path:
        return self.root / "data" / "kwok" / "stages.yaml"

    def controller_versions(self) -> dict[str, str]:
        """Name -> version of every controller the rig runs (what every report names)."""
        v = self.versions
        return {
            "etcd": v["ETCD_VERSION"],
            "kube-apiserver": v["KUBERNETES_VERSION"],
            "kube-controller-manager": v["KUBERNETES_VERSION"],
            "kube-scheduler": v["KUBERNETES_VERSION"],
            "kwok": v["KWOK_VERSION"],
            "kueue": v["KUEUE_VERSION"],
            "kuberay-operator": v["KUBERAY_VERSION"],
            "kai-scheduler": "not run (no source served here; kube-scheduler binds instead)",
        }


def rig_toolchain() -> RigToolchain:
    """The rig cache named by `scripts/rig/build.sh --print-dir`, checked to be complete."""
    versions = read_env_file(RIG_SCRIPTS / "versions.env")
    out = subprocess.run(  # noqa: S603 - our own build script
        [str(RIG_SCRIPTS / "build.sh"), "--print-dir"],
        check=True,
        capture_output=True,
        text=True,
    )
    tools = RigToolchain(Path(out.stdout.strip()), versions)
    missing = [name for name in RIG_BINARIES if not os.access(tools.binary(name), os.X_OK)]
    if not tools.kueue_webhooks.is_file() or not tools.kwok_stages.is_file():
        missing.append("data files")
    if missing:
        raise ToolchainMissingError(
            f"the rehearsal rig is not built (missing in {tools.root}: {', '.join(missing)}); "
            "run `make rig` once (about 20-40 minutes on 2 cores, then cached)"
        )
    return tools


@dataclass(frozen=True)
class EngineToolchain:
    """The real Pulumi engine of tier T4."""

    bin: Path
    versions: dict[str, str]


def engine_toolchain() -> EngineToolchain:
    versions = read_env_file(ENGINE_SCRIPTS / "versions.env")
    out = subprocess.run(  # noqa: S603 - our own build script
        [str(ENGINE_SCRIPTS / "bootstrap.sh"), "--print-bin-dir"],
        check=True,
        capture_output=True,
        text=True,
    )
    bin_dir = Path(out.stdout.strip())
    missing = [name for name in ENGINE_BINARIES if not os.access(bin_dir / name, os.X_OK)]
    if missing:
        raise ToolchainMissingError(
            f"the Pulumi engine is not built (missing in {bin_dir}: {', '.join(missing)}); "
            "run `make engine` once (cold: 17-54 min on 2 cores, then cached)"
        )
    return EngineToolchain(bin_dir, versions)

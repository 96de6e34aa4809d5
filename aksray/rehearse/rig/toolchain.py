"""Where the rig's binaries and data are, and what versions they are.

`scripts/rig/build.sh` (`make rig`) builds them from the Go module proxy into a cache keyed by the
pins in `scripts/rig/versions.env`; this module reads the same file, so both sides agree on the
key. The engine (tier T4) comes from `scripts/engine/`, the same way.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

REPO_ROOT: Final = Path(__file__).resolve().parents[3]
RIG_SCRIPTS: Final = REPO_ROOT / "scripts" / "rig"
ENGINE_SCRIPTS: Final = REPO_ROOT / "scripts" / "engine"

# The control plane's binaries; each controller's are in its BUILD (controllers/).
CONTROL_PLANE_BINARIES: Final = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
)
ENGINE_BINARIES: Final = (
    "pulumi",
    "pulumi-language-python",
    "pulumi-language-python-exec",
    "pulumi-resource-kubernetes",
    "pulumi-resource-pulumi-python",
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
    def data(self) -> Path:
        return self.root / "data"

    @property
    def kwok_stages(self) -> Path:
        return self.root / "data" / "kwok" / "stages.yaml"


RIG_HOW: Final = "`make rig` (cold: 30-35 min on 2 free cores, up to 72 when loaded; then cached)"
ENGINE_HOW: Final = "`make engine` (cold: 17-54 min on 2 cores, then cached)"


def _print_dir(script: Path, flag: str) -> Path:
    out = subprocess.run(  # noqa: S603 - our own build script
        [str(script), flag], check=True, capture_output=True, text=True
    )
    return Path(out.stdout.strip())


@dataclass(frozen=True)
class EngineToolchain:
    """The real Pulumi engine of tier T4."""

    bin: Path
    versions: dict[str, str]

"""What a controller of the rig is: how `make rig` builds it and how a rig starts it.

A controller (Kueue, the KubeRay operator, KAI) is one module of aksray/rehearse/rig/controllers/
that declares its `BUILD` (the Go module and version pin `scripts/rig/build.sh` builds it from,
its binaries and the data files it takes from the module download) and its `start(launch)`. The
control plane under them (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)
is the rig's own (controlplane.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aksray.live.kube import Kube
from aksray.rehearse.rig.pki import Pki
from aksray.rehearse.rig.processes import Supervisor


@dataclass(frozen=True)
class GoBuild:
    """How `make rig` builds a controller from the Go module proxy."""

    piece: str  # the build step's name (`scripts/rig/build.sh PIECE` builds it alone)
    module: str  # the Go module
    pin: str  # its version's key in scripts/rig/versions.env
    # binary name (in bin/) -> package, relative to the module ("" is the module itself)
    commands: Mapping[str, str]
    ldflags: str = ""  # `{module}` and `{version}` are filled in
    # path under data/ -> a file or a `*` glob of the module download; a glob fills a folder
    data: Mapping[str, str] = field(default_factory=dict)
    # versions.env key of the version the platform ships, when the proxy serves another
    shipped_pin: str = ""
    # versions.env key of the version the platform shipped before (an upgrade rehearsal starts
    # there): built beside the current one, as bin/<binary>-<version> and data/<top>-<version>/
    previous_pin: str = ""
    # the data files of the previous build, where they differ from `data` (None: `data`)
    previous_data: Mapping[str, str] | None = None

    def stamp(self, version: str, piece: str = "") -> str:
        """What the build records for a built piece (a change rebuilds it)."""
        packages = [package.rsplit("/", 1)[-1] for package in self.commands.values()]
        several = " " + " ".join(packages) if len(packages) > 1 else ""
        return f"{piece or self.piece} {version}{several}"

    def recipe(self, versions: Mapping[str, str]) -> str:
        """One line of `python -m aksray.rehearse.rig.recipes` for scripts/rig/build.sh."""
        return self._line(self.piece, versions[self.pin], dict(self.commands), dict(self.data))

    def previous_recipe(self, versions: Mapping[str, str]) -> str | None:
        """The line that builds the previous version beside the current one; None without one."""
        version = versions.get(self.previous_pin) if self.previous_pin else None
        if not version:
            return None
        data = self.data if self.previous_data is None else self.previous_data
        return self._line(
            f"{self.piece}-{version}",
            version,
            {versioned_binary(name, version): package for name, package in self.commands.items()},
            {versioned_data(target, version): source for target, source in data.items()},
        )

    def _line(
        self, piece: str, version: str, commands: dict[str, str], data: dict[str, str]
    ) -> str:
        fields = [
            piece,
            self.module,
            version,
            self.stamp(version, piece),
            " ".join(f"{name}={package}" for name, package in commands.items()),
            self.ldflags.format(module=self.module, version=version),
            " ".join(f"{target}={source}" for target, source in data.items()),
        ]
        return "\t".join(fields)


def versioned_binary(name: str, version: str) -> str:
    """bin/ name of a controller's binary built at another version than the rig's own."""
    return f"{name}-{version}"


def versioned_data(target: str, version: str) -> str:
    """data/ path of a controller's data file at another version: its top folder gains it."""
    top, _, rest = target.partition("/")
    return f"{top}-{version}/{rest}" if rest else f"{top}-{version}"


@dataclass(frozen=True)
class Launch:
    """What a controller gets to start on a rig whose control plane runs."""

    supervisor: Supervisor
    binary: Callable[[str], Path]  # bin/<name> of the built rig
    data: Path  # data/ of the built rig
    pki: Pki
    kubeconfig: Path
    kube: Kube
    run_dir: Path
    kuberay_etc: Path  # the KubeRay operator's private /etc (its hosts file)
    # per controller name, what the stack configures it with; a controller whose entry is
    # None does not run (KAI with --scheduler kube-scheduler)
    options: Mapping[str, Any]
    # per controller name, the version it runs at when not the rig's own (its previous build)
    versions: Mapping[str, str] = field(default_factory=dict)

    def binary_of(self, controller: str, name: str) -> Path:
        """bin/ file of `controller`'s binary `name`, at the version it runs at here."""
        version = self.versions.get(controller)
        return self.binary(versioned_binary(name, version) if version else name)

    def data_of(self, controller: str, target: str) -> Path:
        """data/ path of `controller`'s data file `target`, at the version it runs at here."""
        version = self.versions.get(controller)
        return self.data / (versioned_data(target, version) if version else target)

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

    def stamp(self, version: str) -> str:
        """What the build records for a built piece (a change rebuilds it)."""
        packages = [package.rsplit("/", 1)[-1] for package in self.commands.values()]
        several = " " + " ".join(packages) if len(packages) > 1 else ""
        return f"{self.piece} {version}{several}"

    def recipe(self, versions: Mapping[str, str]) -> str:
        """One line of `python -m aksray.rehearse.rig.recipes` for scripts/rig/build.sh."""
        version = versions[self.pin]
        fields = [
            self.piece,
            self.module,
            version,
            self.stamp(version),
            " ".join(f"{name}={package}" for name, package in self.commands.items()),
            self.ldflags.format(module=self.module, version=version),
            " ".join(f"{target}={source}" for target, source in self.data.items()),
        ]
        return "\t".join(fields)


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

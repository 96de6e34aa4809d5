"""Where a rehearsal runs: the rig it starts (its controllers configured as the stack configures
them), or a cluster of the user's."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import yaml

from aksray.live.kube import Kube, credentials_from_kubeconfig
from aksray.rehearse.rig.bringup import start_rig
from aksray.rehearse.rig.controllers.kai import KaiSetup
from aksray.rehearse.rig.controllers.kueue import pods_ready_note
from aksray.rehearse.rig.controlplane import (
    CLUSTER_DOMAIN,
    KUBECONFIG_CONTEXT,
    ControlPlane,
    remove_run_data,
)
from aksray.rehearse.rig.dashboard import DashboardState, HeadHosts, StandInDashboard
from aksray.rehearse.rig.prerequisites import controller_versions, rig_toolchain
from aksray.rehearse.rig.processes import Supervisor
from manifests.helm_values import kueue_manager_config

if TYPE_CHECKING:
    from settings.model import Settings

KUBE_SCHEDULER_NOTE = (
    "--scheduler kube-scheduler: no KAI on this rig, kube-scheduler binds the Ray pods one by one "
    "(no gangs), as a comparison with what the platform ships"
)
KAI: Final = "kai-scheduler"
KUBE_SCHEDULER: Final = "kube-scheduler"
SCHEDULERS: Final = (KAI, KUBE_SCHEDULER)
Progress = Callable[[str], None]


def quiet(_line: str) -> None:
    """No progress shown (not a terminal)."""


@dataclass
class Target:
    """Where a rehearsal runs: the rig it started, or the user's cluster."""

    kube: Kube
    kubeconfig: Path
    context: str
    controllers: dict[str, str]
    hosts: HeadHosts | None = None
    dashboard: DashboardState | None = None
    supervisor: Supervisor | None = None
    notes: list[str] = field(default_factory=list)
    plane: ControlPlane | None = None  # the rig's control plane (None on the user's cluster)


@contextlib.contextmanager
def target(
    kubeconfig: Path | None,
    run_dir: Path,
    settings: Settings,
    scheduler: str = KAI,
    progress: Progress = quiet,
    *,
    versions: Mapping[str, str] | None = None,
) -> Iterator[Target]:
    """The cluster to rehearse on: the user's (`kubeconfig`), or a rig whose Kueue runs the
    configuration the stack's Kueue release would get and whose KAI runs what the stack's KAI
    runs (`scheduler` KUBE_SCHEDULER: no KAI, kube-scheduler binds the Ray pods); `versions`:
    controllers the rig starts at their previous build (an upgrade rehearsal)."""
    if kubeconfig is not None:
        config = yaml.safe_load(kubeconfig.read_text(encoding="utf-8")) or {}
        kube = Kube(credentials_from_kubeconfig(kubeconfig))
        version = (kube.get_or_none("/version") or {}).get("gitVersion", "unknown")
        yield Target(
            kube,
            kubeconfig,
            str(config.get("current-context", "")),
            {"kubernetes": str(version), "cluster": f"the current context of {kubeconfig}"},
            notes=[
                "a cluster of your own: no stand-in Ray dashboard, so a RayJob stays Running "
                "until KubeRay's status-check timeout fails it; admission, preemption and "
                "binding are the cluster's own controllers'"
            ],
        )
        return
    tools = rig_toolchain()
    kueue_config = kueue_manager_config(metrics=False, pods_ready=settings.scheduling.pods_ready)
    kai = KaiSetup.of(settings) if scheduler == KAI else None
    progress(f"starting the rig (etcd, kube-apiserver, controllers, Kueue, {scheduler}, KubeRay)")
    plane = start_rig(tools, run_dir, kueue_config, kai, versions)
    progress(f"rig up in {plane.timings.get('total', 0):.1f}s")
    state = DashboardState()
    dashboard = StandInDashboard(plane.dashboard_address, plane.node_address, state)
    try:
        notes = [
            *(plane.notes if kai is not None else [KUBE_SCHEDULER_NOTE]),
            pods_ready_note(kueue_config),
            f"rig bring-up {plane.timings.get('total', 0):.1f}s",
        ]
        yield Target(
            plane.kube,
            plane.kubeconfig,
            KUBECONFIG_CONTEXT,
            controller_versions(tools, scheduler, versions),
            HeadHosts(plane.kuberay_etc, plane.dashboard_address, CLUSTER_DOMAIN),
            state,
            plane.supervisor,
            notes,
            plane,
        )
    finally:
        dashboard.close()
        plane.stop()
        remove_run_data(run_dir)

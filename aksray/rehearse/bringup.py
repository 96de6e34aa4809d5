"""Start a whole rig and hand back a running ControlPlane (or stop what started and fail)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from aksray.reference import HOW_TO_GET, crds_dir, locate
from aksray.rehearse.controlplane import (
    ControlPlane,
    Timer,
    apply_crds,
    credentials,
    free_loopback,
    kuberay_private_etc,
    start_apiserver,
    start_controllers,
    start_etcd,
    write_kubeconfig,
)
from aksray.rehearse.dashboard import DASHBOARD_PORT, SERVE_PORT
from aksray.rehearse.kube import Kube
from aksray.rehearse.operators import start_kuberay, start_kueue
from aksray.rehearse.pki import make_pki
from aksray.rehearse.processes import RigError, Supervisor
from aksray.rehearse.toolchain import RigToolchain


def shipped_crds() -> list[Path]:
    """KubeRay's and KAI's CRDs at the versions the platform ships (the rig's operator is older:
    it reads its own fields and ignores the newer ones), from the upstream reference data."""
    base = locate()
    files = (
        sorted(crds_dir(base, "kuberay").glob("*.yaml"))
        + sorted(crds_dir(base, "kai").glob("*.yaml"))
        if base
        else []
    )
    if not files:
        raise RigError(f"no KubeRay/KAI CRDs of the upstream reference data: {HOW_TO_GET}")
    return files


def start_rig(tools: RigToolchain, run_dir: Path, kueue_config: dict[str, Any]) -> ControlPlane:
    """etcd, apiserver, CRDs, controller manager, scheduler, kwok, Kueue (with `kueue_config`,
    the stack's Kueue Configuration), KubeRay."""
    supervisor = Supervisor(run_dir / "logs")
    timings: dict[str, float] = {}
    timer = Timer(timings)
    t0 = time.monotonic()
    try:
        with timer.step("pki"):
            pki = make_pki(run_dir / "pki")
        with timer.step("etcd"):
            etcd = start_etcd(supervisor, tools, run_dir)
        with timer.step("kube-apiserver"):
            server = start_apiserver(supervisor, tools, pki, etcd)
        kubeconfig = run_dir / "kubeconfig"
        write_kubeconfig(kubeconfig, server, pki)
        kube = Kube(credentials(server, pki))
        with timer.step("crds"):
            apply_crds(kube, supervisor, sorted(tools.kueue_crds.glob("*.yaml")) + shipped_crds())
        dashboard_address, node_address = free_loopback(DASHBOARD_PORT), free_loopback(SERVE_PORT)
        with timer.step("controllers"):
            start_controllers(supervisor, tools, pki, kubeconfig, node_address)
        with timer.step("kueue"):
            start_kueue(
                supervisor,
                tools=tools,
                pki=pki,
                kubeconfig=kubeconfig,
                kube=kube,
                run_dir=run_dir,
                platform=kueue_config,
            )
        etc = kuberay_private_etc(run_dir)
        with timer.step("kuberay"):
            start_kuberay(supervisor, tools, kubeconfig, etc)
    except BaseException:
        supervisor.stop_all()
        raise
    timings["total"] = round(time.monotonic() - t0, 2)
    return ControlPlane(
        tools, run_dir, supervisor, pki, kubeconfig, kube, etc, dashboard_address, node_address,
        timings,
    )  # fmt: skip

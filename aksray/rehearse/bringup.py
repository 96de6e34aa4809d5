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
from aksray.rehearse.kai import KaiSetup, start_kai
from aksray.rehearse.kube import Kube
from aksray.rehearse.operators import start_kuberay, start_kueue
from aksray.rehearse.pki import make_pki
from aksray.rehearse.processes import RigError, Supervisor
from aksray.rehearse.toolchain import RigToolchain
from catalog.kai import PLACING_ACTION
from manifests.helm_values import KAI_SCHEDULER_NAME

# The KAI of a stack that installs the operators with the NVIDIA driver from the GPU Operator.
DEFAULT_KAI = KaiSetup((PLACING_ACTION,), gpu_sharing=False, runtime_class="nvidia")


def shipped_crds() -> list[Path]:
    """KubeRay's CRDs at the version the platform ships, from the upstream reference data. KAI's
    come from the rig's own KAI (its controllers read and write PodGroups and BindRequests of
    their own version)."""
    base = locate()
    files = sorted(crds_dir(base, "kuberay").glob("*.yaml")) if base else []
    if not files:
        raise RigError(f"no KubeRay CRDs of the upstream reference data: {HOW_TO_GET}")
    return files


def start_rig(
    tools: RigToolchain,
    run_dir: Path,
    kueue_config: dict[str, Any],
    kai: KaiSetup | None = DEFAULT_KAI,
) -> ControlPlane:
    """etcd, apiserver, CRDs, controller manager, kube-scheduler, kwok, Kueue (with
    `kueue_config`, the stack's Kueue Configuration), KAI (`kai`: what the stack's KAI runs;
    None: kube-scheduler binds the Ray pods, without gangs), KubeRay with KAI as its batch
    scheduler."""
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
            crds = sorted(tools.kueue_crds.glob("*.yaml")) + sorted(tools.kai_crds.glob("*.yaml"))
            apply_crds(kube, supervisor, crds + shipped_crds())
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
        notes: list[str] = []
        if kai is not None:
            with timer.step("kai"):
                notes += start_kai(
                    supervisor, tools=tools, pki=pki, kubeconfig=kubeconfig, kube=kube,
                    run_dir=run_dir, setup=kai,
                ).notes()  # fmt: skip
        etc = kuberay_private_etc(run_dir)
        with timer.step("kuberay"):
            start_kuberay(
                supervisor, tools, kubeconfig, etc, KAI_SCHEDULER_NAME if kai is not None else None
            )
    except BaseException:
        supervisor.stop_all()
        raise
    timings["total"] = round(time.monotonic() - t0, 2)
    return ControlPlane(
        tools, run_dir, supervisor, pki, kubeconfig, kube, etc, dashboard_address, node_address,
        timings, notes,
    )  # fmt: skip

"""Start a whole rig and hand back a running ControlPlane (or stop what started and fail)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from aksray.live.kube import Kube
from aksray.rehearse.rig.controller import Launch
from aksray.rehearse.rig.controllers import controllers
from aksray.rehearse.rig.controllers.kai import NAME as KAI
from aksray.rehearse.rig.controllers.kai import KaiSetup
from aksray.rehearse.rig.controllers.kuberay import NAME as KUBERAY
from aksray.rehearse.rig.controllers.kueue import NAME as KUEUE
from aksray.rehearse.rig.controlplane import (
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
from aksray.rehearse.rig.dashboard import DASHBOARD_PORT, SERVE_PORT
from aksray.rehearse.rig.pki import make_pki
from aksray.rehearse.rig.processes import Supervisor
from aksray.rehearse.rig.stand_ins import stand_ins, write_stand_ins
from aksray.rehearse.rig.toolchain import RigToolchain
from catalog.kai import PLACING_ACTION
from manifests.helm_values import KAI_SCHEDULER_NAME

# The KAI of a stack that installs the operators with the NVIDIA driver from the GPU Operator.
DEFAULT_KAI = KaiSetup((PLACING_ACTION,), gpu_sharing=False, runtime_class="nvidia")


def start_rig(
    tools: RigToolchain,
    run_dir: Path,
    kueue_config: dict[str, Any],
    kai: KaiSetup | None = DEFAULT_KAI,
    versions: Mapping[str, str] | None = None,
) -> ControlPlane:
    """etcd, apiserver, CRDs, controller manager, kube-scheduler, kwok, Kueue (with
    `kueue_config`, the stack's Kueue Configuration), KAI (`kai`: what the stack's KAI runs;
    None: kube-scheduler binds the Ray pods, without gangs), KubeRay with KAI as its batch
    scheduler. `versions`: controllers (by name) started at their previous build instead, with
    that version's CRDs."""
    versions = dict(versions or {})
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
        running = controllers()
        with timer.step("crds"):
            files = [
                f
                for c in running
                for f in (
                    c.crds(tools.data, versions[c.NAME])
                    if c.NAME in versions
                    else c.crds(tools.data)
                )
            ]
            apply_crds(kube, supervisor, files)
        dashboard_address, node_address = free_loopback(DASHBOARD_PORT), free_loopback(SERVE_PORT)
        with timer.step("controllers"):
            start_controllers(supervisor, tools, pki, kubeconfig, node_address)
        etc = kuberay_private_etc(run_dir)
        launch = Launch(
            supervisor, tools.binary, tools.data, pki, kubeconfig, kube, run_dir, etc,
            {
                KUEUE: kueue_config,
                KAI: kai,
                KUBERAY: KAI_SCHEDULER_NAME if kai is not None else None,
            },
            versions,
        )  # fmt: skip
        notes: list[str] = []
        for controller in running:
            with timer.step(controller.BUILD.piece):
                notes += controller.start(launch)
        with timer.step("stand-ins"):
            kai_file = run_dir / "kai-scheduler.yaml"
            write_stand_ins(
                kube,
                stand_ins(
                    tools.versions,
                    yaml.safe_load((run_dir / "kueue.yaml").read_text(encoding="utf-8")),
                    yaml.safe_load(kai_file.read_text(encoding="utf-8")) if kai else None,
                ),
            )
    except BaseException:
        supervisor.stop_all()
        raise
    timings["total"] = round(time.monotonic() - t0, 2)
    return ControlPlane(
        tools, run_dir, supervisor, pki, kubeconfig, kube, etc, dashboard_address, node_address,
        timings, notes, launch,
    )  # fmt: skip

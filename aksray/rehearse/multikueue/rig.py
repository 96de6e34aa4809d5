"""A MultiKueue rig: a manager control plane and one per worker, each started as the one-cluster
rig starts (aksray/rehearse/rig/bringup.py `start_rig`), and one kubeconfig with a context per
cluster, named after it, which the real Pulumi engine applies the stack with.

- The manager runs Kueue with MultiKueue and a KubeRay operator (v1.6.2 honours `managedBy`: it
  leaves a dispatched RayJob alone) and no KAI and no nodes: it runs no job.
- Each worker runs Kueue, KAI and KubeRay with the worker's own settings, kwok nodes shaped like
  the worker's pools, and a stand-in Ray dashboard of its own, so its RayJobs run and finish.
- Nothing of the stack is on any of them: `pulumi up` creates it all (aksray/rehearse/multikueue/
  run.py), the manager's kubeconfig for each worker included (the program reads the token the
  worker's controller manager mints for the manager's account, as on AKS).

A worker can be lost (its API server stopped: the manager's connection fails as when a region is
unreachable) and brought back on the same address.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import yaml

from aksray.live.kube import Discovery, Kube
from aksray.rehearse.multikueue.stack import MANAGER
from aksray.rehearse.rig.bringup import start_rig
from aksray.rehearse.rig.controllers.kai import KaiSetup
from aksray.rehearse.rig.controlplane import (
    CLUSTER_DOMAIN,
    ControlPlane,
    Timer,
    https_ok,
    remove_run_data,
)
from aksray.rehearse.rig.dashboard import DashboardState, HeadHosts, StandInDashboard
from aksray.rehearse.rig.footprint import Nodes
from aksray.rehearse.rig.toolchain import RigToolchain
from manifests.helm_values import kueue_manager_config

if TYPE_CHECKING:
    from settings.model import Settings

# Kueue keeps a lost worker's job admitted this long before requeuing it (MultiKueue
# `workerLostTimeout`, 15 min by default, which the platform keeps); the rig shortens it so a
# scenario shows the requeue in seconds, and every report says so.
RIG_WORKER_LOST_TIMEOUT: Final = "30s"
UPSTREAM_WORKER_LOST_TIMEOUT: Final = "15m"
APISERVER: Final = "kube-apiserver"
MULTIKUEUE_API: Final = "/apis/kueue.x-k8s.io/v1beta2"


def manager_kueue_config(settings: Settings) -> dict[str, Any]:
    """The manager's Kueue Configuration as the stack's release gets it, with MultiKueue's
    worker-lost timeout shortened for the rig."""
    config = worker_kueue_config(settings)
    config["multiKueue"] = {"workerLostTimeout": RIG_WORKER_LOST_TIMEOUT}
    return config


def worker_kueue_config(settings: Settings) -> dict[str, Any]:
    """A worker's Kueue Configuration as the stack's release gets it (MultiKueue's gates on)."""
    return kueue_manager_config(
        metrics=False, pods_ready=settings.scheduling.pods_ready, multikueue=True
    )


def worker_lost_note() -> str:
    return (
        f"Kueue MultiKueue workerLostTimeout {UPSTREAM_WORKER_LOST_TIMEOUT} (upstream's default, "
        f"which the platform keeps) runs as {RIG_WORKER_LOST_TIMEOUT} on the rig"
    )


@dataclass
class Member:
    """One control plane of the rig and what the rig drives on it."""

    name: str
    plane: ControlPlane
    settings: Settings  # the cluster's own (scheduling/multikueue.py)
    discovery: Discovery
    dashboard: DashboardState | None = None
    stand_in: StandInDashboard | None = None
    hosts: HeadHosts | None = None
    nodes: Nodes | None = None
    lost: bool = False
    paused: bool = False  # not observed (a returned worker while its stale copy goes)

    @property
    def kube(self) -> Kube:
        return self.plane.kube

    @property
    def server(self) -> str:
        return self.plane.kube.credentials.server

    def lose(self) -> None:
        """Kill the API server at once, as a region cut off (its controllers stay up, cut off
        too; a graceful stop would wait for every open watch)."""
        process = self._apiserver()
        process.popen.kill()
        process.popen.wait(timeout=30)
        self.lost = True

    def restore(self) -> None:
        """Start the API server again with the same arguments (address, port, etcd)."""
        process = self._apiserver()
        supervisor = self.plane.supervisor
        supervisor.processes.remove(process)
        argv = [str(a) for a in process.popen.args]
        supervisor.start(APISERVER, argv)
        ready = f"{self.server}/readyz"
        supervisor.wait_for(
            f"{self.name} kube-apiserver /readyz", lambda: https_ok(ready, self.plane.pki), 120
        )
        # Ready before its watch caches are: a list answers 429 until they are filled.
        supervisor.wait_for(f"{self.name} kube-apiserver to serve lists", self._lists, 120, 0.5)
        self.lost = False

    def _lists(self) -> bool:
        for path in (
            "/apis/ray.io/v1/rayclusters",
            "/apis/ray.io/v1/rayjobs",
            "/apis/ray.io/v1/rayservices",
            "/apis/kueue.x-k8s.io/v1beta2/resourceflavors",
            "/api/v1/secrets",
            "/apis/kueue.x-k8s.io/v1beta2/workloads",
            "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
            "/api/v1/pods",
            "/api/v1/services",
            "/api/v1/nodes",
        ):
            self.kube.items(path)
        return True

    def _apiserver(self) -> Any:
        return self._process(APISERVER)

    def _process(self, name: str) -> Any:
        return next(p for p in self.plane.supervisor.processes if p.name == name)


@dataclass
class MultiKueueRig:
    manager: Member
    workers: dict[str, Member]
    run_dir: Path
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def members(self) -> list[Member]:
        return [self.manager, *self.workers.values()]

    def peak_memory_mib(self) -> dict[str, int]:
        """Per control plane, the peak resident memory of its processes so far (summed)."""
        return {m.name: m.plane.supervisor.peak_memory_mib() for m in self.members}

    def write_kubeconfig(self, path: Path) -> Path:
        """One kubeconfig, a context per cluster named after it (what the stack's providers
        name), each with that control plane's CA and admin client certificate."""
        clusters, users, contexts = [], [], []
        for member in self.members:
            own = yaml.safe_load(member.plane.kubeconfig.read_text(encoding="utf-8"))
            clusters.append({"name": member.name, "cluster": own["clusters"][0]["cluster"]})
            users.append({"name": member.name, "user": own["users"][0]["user"]})
            contexts.append(
                {"name": member.name, "context": {"cluster": member.name, "user": member.name}}
            )
        document = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": MANAGER,
            "clusters": clusters,
            "users": users,
            "contexts": contexts,
        }
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        path.chmod(0o600)
        return path

    def servers(self) -> dict[str, str]:
        """Each worker's API server address, as the manager's Kueue reaches it."""
        return {name: member.server for name, member in self.workers.items()}

    def stop(self) -> None:
        for member in reversed(self.members):
            if member.stand_in is not None:
                member.stand_in.close()
            member.plane.stop()
            remove_run_data(member.plane.run_dir)


def _start_member(
    tools: RigToolchain, run_dir: Path, name: str, settings: Settings, worker: bool
) -> Member:
    if worker:
        plane = start_rig(
            tools, run_dir / name, worker_kueue_config(settings), KaiSetup.of(settings)
        )
    else:
        plane = start_rig(tools, run_dir / name, manager_kueue_config(settings), None)
    member = Member(name, plane, settings, Discovery(plane.kube))
    if worker:
        member.dashboard = DashboardState()
        member.stand_in = StandInDashboard(
            plane.dashboard_address, plane.node_address, member.dashboard
        )
        member.hosts = HeadHosts(plane.kuberay_etc, plane.dashboard_address, CLUSTER_DOMAIN)
        member.nodes = Nodes(plane.kube, settings, run_dir.name)
        member.nodes.all_at_max()
    return member


def start_multikueue_rig(
    tools: RigToolchain,
    run_dir: Path,
    settings: dict[str, Settings],
    progress: Callable[[str], None],
) -> MultiKueueRig:
    """`settings`: the manager's (key MANAGER) and each worker's, in stack order."""
    members: list[Member] = []
    timings: dict[str, float] = {}
    timer = Timer(timings)
    t0 = time.monotonic()
    try:
        for name, cluster in settings.items():
            progress(f"starting the {name} control plane")
            with timer.step(name):
                members.append(_start_member(tools, run_dir, name, cluster, name != MANAGER))
    except BaseException:
        for member in reversed(members):
            member.plane.stop()
            remove_run_data(member.plane.run_dir)
        raise
    timings["control planes"] = round(time.monotonic() - t0, 2)
    manager = next(m for m in members if m.name == MANAGER)
    rig = MultiKueueRig(
        manager,
        {m.name: m for m in members if m.name != MANAGER},
        run_dir,
        timings,
        [worker_lost_note()],
    )
    rig.notes += next(m for m in members if m.name != MANAGER).plane.notes
    return rig


def stale_copy(member: Member, namespace: str, job_name: str) -> list[str]:
    """What of a dispatched RayJob is still in a worker: its Workload, the RayJob, its pods."""
    found = [
        f"Workload {w['metadata']['name']}"
        for w in member.kube.items(f"{MULTIKUEUE_API}/namespaces/{namespace}/workloads")
        if w["metadata"]["name"].startswith(f"rayjob-{job_name}-")
    ]
    if member.kube.get_or_none(f"/apis/ray.io/v1/namespaces/{namespace}/rayjobs/{job_name}"):
        found.append(f"RayJob {job_name}")
    pods = member.kube.items(f"/api/v1/namespaces/{namespace}/pods", "ray.io/node-type")
    found += [
        f"pod {p['metadata']['name']}" for p in pods if p["metadata"]["name"].startswith(job_name)
    ]
    return found

"""The KubeRay operator as a host process, configured as the stack configures it.

It runs with KAI as its batch scheduler, as the platform's chart values set it
(`batchScheduler.name`), so KAI places every Ray pod (controllers/kai.py); with
`--scheduler kube-scheduler` it runs without one and kube-scheduler binds the Ray pods one by one.
It builds head Service names under CLUSTER_DOMAIN; its private hosts file maps each to the
stand-in dashboard. Its CRDs are the version the platform ships, from the upstream reference
data (the module download has the operator's, not the chart's).

It signs in as the user it is in a cluster, `system:serviceaccount:kuberay-system:kuberay-operator`
(a client certificate of its own, pki.py), the one identity the admission policies let create
GPU pods and RayClusters in team namespaces (manifests/access/admission.py). The certificate also
carries `system:masters`: the rig does not install the chart's ClusterRole, which grants
KubeRay what it needs in a cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from aksray.reference import HOW_TO_GET, crds_dir, locate
from aksray.rehearse.rig.controller import GoBuild, Launch, versioned_data
from aksray.rehearse.rig.controlplane import CLUSTER_DOMAIN, free_port, http_ok, write_kubeconfig
from aksray.rehearse.rig.pki import client_certificate
from aksray.rehearse.rig.processes import RigError, Supervisor
from manifests.access.admission import KUBERAY_USER

NAME: Final = "kuberay-operator"
ORDER: Final = 30  # last: it creates Ray pods, which KAI (when it runs) must be there to place
BUILD: Final = GoBuild(
    piece="kuberay",
    module="github.com/ray-project/kuberay/ray-operator",
    pin="KUBERAY_VERSION",
    commands={"ray-operator": ""},
    shipped_pin="KUBERAY_SHIPPED_VERSION",
    previous_pin="KUBERAY_PREVIOUS_VERSION",
    # The previous version has no reference copy: its CRDs come from its module download, where
    # the chart's crds/ come from (byte-identical at v1.6.2: reference/SOURCES.md).
    previous_data={"kuberay/crds": "config/crd/bases/*.yaml"},
)


def crds(data: Path, version: str | None = None) -> list[Path]:
    """KubeRay's CRDs at the version the platform ships, from the upstream reference data; at
    `version` (its previous build), from that version's module download."""
    if version:
        return sorted((data / versioned_data("kuberay/crds", version)).glob("*.yaml"))
    base = locate()
    files = sorted(crds_dir(base, "kuberay").glob("*.yaml")) if base else []
    if not files:
        raise RigError(f"no KubeRay CRDs of the upstream reference data: {HOW_TO_GET}")
    return files


def start(launch: Launch) -> list[str]:
    """The operator, with the batch scheduler `options["kuberay-operator"]` names (None: none),
    signed in as its service account."""
    own = client_certificate(launch.pki, "kuberay", KUBERAY_USER, ("system:masters",))
    kubeconfig = launch.run_dir / "kuberay.kubeconfig"
    write_kubeconfig(kubeconfig, launch.kube.credentials.server, own)
    start_kuberay(
        launch.supervisor, launch.binary_of(NAME, "ray-operator"), kubeconfig, launch.kuberay_etc,
        launch.options.get(NAME),
    )  # fmt: skip
    return [f"the KubeRay operator signs in as {KUBERAY_USER}, its user in a cluster"]


def start_kuberay(
    sup: Supervisor,
    binary: Path,
    kubeconfig: Path,
    etc: Path,
    batch_scheduler: str | None,
) -> None:
    """The operator, with `batch_scheduler` as the platform configures it (KAI: every Ray pod
    gets KAI's scheduler name and its cluster's queue label); None: none, kube-scheduler binds."""
    metrics_port, probe_port = free_port(), free_port()
    scheduler = [f"--batch-scheduler={batch_scheduler}"] if batch_scheduler else []
    sup.start(
        "kuberay-operator",
        [
            str(binary),
            "--enable-leader-election=false",
            f"--metrics-addr=127.0.0.1:{metrics_port}",
            f"--health-probe-bind-address=127.0.0.1:{probe_port}",
            "--reconcile-concurrency=4",
            "--log-stdout-encoder=console",
            *scheduler,
        ],
        {"KUBECONFIG": str(kubeconfig), "CLUSTER_DOMAIN": CLUSTER_DOMAIN},
        etc=etc,
    )
    sup.wait_for(
        "kuberay-operator /readyz",
        lambda: http_ok(f"http://127.0.0.1:{probe_port}/readyz"),
        90,
    )

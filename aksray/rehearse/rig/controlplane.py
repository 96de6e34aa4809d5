"""Bring the rig up in upstream's start order, and down again.

etcd -> kube-apiserver -> every CRD Established -> kube-controller-manager (after the CRDs, so
its garbage collector knows the Ray kinds from its first discovery) -> kube-scheduler -> kwok ->
Kueue (then its webhooks, proven by a server-side dry run) -> the KubeRay operator. Every port
is a free loopback port chosen at start; nothing listens beyond 127.0.0.0/8.
"""

from __future__ import annotations

import base64
import contextlib
import secrets
import shutil
import socket
import ssl
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from aksray.live.kube import Credentials, Kube
from aksray.rehearse.rig.controller import Launch
from aksray.rehearse.rig.pki import Pki
from aksray.rehearse.rig.processes import RigError, Supervisor, private_etc
from aksray.rehearse.rig.toolchain import RigToolchain

# The stand-in Ray dashboard (every head Service name resolves to it, see dashboard.py) and the
# nodes' InternalIP (every pod's hostIP: Serve's proxy health) get loopback addresses of their
# own per rig, in this range, so rigs side by side never collide.
LOOPBACK_RANGE: Final = "127.100"
# The DNS suffix the KubeRay operator builds head Service names with (CLUSTER_DOMAIN); only the
# operator's private hosts file resolves it.
CLUSTER_DOMAIN: Final = "rehearse.invalid"
KUBECONFIG_CONTEXT: Final = "aksray-rehearse"


def free_loopback(port: int) -> str:
    """A loopback address whose `port` is free."""
    for _ in range(500):
        address = f"{LOOPBACK_RANGE}.{secrets.randbelow(256)}.{1 + secrets.randbelow(254)}"
        with socket.socket() as probe:
            try:
                probe.bind((address, port))
            except OSError:
                continue
        return address
    raise RigError(f"no free {LOOPBACK_RANGE}.x.y address with port {port}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def https_ok(url: str, pki: Pki | None = None) -> bool:
    context = ssl.create_default_context(cafile=str(pki.ca_cert)) if pki else None
    if context is None:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if pki is not None:
        context.load_cert_chain(str(pki.cert), str(pki.key))
    with urllib.request.urlopen(url, context=context, timeout=3) as response:  # noqa: S310
        return bool(response.status == 200)


def http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=3) as response:  # noqa: S310 - a loopback probe
        return bool(response.status == 200)


def write_kubeconfig(path: Path, server: str, pki: Pki) -> None:
    def b64(p: Path) -> str:
        return base64.b64encode(p.read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": KUBECONFIG_CONTEXT,
        "clusters": [
            {
                "name": KUBECONFIG_CONTEXT,
                "cluster": {"server": server, "certificate-authority-data": b64(pki.ca_cert)},
            }
        ],
        "users": [
            {
                "name": KUBECONFIG_CONTEXT,
                "user": {
                    "client-certificate-data": b64(pki.cert),
                    "client-key-data": b64(pki.key),
                },
            }
        ],
        "contexts": [
            {
                "name": KUBECONFIG_CONTEXT,
                "context": {"cluster": KUBECONFIG_CONTEXT, "user": KUBECONFIG_CONTEXT},
            }
        ],
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")


@dataclass
class ControlPlane:
    """A running rig: its kube client, kubeconfig, timings and processes."""

    tools: RigToolchain
    run_dir: Path
    supervisor: Supervisor
    pki: Pki
    kubeconfig: Path
    kube: Kube
    kuberay_etc: Path
    dashboard_address: str
    node_address: str
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the report says about the rig
    launch: Launch | None = None  # how its controllers were started (a restart reuses it)

    def stop(self) -> list[str]:
        return self.supervisor.stop_all()


class Timer:
    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self.started = time.monotonic()

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        t0 = time.monotonic()
        yield
        self.timings[name] = round(time.monotonic() - t0, 2)


def start_etcd(sup: Supervisor, tools: RigToolchain, run_dir: Path) -> str:
    client, peer = free_port(), free_port()
    shm = Path("/dev/shm")  # noqa: S108 - tmpfs for etcd, in a private mkdtemp folder
    data = Path(tempfile.mkdtemp(prefix="aksray-rig-etcd-", dir=shm if shm.is_dir() else None))
    (run_dir / "etcd-data").write_text(str(data), encoding="utf-8")
    url = f"http://127.0.0.1:{client}"
    sup.start(
        "etcd",
        [
            str(tools.binary("etcd")),
            "--name=rig",
            f"--data-dir={data}",
            "--unsafe-no-fsync",
            f"--listen-client-urls={url}",
            f"--advertise-client-urls={url}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster=rig=http://127.0.0.1:{peer}",
            "--quota-backend-bytes=4294967296",
            "--log-level=warn",
        ],
    )
    sup.wait_for("etcd /health", lambda: urllib.request.urlopen(f"{url}/health", timeout=2), 60)  # noqa: S310
    return url


def start_apiserver(sup: Supervisor, tools: RigToolchain, pki: Pki, etcd: str) -> str:
    port = free_port()
    sup.start(
        "kube-apiserver",
        [
            str(tools.binary("kube-apiserver")),
            f"--etcd-servers={etcd}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            "--endpoint-reconciler-type=none",
            "--service-cluster-ip-range=10.96.0.0/16",
            f"--tls-cert-file={pki.cert}",
            f"--tls-private-key-file={pki.key}",
            f"--client-ca-file={pki.ca_cert}",
            f"--service-account-key-file={pki.key}",
            f"--service-account-signing-key-file={pki.key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--authorization-mode=Node,RBAC",
            "--allow-privileged=true",
            "--enable-priority-and-fairness=false",
            "--max-requests-inflight=0",
            "--max-mutating-requests-inflight=0",
        ],
    )
    server = f"https://127.0.0.1:{port}"
    sup.wait_for("kube-apiserver /readyz", lambda: https_ok(f"{server}/readyz", pki), 120)
    return server


CRDS: Final = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def apply_crds(kube: Kube, sup: Supervisor, files: list[Path], *, update: bool = False) -> int:
    """Create every CRD of `files` (plain POST, as Helm installs a chart's crds/: the biggest
    are far over the last-applied limit); with `update`, bring an existing one to the file's
    schema with server-side apply, forced (as the stack's CRD resources do on an upgrade),
    instead of leaving it as it is."""
    docs = [
        doc
        for path in files
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
        if doc and doc.get("kind") == "CustomResourceDefinition"
    ]
    return apply_crd_documents(kube, sup, docs, update=update)


def apply_crd_documents(
    kube: Kube, sup: Supervisor, docs: list[dict[str, Any]], *, update: bool = False
) -> int:
    """apply_crds of CRD objects; returns how many, once every one is Established."""
    names = []
    for doc in docs:
        name = doc["metadata"]["name"]
        names.append(name)
        if kube.get_or_none(f"{CRDS}/{name}") is None:
            kube.create(CRDS, doc)
        elif update:
            kube.apply(doc, force=True)

    def established() -> bool:
        for name in names:
            crd = kube.get(f"{CRDS}/{name}")
            conditions = {
                c["type"]: c["status"] for c in crd.get("status", {}).get("conditions", [])
            }
            if conditions.get("Established") != "True":
                return False
        return True

    sup.wait_for("every CRD Established", established, 180, interval=0.5)
    return len(names)


def start_controllers(
    sup: Supervisor, tools: RigToolchain, pki: Pki, kubeconfig: Path, node_address: str
) -> None:
    env = {"KUBECONFIG": str(kubeconfig)}
    kcm_port, sched_port = free_port(), free_port()
    sup.start(
        "kube-controller-manager",
        [
            str(tools.binary("kube-controller-manager")),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false",
            "--controllers=*",
            f"--root-ca-file={pki.ca_cert}",
            f"--service-account-private-key-file={pki.key}",
            "--bind-address=127.0.0.1",
            f"--secure-port={kcm_port}",
        ],
        env,
    )
    sup.start(
        "kube-scheduler",
        [
            str(tools.binary("kube-scheduler")),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={sched_port}",
        ],
        env,
    )
    sup.start(
        "kwok",
        [
            str(tools.binary("kwok")),
            f"--kubeconfig={kubeconfig}",
            f"--config={tools.kwok_stages}",
            "--manage-all-nodes=true",
            "--cidr=10.244.0.0/16",
            f"--node-ip={node_address}",
            "--node-lease-duration-seconds=40",
        ],
        env,
    )
    sup.wait_for(
        "kube-controller-manager /healthz",
        lambda: https_ok(f"https://127.0.0.1:{kcm_port}/healthz"),
        60,
    )
    sup.wait_for(
        "kube-scheduler /healthz", lambda: https_ok(f"https://127.0.0.1:{sched_port}/healthz"), 60
    )


def rig_run_dir() -> Path:
    """A new folder for one rehearsal. Its name also labels the rehearsal's Nodes, so it must be
    a valid label value: mkdtemp's random part may end in `_`, hence a closing letter."""
    base = Path(tempfile.gettempdir()) / "aksray-rehearse"
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%d-%H%M%S-"), suffix="-r", dir=base))


def remove_run_data(run_dir: Path) -> None:
    marker = run_dir / "etcd-data"
    if marker.is_file():
        shutil.rmtree(marker.read_text(encoding="utf-8"), ignore_errors=True)


def credentials(server: str, pki: Pki) -> Credentials:
    return Credentials(server, str(pki.ca_cert), str(pki.cert), str(pki.key))


def kuberay_private_etc(run_dir: Path) -> Path:
    return private_etc(run_dir / "kuberay-etc", {})


def kueue_private_etc(run_dir: Path, pki: Pki) -> Path:
    return private_etc(
        run_dir / "kueue-etc",
        {
            "kueue/metrics/certs/tls.crt": pki.cert.read_bytes(),
            "kueue/metrics/certs/tls.key": pki.key.read_bytes(),
        },
    )


def summarize(config: dict[str, Any]) -> str:
    return yaml.safe_dump(config, sort_keys=False)

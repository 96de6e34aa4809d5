"""The KAI scheduler as host processes, wired the way KAI's operator wires its components.

KAI v0.12.0 (the newest version the Go module proxy serves) deploys through an operator that reads
a `Config` and the `SchedulingShard`s and then runs five services; the rig runs the same five
binaries itself, with the flags the operator would give them (pkg/operator/operands/*/
resources.go at v0.12.0), on loopback ports chosen at start:

- the scheduler, with a configuration file in place of the ConfigMap the operator writes per
  shard: the actions the stack's KAI release runs (`allocate` alone, or `operators.kaiActions`)
  and the plugin list v0.12's operator writes for the `binpack` placement strategy;
- the binder (binds what the scheduler placed, one BindRequest per pod);
- the pod grouper (one PodGroup per Ray cluster, its minimum the head plus every worker group's
  `minReplicas`, else its `replicas`; the queue from the top owner's `kai.scheduler/queue`);
- the queue controller, with its Queue validating webhook;
- the admission webhooks for pods (the runtime class of GPU pods, GPU-sharing checks).

Both webhook servers are controller-runtime's: they read their certificate from
`$TMPDIR/k8s-webhook-server/serving-certs`, so each process gets a TMPDIR of the run folder with
the rig's certificate in it, and the webhook configurations name a loopback URL with the rig's
CA. They listen on every interface (v0.12 has no host flag); the queue controller's port is fixed
at 9443 (no flag either), so when another rig already holds it the controller runs without its
webhook and the report says so.

What differs from the KAI the platform ships (v0.17.0) is in `SKEW`, named in every report.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import yaml

from aksray.live.kube import Kube
from aksray.rehearse.rig.controller import GoBuild, Launch
from aksray.rehearse.rig.controlplane import free_port, http_ok
from aksray.rehearse.rig.kai_webhooks import (
    KAI_NAMESPACE,
    admission_webhooks,
    queue_webhook,
    refuses_bare_queue,
)
from aksray.rehearse.rig.pki import Pki
from aksray.rehearse.rig.processes import Supervisor
from catalog.kai import KAI_ACTIONS, PLACING_ACTION
from catalog.priorities import PRIORITY_CLASSES
from manifests.helm_values import KAI_SCHEDULER_NAME, RUNTIME_CLASS_BY_DRIVER
from manifests.kai import KAI_QUEUE_LABEL

if TYPE_CHECKING:
    from settings.model import Settings

NAME: Final = "kai-scheduler"
ORDER: Final = 20  # before KubeRay, whose pods it places
# The components its chart's operator would deploy, each one binary.
BUILD: Final = GoBuild(
    piece="kai",
    module="github.com/NVIDIA/KAI-scheduler",
    pin="KAI_VERSION",
    commands={
        f"kai-{c}": f"cmd/{c}"
        for c in ("scheduler", "binder", "podgrouper", "queuecontroller", "admission")
    },
    data={"kai/crds": "deployments/kai-scheduler/crds/*.yaml"},
    shipped_pin="KAI_SHIPPED_VERSION",
)
NOT_RUN: Final = "not run (--scheduler kube-scheduler: kube-scheduler binds the Ray pods)"
RESERVATION_NAMESPACE: Final = "kai-resource-reservation"
SCALE_ADJUST_NAMESPACE: Final = "kai-scale-adjust"
NODEPOOL_LABEL_KEY: Final = "kai.scheduler/node-pool"
QUEUE_WEBHOOK_PORT: Final = 9443  # controller-runtime's default; v0.12 has no flag for it
# The plugins v0.12's operator writes into every shard's scheduler configuration, in its order,
# for the `binpack` placement strategy (pkg/operator/operands/scheduler/resources_for_shard.go).
BINPACK_PLUGINS: Final = (
    "predicates", "proportion", "priority", "nodeavailability", "resourcetype", "podaffinity",
    "elastic", "kubeflow", "ray", "subgrouporder", "taskorder", "nominatednode",
    "dynamicresources", "minruntime", "topology", "snapshot", "gpupack",
)  # fmt: skip
# What differs between the KAI the rig runs and the one the platform ships, read in both sources.
SKEW: Final = (
    "KAI v0.12.0 on the rig, v0.17.0 shipped: v0.12's SchedulingShard has no `actions` (its "
    "operator always writes allocate, consolidation, reclaim, preempt, stalegangeviction), so "
    "the chart value the platform sets (`scheduler.actions`, allocate alone) has no effect on a "
    "v0.12 install; the rig writes the scheduler configuration itself with the actions v0.17 "
    "writes from that value. v0.12's admission webhook sets the runtime class on every GPU pod "
    "(`--gpu-pod-runtime-class-name`), v0.17 on pods that share a GPU "
    "(`admission.gpuFractionRuntimeClassName`). The Queue webhook refuses a Queue without "
    "`spec.resources` in both."
)


@dataclass(frozen=True)
class KaiSetup:
    """What the stack's KAI release would run with."""

    actions: tuple[str, ...]
    gpu_sharing: bool
    runtime_class: str

    @classmethod
    def of(cls, settings: Settings) -> KaiSetup:
        """The stack's KAI: its release runs `allocate` alone; a cluster of one's own runs the
        actions `operators.kaiActions` names."""
        operators = settings.operators
        actions = tuple(operators.kai_actions or (PLACING_ACTION,))
        runtime = RUNTIME_CLASS_BY_DRIVER[settings.cluster.gpu_driver]
        return cls(actions, operators.gpu_sharing, runtime)


def scheduler_config(actions: tuple[str, ...]) -> dict[str, Any]:
    """The scheduler's configuration file: `actions`, and v0.12's binpack plugins."""
    unknown = [a for a in actions if a not in KAI_ACTIONS]
    if unknown:
        raise ValueError(f"KAI v0.12 has no action {', '.join(unknown)}")
    plugins: list[dict[str, Any]] = [{"name": name} for name in BINPACK_PLUGINS]
    plugins.append({"name": "nodeplacement", "arguments": {"gpu": "binpack", "cpu": "binpack"}})
    plugins.append({"name": "gpusharingorder"})
    return {"actions": ", ".join(actions), "tiers": [{"plugins": plugins}]}


def cluster_objects(setup: KaiSetup) -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) of what KAI's chart and the GPU Operator put in a cluster that
    the scheduler and its webhooks read: namespaces, priority classes, the GPU runtime class."""
    namespaces = [
        ("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}})
        for n in (KAI_NAMESPACE, RESERVATION_NAMESPACE, SCALE_ADJUST_NAMESPACE)
    ]
    priorities = [
        (
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
        )
        for name, value in PRIORITY_CLASSES.items()
    ]
    runtime = (
        "/apis/node.k8s.io/v1/runtimeclasses",
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": setup.runtime_class},
            "handler": setup.runtime_class,
        },
    )
    return [*namespaces, *priorities, runtime]


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))  # noqa: S104 - where the queue webhook will listen
        except OSError:
            return False
    return True


def _cert_tmpdir(run_dir: Path, name: str, pki: Pki) -> Path:
    """A TMPDIR whose controller-runtime certificate folder holds the rig's certificate."""
    tmp = run_dir / f"{name}-tmp"
    certs = tmp / "k8s-webhook-server" / "serving-certs"
    certs.mkdir(parents=True, exist_ok=True)
    (certs / "tls.crt").write_bytes(pki.cert.read_bytes())
    (certs / "tls.key").write_bytes(pki.key.read_bytes())
    return tmp


def _probe_ports() -> list[str]:
    return [
        f"--metrics-bind-address=127.0.0.1:{free_port()}",
        f"--health-probe-bind-address=127.0.0.1:{free_port()}",
    ]


@dataclass(frozen=True)
class KaiRig:
    """What `start_kai` started: for the report."""

    setup: KaiSetup
    queue_webhook: bool

    def notes(self) -> list[str]:
        webhook = (
            "the Queue webhook served by KAI's queue controller"
            if self.queue_webhook
            else "no Queue webhook (port 9443 was taken by another rig: v0.12 has no flag for it)"
        )
        return [
            f"KAI places and binds every Ray pod (scheduler name {KAI_SCHEDULER_NAME}), running "
            f"the actions {', '.join(self.setup.actions)}; {webhook}",
            SKEW,
        ]


def start_kai(
    sup: Supervisor,
    *,
    binary: Callable[[str], Path],
    pki: Pki,
    kubeconfig: Path,
    kube: Kube,
    run_dir: Path,
    setup: KaiSetup,
) -> KaiRig:
    """Start KAI's five services for `setup` and register their webhooks."""
    for path, obj in cluster_objects(setup):
        name = obj["metadata"]["name"]
        if kube.get_or_none(f"{path}/{name}") is None:
            kube.create(path, obj)
    env = {"KUBECONFIG": str(kubeconfig)}
    config = run_dir / "kai-scheduler.yaml"
    config.write_text(yaml.safe_dump(scheduler_config(setup.actions)), encoding="utf-8")
    ca = pki.ca_cert.read_bytes()
    named = [f"--scheduler-name={KAI_SCHEDULER_NAME}"]
    admission_port, admission_probe = free_port(), free_port()
    sup.start(
        "kai-admission",
        [
            str(binary("kai-admission")), *named, f"--webhook-addr={admission_port}",
            f"--health-probe-bind-address=127.0.0.1:{admission_probe}",
            f"--metrics-bind-address=127.0.0.1:{free_port()}",
            f"--gpu-sharing-enabled={str(setup.gpu_sharing).lower()}",
            f"--gpu-pod-runtime-class-name={setup.runtime_class}",
        ],
        {**env, "TMPDIR": str(_cert_tmpdir(run_dir, "kai-admission", pki))},
    )  # fmt: skip
    with_webhook = port_free(QUEUE_WEBHOOK_PORT)
    sup.start(
        "kai-queuecontroller",
        [
            str(binary("kai-queuecontroller")), f"--queue-label-key={KAI_QUEUE_LABEL}",
            f"--metrics-listen-address=127.0.0.1:{free_port()}",
            f"--enable-webhook={str(with_webhook).lower()}",
        ],
        {**env, "TMPDIR": str(_cert_tmpdir(run_dir, "kai-queuecontroller", pki))},
    )  # fmt: skip
    sup.start(
        "kai-podgrouper",
        [
            str(binary("kai-podgrouper")), *named, *_probe_ports(),
            f"--queue-label-key={KAI_QUEUE_LABEL}", f"--nodepool-label-key={NODEPOOL_LABEL_KEY}",
        ],
        env,
    )  # fmt: skip
    sup.start(
        "kai-binder",
        [
            str(binary("kai-binder")), *named, *_probe_ports(),
            f"--resource-reservation-namespace={RESERVATION_NAMESPACE}",
            f"--scale-adjust-namespace={SCALE_ADJUST_NAMESPACE}",
        ],
        env,
    )  # fmt: skip
    scheduler_port = free_port()
    sup.start(
        "kai-scheduler",
        [
            str(binary("kai-scheduler")), *named, f"--scheduler-conf={config}",
            f"--namespace={KAI_NAMESPACE}", f"--nodepool-label-key={NODEPOOL_LABEL_KEY}",
            "--partition-label-value=", f"--resource-reservation-app-label={RESERVATION_NAMESPACE}",
            f"--listen-address=127.0.0.1:{scheduler_port}", f"--plugin-server-port={free_port()}",
        ],
        {**env, "NAMESPACE": KAI_NAMESPACE},
    )  # fmt: skip
    sup.wait_for(
        "kai-admission /readyz",
        lambda: http_ok(f"http://127.0.0.1:{admission_probe}/readyz"),
        90,
    )
    for hook in admission_webhooks(f"https://127.0.0.1:{admission_port}", ca):
        kube.apply(hook, force=True)
    if with_webhook:
        kube.apply(queue_webhook(f"https://127.0.0.1:{QUEUE_WEBHOOK_PORT}", ca), force=True)
        sup.wait_for("KAI's Queue webhook to refuse a Queue without resources",
                     lambda: refuses_bare_queue(kube), 60, 1.0)  # fmt: skip
    sup.wait_for(
        "kai-scheduler /metrics",
        lambda: http_ok(f"http://127.0.0.1:{scheduler_port}/metrics"),
        90,
    )
    return KaiRig(setup, with_webhook)


def crds(data: Path) -> list[Path]:
    return sorted((data / "kai" / "crds").glob("*.yaml"))


def start(launch: Launch) -> list[str]:
    """KAI's five services for the stack's KaiSetup (`options["kai-scheduler"]`; None: none)."""
    setup = launch.options.get(NAME)
    if setup is None:
        return []
    return start_kai(
        launch.supervisor, binary=launch.binary, pki=launch.pki, kubeconfig=launch.kubeconfig,
        kube=launch.kube, run_dir=launch.run_dir, setup=setup,
    ).notes()  # fmt: skip

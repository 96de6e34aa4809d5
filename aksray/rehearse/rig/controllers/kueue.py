"""Kueue as a host process, configured as the stack configures it.

Kueue runs with the stack's own Configuration (`manifests.helm_values.kueue_manager_config`,
what the chart gets on AKS), with only what a host process needs changed: loopback addresses,
no leader election, certificates from the rig's CA instead of Kueue's internal issuer (which
names a Service the rig has no proxy for). Its webhooks are registered with a loopback URL, and
only for the kinds it manages, so a Kueue restart never blocks unrelated pods.

"""

from __future__ import annotations

import base64
import copy
import re
from pathlib import Path
from typing import Any, Final

import yaml

from aksray.live.kube import Kube
from aksray.rehearse.rig.controller import GoBuild, Launch, versioned_data
from aksray.rehearse.rig.controlplane import (
    free_port,
    http_ok,
    kueue_private_etc,
)
from aksray.rehearse.rig.pki import Pki
from aksray.rehearse.rig.processes import Supervisor
from manifests.kueue import QUEUE_NAME_LABEL

NAME: Final = "kueue"
ORDER: Final = 10  # first: its webhooks must stand before anything submits a Ray object
BUILD: Final = GoBuild(
    piece="kueue",
    module="sigs.k8s.io/kueue",
    pin="KUEUE_VERSION",
    commands={"kueue": "cmd/kueue"},
    ldflags="-X {module}/pkg/version.GitVersion={version}",
    data={
        "kueue/crds": "config/components/crd/bases/*.yaml",
        "kueue/webhooks.yaml": "config/components/webhook/manifests.yaml",
    },
    previous_pin="KUEUE_PREVIOUS_VERSION",
)
KUEUE_NAMESPACE: Final = "kueue-system"
MUTATING_NAME: Final = "kueue-mutating-webhook-configuration"
VALIDATING_NAME: Final = "kueue-validating-webhook-configuration"
# Kueue runs the platform's pod-readiness wait (manifests/helm_values.py `kueue_pods_ready`:
# timeout, no recovery timeout, requeue limit) with the times scaled down, so a scenario shows
# in minutes what takes hours on AKS; every report says so.
RIG_PODS_READY_TIMEOUT: Final = "90s"  # above the 60 s a finished job keeps its nodes
RIG_REQUEUE_BACKOFF_BASE_S: Final = 5
RIG_REQUEUE_BACKOFF_MAX_S: Final = 30
RECOVERY_OFF: Final = "0s"
# Kueue's own kinds: their webhooks are always needed.
KUEUE_CORE_PATH: Final = re.compile(
    r"-kueue-x-k8s-io-v1beta2-(clusterqueue|cohort|resourceflavor|workload)$"
)


def rig_kueue_config(
    platform: dict[str, Any], cert_dir: Path, webhook_port: int, health_port: int
) -> dict[str, Any]:
    """`platform` (the stack's Kueue Configuration) for a host process on the rig."""
    config = copy.deepcopy(platform)
    config.update(
        {
            "namespace": KUEUE_NAMESPACE,
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
            "metrics": {"bindAddress": "0"},
            "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": str(cert_dir)},
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
        }
    )
    waiting = config["waitForPodsReady"]
    waiting["timeout"] = RIG_PODS_READY_TIMEOUT
    if waiting.get("recoveryTimeout") != RECOVERY_OFF:  # off stays off; on, it is scaled too
        waiting["recoveryTimeout"] = RIG_PODS_READY_TIMEOUT
    waiting["requeuingStrategy"].update(
        {
            "backoffBaseSeconds": RIG_REQUEUE_BACKOFF_BASE_S,
            "backoffMaxSeconds": RIG_REQUEUE_BACKOFF_MAX_S,
        }
    )
    # The visibility API server reads certificates from fixed paths and is not rehearsed.
    gates = dict(config.get("featureGates") or {})
    gates["VisibilityOnDemand"] = False
    config["featureGates"] = gates
    return config


def pods_ready_note(platform: dict[str, Any]) -> str:
    """What the rig changed about Kueue's pod-readiness wait, and what it kept, for every report."""
    waiting = platform["waitForPodsReady"]
    recovery = waiting["recoveryTimeout"]
    requeuing = waiting["requeuingStrategy"]
    recovery_part = (
        f"recoveryTimeout {recovery} (off) as on AKS"
        if recovery == RECOVERY_OFF
        else f"recoveryTimeout {recovery} as {RIG_PODS_READY_TIMEOUT}"
    )
    return (
        f"Kueue waitForPodsReady timeout {waiting['timeout']} (the platform's) runs as "
        f"{RIG_PODS_READY_TIMEOUT} on the rig, {recovery_part}, requeue backoff "
        f"{requeuing['backoffBaseSeconds']}-{requeuing['backoffMaxSeconds']}s as "
        f"{RIG_REQUEUE_BACKOFF_BASE_S}-{RIG_REQUEUE_BACKOFF_MAX_S}s, deactivated after "
        f"{requeuing['backoffLimitCount']} requeues as on AKS"
    )


def framework_path_pattern(framework: str) -> re.Pattern[str]:
    """`ray.io/rayjob` -> the webhook paths of that kind (`/mutate-ray-io-v1-rayjob`)."""
    group, _, kind = framework.partition("/")
    group_part = group.replace(".", "-") if group else ""
    return re.compile(rf"-{re.escape(group_part)}-v[0-9a-z]+-{re.escape(kind)}$")


def rig_webhooks(
    manifest: Path, frameworks: list[str], url: str, ca: bytes
) -> list[dict[str, Any]]:
    """Kueue's webhook configurations for the enabled kinds, pointed at a loopback URL."""
    patterns = [KUEUE_CORE_PATH, *(framework_path_pattern(f) for f in frameworks)]
    out = []
    for doc in yaml.safe_load_all(manifest.read_text(encoding="utf-8")):
        if not doc:
            continue
        kept = []
        for hook in doc.get("webhooks", []):
            path = hook["clientConfig"]["service"]["path"]
            if not any(p.search(path) for p in patterns):
                continue
            rewritten = copy.deepcopy(hook)
            rewritten["clientConfig"] = {
                "url": url + path,
                "caBundle": base64.b64encode(ca).decode(),
            }
            rewritten["timeoutSeconds"] = 30  # two busy cores: the default 10 s is tight
            kept.append(rewritten)
        name = MUTATING_NAME if doc["kind"] == "MutatingWebhookConfiguration" else VALIDATING_NAME
        out.append({**doc, "metadata": {"name": name}, "webhooks": kept})
    return out


def start_kueue(
    sup: Supervisor,
    *,
    binary: Path,
    webhooks: Path,
    pki: Pki,
    kubeconfig: Path,
    kube: Kube,
    run_dir: Path,
    platform: dict[str, Any],
) -> dict[str, Any]:
    """Start Kueue with `platform` (the stack's Configuration) on loopback, register its
    webhooks, prove them with a dry run; return the Configuration it runs."""
    cert_dir = run_dir / "kueue-certs"
    cert_dir.mkdir(parents=True, exist_ok=True)
    (cert_dir / "tls.crt").write_bytes(pki.cert.read_bytes())
    (cert_dir / "tls.key").write_bytes(pki.key.read_bytes())
    webhook_port, health_port = free_port(), free_port()
    config = rig_kueue_config(platform, cert_dir, webhook_port, health_port)
    config_file = run_dir / "kueue.yaml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    if kube.get_or_none(f"/api/v1/namespaces/{KUEUE_NAMESPACE}") is None:
        kube.create(
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": KUEUE_NAMESPACE}},
        )
    sup.start(
        "kueue",
        [str(binary), f"--config={config_file}", "--zap-log-level=info"],
        {"KUBECONFIG": str(kubeconfig)},
        etc=kueue_private_etc(run_dir, pki),
    )
    sup.wait_for("kueue /readyz", lambda: http_ok(f"http://127.0.0.1:{health_port}/readyz"), 90)
    frameworks = list(config["integrations"]["frameworks"])
    url = f"https://127.0.0.1:{webhook_port}"
    for hook_config in rig_webhooks(webhooks, frameworks, url, pki.ca_cert.read_bytes()):
        kube.apply(hook_config, force=True)
    sup.wait_for("Kueue's webhook to suspend a queued RayJob", lambda: suspends(kube), 60, 1.0)
    return config


def suspends(kube: Kube) -> bool:
    """A server-side dry run of a queued RayJob comes back suspended: apiserver -> loopback URL
    -> TLS -> Kueue's mutating webhook all work."""
    head = {
        "rayStartParams": {},
        "template": {"spec": {"containers": [{"name": "ray-head", "image": "probe"}]}},
    }
    probe = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "webhook-probe", "labels": {QUEUE_NAME_LABEL: "probe"}},
        "spec": {
            "entrypoint": "true",
            "shutdownAfterJobFinishes": True,
            "submissionMode": "HTTPMode",
            "rayClusterSpec": {"headGroupSpec": head},
        },
    }
    answer = kube.create("/apis/ray.io/v1/namespaces/default/rayjobs", probe, dry_run=True)
    return bool(answer["spec"].get("suspend"))


def crds(data: Path, version: str | None = None) -> list[Path]:
    """Kueue's CRDs from its module download, at the rig's version or at `version`."""
    folder = versioned_data("kueue/crds", version) if version else "kueue/crds"
    return sorted((data / folder).glob("*.yaml"))


def start(launch: Launch) -> list[str]:
    """Kueue with the stack's Configuration (`options["kueue"]`)."""
    start_kueue(
        launch.supervisor,
        binary=launch.binary_of(NAME, "kueue"),
        webhooks=launch.data_of(NAME, "kueue/webhooks.yaml"),
        pki=launch.pki,
        kubeconfig=launch.kubeconfig,
        kube=launch.kube,
        run_dir=launch.run_dir,
        platform=launch.options[NAME],
    )
    return []

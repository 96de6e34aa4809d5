"""What the manager's credential may do on each worker, tried with that credential itself: the
kubeconfig `pulumi up` wrote into the manager's Secret for the worker (its token, the worker's
CA and address). Every write is a server-side dry run: the API server authorizes and admits it
(RBAC, the ValidatingAdmissionPolicy) exactly as a real request and stores nothing.

- a RayJob in a namespace of a team the worker serves, naming the team's LocalQueue: allowed
  (what MultiKueue sends; its remote client is connected, which needs the cluster-wide watches);
- the same RayJob without the queue label: refused by the worker's policy;
- the same RayJob in a namespace no team of the worker uses: refused by RBAC.
"""

from __future__ import annotations

import base64
import copy
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from aksray.live.kube import Kube, KubeError, credentials_from_kubeconfig
from catalog.versions import KUEUE
from manifests.access.multikueue import QUEUE_POLICY
from manifests.kueue import QUEUE_NAME_LABEL
from manifests.multikueue import KUBECONFIG_KEY, kubeconfig_secret_name

OUTSIDE: Final = "default"  # a namespace no team uses
PROBE_NAME: Final = "aksray-reach-probe"
FORBIDDEN: Final = 403


def manager_client(manager: Kube, worker: str) -> Kube:
    """A client of `worker` as the manager's Kueue reaches it."""
    path = f"/api/v1/namespaces/{KUEUE.namespace}/secrets/{kubeconfig_secret_name(worker)}"
    text = base64.b64decode(manager.get(path)["data"][KUBECONFIG_KEY]).decode()
    folder = Path(tempfile.mkdtemp(prefix="aksray-reach-"))
    kubeconfig = folder / "kubeconfig"
    kubeconfig.write_text(text, encoding="utf-8")
    kubeconfig.chmod(0o600)
    return Kube(credentials_from_kubeconfig(kubeconfig))


def probe_job(job: Mapping[str, Any], namespace: str, queue: str | None) -> dict[str, Any]:
    """The manager's RayJob as MultiKueue would send it (no managedBy), renamed."""
    probe = copy.deepcopy(dict(job))
    probe["metadata"]["name"] = PROBE_NAME
    probe["metadata"]["namespace"] = namespace
    labels = probe["metadata"].setdefault("labels", {})
    labels.pop(QUEUE_NAME_LABEL, None)
    if queue is not None:
        labels[QUEUE_NAME_LABEL] = queue
    probe["spec"].pop("managedBy", None)
    return probe


def tried(kube: Kube, obj: Mapping[str, Any]) -> tuple[int, str]:
    """(0, "") when the dry-run create is accepted, else the API server's status and message."""
    namespace = obj["metadata"]["namespace"]
    try:
        kube.create(f"/apis/ray.io/v1/namespaces/{namespace}/rayjobs", dict(obj), dry_run=True)
    except KubeError as refused:
        return refused.status, refused.message
    return 0, ""


def reach(manager: Kube, worker: str, job: Mapping[str, Any]) -> list[tuple[str, bool, str]]:
    """(check, held, detail) for one worker, with `job` one of the manager's RayJobs."""
    kube = manager_client(manager, worker)
    namespace = job["metadata"]["namespace"]
    queue = job["metadata"]["labels"][QUEUE_NAME_LABEL]
    allowed = tried(kube, probe_job(job, namespace, queue))
    unqueued = tried(kube, probe_job(job, namespace, None))
    outside = tried(kube, probe_job(job, OUTSIDE, queue))
    return [
        (
            f"the manager's credential may create a queued RayJob in {namespace} on {worker}",
            allowed[0] == 0,
            f"refused: {allowed[0]} {allowed[1]}",
        ),
        (
            f"{worker} refuses the manager's RayJob that names no queue (its policy)",
            unqueued[0] != 0 and QUEUE_POLICY in unqueued[1],
            f"got {unqueued[0]} {unqueued[1]}".strip(),
        ),
        (
            f"{worker} refuses the manager's RayJob in {OUTSIDE}, which no team uses (RBAC)",
            outside[0] == FORBIDDEN and "cannot create resource" in outside[1],
            f"got {outside[0]} {outside[1]}".strip(),
        ),
    ]

"""A Job that waits until KAI's queue admission webhook serves; every KAI Queue waits for it.

Why (KAI v0.17.0, pulumi-kubernetes 4.25.0): KAI's operator registers the webhook
`queue-validation.kai.scheduler` (failure policy Fail, catalog/kai.py) itself, only after the
chart's post-install hook has applied `kai-config`, so Helm's wait has ended before it exists;
and until the queue controller behind it listens, the apiserver refuses every Queue create. The
Kubernetes provider retries a create only when the API or the object is not found
(provider/pkg/await/await.go `Creation`: `retrier.Do(apierrors.IsNotFound, meta.IsNoMatchError)`,
5 tries); a webhook that cannot be called is an InternalError, so the Queue fails `pulumi up`.

The provider does await a Job: it counts as created once it completes, and fails when it fails
(provider/pkg/await/job.go). The Job's pod sends server-side dry-run creates (nothing is stored)
of a Queue without `spec.resources` until KAI's webhook itself denies one: that proves the
apiserver calls the webhook and the webhook answers. Waiting for the webhook configuration
alone would not (its server may not listen yet), nor would a valid dry run that passes (it also
passes before the configuration exists). Then a dry run of a valid Queue must pass. A dry run
still goes through webhooks whose sideEffects are None, as KAI's are, and needs only `create`
on queues: that is all the Job may do.
"""

from __future__ import annotations

import json
from typing import Any, Final

from catalog.kai import QUEUE_WEBHOOK
from catalog.versions import KAI_API_VERSION, KAI_SCHEDULER, KUBECTL_IMAGE
from manifests.helm_values import operator_node_selector
from manifests.kai import unlimited_queue_resources
from manifests.namespaces import MANAGED_BY

WAIT_NAME: Final = "kai-queue-webhook"  # suffix of the Pulumi names
ACCOUNT: Final = "aksray-operators-kai-queue-webhook"
ROLE: Final = "aksray-kai-queue-webhook-probe"
PROBE_QUEUE: Final = "aksray-webhook-probe"
DEADLINE_SECONDS: Final = 600
# The provider's await outlasts the Job's own deadline, so the Job's failure is what is reported.
AWAIT_SECONDS: Final = DEADLINE_SECONDS + 60
PROBE_INTERVAL_SECONDS: Final = 5
NOBODY: Final = 65534
KAI_VERSION_LABEL: Final = "aksray.io/kai-version"
# kubectl's home (its discovery cache): an emptyDir, the root filesystem stays read-only.
HOME_DIR: Final = "/home/probe"

# Each answer is printed, so the pod's log shows what it waited for.
WAIT_SCRIPT: Final = """set -u
dry_run() { printf '%s' "$1" | kubectl create --dry-run=server -o name -f - 2>&1; }
until out="$(dry_run "$QUEUE_WITHOUT_RESOURCES")"; \
[[ "$out" == *"admission webhook \\"$KAI_QUEUE_WEBHOOK\\" denied the request"* ]]; do
  echo "waiting for KAI's queue webhook: $out"
  sleep "$PROBE_INTERVAL_SECONDS"
done
echo "KAI's queue webhook answers: $out"
dry_run "$QUEUE_WITH_RESOURCES"
"""


def _probe_queue(*, with_resources: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"displayName": PROBE_QUEUE}
    if with_resources:
        spec["resources"] = unlimited_queue_resources(1)
    return {
        "apiVersion": KAI_API_VERSION,
        "kind": "Queue",
        "metadata": {"name": PROBE_QUEUE},
        "spec": spec,
    }


def _metadata(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(MANAGED_BY)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def webhook_wait_account() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": _metadata(ACCOUNT, KAI_SCHEDULER.namespace),
    }


def webhook_wait_role() -> dict[str, Any]:
    """Dry-run Queue creates only (a dry run needs the `create` verb; create cannot be limited
    to resource names)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _metadata(ROLE),
        "rules": [
            {
                "apiGroups": [KAI_API_VERSION.split("/")[0]],
                "resources": ["queues"],
                "verbs": ["create"],
            }
        ],
    }


def webhook_wait_binding() -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": _metadata(ROLE),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
        "subjects": [
            {"kind": "ServiceAccount", "name": ACCOUNT, "namespace": KAI_SCHEDULER.namespace}
        ],
    }


def _env() -> list[dict[str, str]]:
    values = {
        "HOME": HOME_DIR,
        "KAI_QUEUE_WEBHOOK": QUEUE_WEBHOOK,
        "PROBE_INTERVAL_SECONDS": str(PROBE_INTERVAL_SECONDS),
        "QUEUE_WITHOUT_RESOURCES": json.dumps(_probe_queue(with_resources=False)),
        "QUEUE_WITH_RESOURCES": json.dumps(_probe_queue(with_resources=True)),
    }
    return [{"name": name, "value": value} for name, value in values.items()]


def _pod_spec() -> dict[str, Any]:
    return {
        "serviceAccountName": ACCOUNT,
        "restartPolicy": "Never",
        "nodeSelector": operator_node_selector(),
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": NOBODY,
            "runAsGroup": NOBODY,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "wait",
                "image": str(KUBECTL_IMAGE),
                "command": ["/bin/bash", "-c", WAIT_SCRIPT],
                "env": _env(),
                "resources": {
                    "requests": {"cpu": "10m", "memory": "64Mi"},
                    "limits": {"memory": "128Mi"},
                },
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
                "volumeMounts": [{"name": "home", "mountPath": HOME_DIR}],
            }
        ],
        "volumes": [{"name": "home", "emptyDir": {}}],
    }


def webhook_wait_job() -> dict[str, Any]:
    """The Job: bounded by its deadline, replaced by the next `pulumi up` when it failed, and
    replaced (run again) when the KAI version changes, since its template names it."""
    metadata = _metadata(ACCOUNT, KAI_SCHEDULER.namespace)
    metadata["annotations"] = {
        "pulumi.com/timeoutSeconds": str(AWAIT_SECONDS),
        "pulumi.com/replaceUnready": "true",
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "backoffLimit": 2,
            "template": {
                "metadata": {"labels": {**MANAGED_BY, KAI_VERSION_LABEL: KAI_SCHEDULER.version}},
                "spec": _pod_spec(),
            },
        },
    }

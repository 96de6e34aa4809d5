"""KAI's webhook configurations on the rig: its pod admission webhooks and its Queue webhook,
each pointed at a loopback URL with the rig's CA (what KAI's operator registers in a cluster),
and the probe that proves the Queue webhook serves."""

from __future__ import annotations

import base64
from typing import Any, Final

from aksray.live.kube import Kube, KubeError
from catalog.kai import QUEUE_WEBHOOK, QUEUE_WEBHOOK_CONFIGURATION

KAI_NAMESPACE: Final = "kai-scheduler"
ADMISSION_WEBHOOK: Final = "kai-admission.kai-scheduler.svc"  # the name v0.12's operator gives it
ADMISSION_MUTATING: Final = "mutating-kai-admission"
ADMISSION_VALIDATING: Final = "validating-kai-admission"


def admission_webhooks(url: str, ca: bytes) -> list[dict[str, Any]]:
    """The pod webhooks v0.12's operator registers, pointed at `url`."""
    selector = {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "NotIn",
                "values": ["kube-system", KAI_NAMESPACE],
            }
        ]
    }
    common = {
        "name": ADMISSION_WEBHOOK,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "namespaceSelector": selector,
        "timeoutSeconds": 30,
    }

    def rule(operations: list[str]) -> list[dict[str, Any]]:
        return [
            {
                "operations": operations,
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["pods"],
                "scope": "Namespaced",
            }
        ]

    def client(path: str) -> dict[str, Any]:
        return {"url": url + path, "caBundle": base64.b64encode(ca).decode()}

    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": ADMISSION_MUTATING},
            "webhooks": [
                {**common, "clientConfig": client("/mutate--v1-pod"), "rules": rule(["CREATE"])}
            ],
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": ADMISSION_VALIDATING},
            "webhooks": [
                {
                    **common,
                    "clientConfig": client("/validate--v1-pod"),
                    "rules": rule(["CREATE", "UPDATE"]),
                }
            ],
        },
    ]


def queue_webhook(url: str, ca: bytes) -> dict[str, Any]:
    """The Queue webhook v0.12's operator registers (`kai-queue-validation-v2`)."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": QUEUE_WEBHOOK_CONFIGURATION},
        "webhooks": [
            {
                "name": QUEUE_WEBHOOK,
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "timeoutSeconds": 30,
                "clientConfig": {
                    "url": url + "/validate-scheduling-run-ai-v2-queue",
                    "caBundle": base64.b64encode(ca).decode(),
                },
                "rules": [
                    {
                        "operations": ["CREATE", "UPDATE"],
                        "apiGroups": ["scheduling.run.ai"],
                        "apiVersions": ["v2"],
                        "resources": ["queues"],
                        "scope": "Cluster",
                    }
                ],
            }
        ],
    }


def refuses_bare_queue(kube: Kube) -> bool:
    """A server-side dry run of a Queue without `spec.resources` is refused by the webhook."""
    probe = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "webhook-probe"},
        "spec": {},
    }
    try:
        kube.create("/apis/scheduling.run.ai/v2/queues", probe, dry_run=True)
    except KubeError as error:
        return "resources must be specified" in str(error)
    return False

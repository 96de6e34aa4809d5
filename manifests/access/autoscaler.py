"""The Ray autoscaler's access to the Kubernetes API, and no other container's.

With in-tree autoscaling, KubeRay (v1.6.2 and v1.7.0, ray-operator/controllers/ray/common/rbac.go)
creates a Role named after the Ray cluster (pods get/list/watch/patch, pods/resize patch,
rayclusters get/patch) and binds it to the head pod's service account: the head template's
`serviceAccountName` (utils.GetHeadGroupServiceAccountName), which it expects to exist. Whoever
holds a token of that account may patch the team's pods, e.g. lift Kueue's elastic-job
scheduling gate from its own pods and run beyond the quota Kueue admitted. So:

- An elastic head runs as its own account (manifests/namespaces.py
  ELASTIC_HEAD_SERVICE_ACCOUNT), which no worker and no fixed head uses: the Role reaches no
  other pod.
- Every team account turns token automounting off, and an elastic head's pod says so itself:
  no Ray container gets an API token, the head's (the payload's driver, Serve's controller)
  included. The autoscaler sidecar alone mounts one, from a projected volume of the head's pod,
  through `autoscalerOptions.volumeMounts`, where Ray's KubeRay node provider reads it
  (`/var/run/secrets/kubernetes.io/serviceaccount`: token, ca.crt, namespace).
- Azure's workload identity webhook projects its own token into every container of a pod
  labelled for it, whatever automounting says; its audience is `api://AzureADTokenExchange`,
  for Entra ID's token exchange, not the API server's.
"""

from __future__ import annotations

from typing import Any, Final

AUTOSCALER_TOKEN_VOLUME: Final = "autoscaler-api-token"  # noqa: S105 - a volume name
# Where in-cluster clients, Ray's autoscaler among them, read the API server's credentials.
API_CREDENTIALS_DIR: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
# As the kubelet's own API token volume: 3607 s, which the API server extends for clients that
# read the token once (the autoscaler does, at start), and the kubelet refreshes regardless.
TOKEN_EXPIRATION_SECONDS: Final = 3607
ROOT_CA_CONFIG_MAP: Final = "kube-root-ca.crt"


def autoscaler_token_volume() -> dict[str, Any]:
    """The head pod's volume with the API credentials, mounted by the autoscaler only."""
    return {
        "name": AUTOSCALER_TOKEN_VOLUME,
        "projected": {
            "sources": [
                {
                    "serviceAccountToken": {
                        "path": "token",
                        "expirationSeconds": TOKEN_EXPIRATION_SECONDS,
                    }
                },
                {
                    "configMap": {
                        "name": ROOT_CA_CONFIG_MAP,
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}
                        ]
                    }
                },
            ]
        },
    }


def autoscaler_token_mount() -> dict[str, Any]:
    return {"name": AUTOSCALER_TOKEN_VOLUME, "mountPath": API_CREDENTIALS_DIR, "readOnly": True}


def with_autoscaler_access(head: dict[str, Any], account: str) -> dict[str, Any]:
    """An elastic head's pod template: its own `account`, no automounted token, and the
    volume the autoscaler mounts (autoscaler_options adds the mount)."""
    spec = dict(head["spec"])
    spec["serviceAccountName"] = account
    spec["automountServiceAccountToken"] = False
    spec["volumes"] = [*spec.get("volumes", []), autoscaler_token_volume()]
    return {**head, "spec": spec}

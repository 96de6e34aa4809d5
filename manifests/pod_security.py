"""The securityContext of every Ray pod: what the Pod Security Standards' `restricted` profile
asks, which the team namespaces warn on (manifests/namespaces.py).

- The pod runs as the image's own non-root user (catalog/versions.py: uid 1000, gid 100), named
  by number so the kubelet can verify `runAsNonRoot` before the container starts; `fsGroup`
  makes what the pod mounts (the workload identity token, the payload ConfigMap) readable by it.
- Every container: no privilege escalation (the images' passwordless `sudo` stops working, and
  nothing of ours uses it), every Linux capability dropped, the runtime's default seccomp
  profile.
- KubeRay copies the Ray container's securityContext to the `wait-gcs-ready` init container it
  adds to workers; the autoscaler sidecar of an elastic head gets it from `autoscalerOptions`.

What the profile rules out, and so these pods cannot do: NCCL over InfiniBand (RDMA needs
`IPC_LOCK`, which `restricted` never allows to be added); the pools' GPUs reach NCCL over
TCP and NVLink inside a node, which need no capability.
"""

from __future__ import annotations

from typing import Any

from catalog.versions import RAY_IMAGE_GID, RAY_IMAGE_UID

RUNTIME_DEFAULT_SECCOMP: dict[str, str] = {"type": "RuntimeDefault"}


def pod_security_context() -> dict[str, Any]:
    """The pod-level securityContext of a Ray head or worker."""
    return {
        "runAsNonRoot": True,
        "runAsUser": RAY_IMAGE_UID,
        "runAsGroup": RAY_IMAGE_GID,
        "fsGroup": RAY_IMAGE_GID,
        "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP),
    }


def container_security_context() -> dict[str, Any]:
    """The securityContext of every container of a Ray pod (Ray's own and the autoscaler)."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": dict(RUNTIME_DEFAULT_SECCOMP),
    }

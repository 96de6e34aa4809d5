"""What Kubernetes itself does with an order `pulumi up` could take, tried on a worker of the
rig before the stack is applied (the stack's graph then rules that order out)."""

from __future__ import annotations

import contextlib
import time
from typing import Final

from aksray.live.kube import Kube, KubeError

PROBE: Final = "aksray-order-probe"
SECRETS: Final = "/api/v1/namespaces/default/secrets"


def token_before_account(kube: Kube, timeout: float = 15.0) -> float | None:
    """A service-account-token Secret created before its ServiceAccount exists: the seconds
    until Kubernetes' token controller deleted it ("Service account does not exist, deleting
    token"), or None if it is still there after `timeout`."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {
            "name": PROBE,
            "namespace": "default",
            "annotations": {"kubernetes.io/service-account.name": PROBE},
        },
    }
    kube.create(SECRETS, secret)
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < timeout:
            if kube.get_or_none(f"{SECRETS}/{PROBE}") is None:
                return round(time.monotonic() - t0, 1)
            time.sleep(0.2)
        return None
    finally:
        with contextlib.suppress(KubeError):
            kube.delete(f"{SECRETS}/{PROBE}")

"""KubeRay's token auth, acted on: the invariant `ray-token-required`.

Every Ray cluster of the platform asks for token auth (`authOptions.mode: token`). KubeRay v1.6.2
then creates a Secret named after the cluster (key `auth_token`, a random token, owned by the
cluster) and sends `x-ray-authorization: Bearer <token>` with every call to the head's dashboard
(its `dashboardclient`). On the rig, once that Secret exists, the stand-in dashboard holds the
cluster's head to the token as Ray's does: a write (job submission, stop, delete, Serve deploy)
without it is refused with 401. The rehearsal shows both sides: it sends one job submission
without the token to every such head (refused, or the invariant breaks), while KubeRay's own
calls, carrying the token, keep driving the jobs and the endpoint.
"""

from __future__ import annotations

import base64
import http.client
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from aksray.live.kube import Kube
from aksray.rehearse.record import Verdict
from aksray.rehearse.rig.dashboard import DASHBOARD_PORT, DashboardState, HeadHosts

TOKEN_INVARIANT: Final = "ray-token-required"  # noqa: S105 - an invariant's name
TOKEN_KEY: Final = "auth_token"  # noqa: S105 - KubeRay's RAY_AUTH_TOKEN_SECRET_KEY


def cluster_token_secret(cluster: dict[str, object]) -> str | None:
    """The Secret KubeRay keeps a token-auth cluster's token in; None without token auth."""
    spec = cluster.get("spec") or {}
    auth = (spec.get("authOptions") if isinstance(spec, dict) else None) or {}
    if auth.get("mode") != "token":
        return None
    meta = cluster["metadata"]
    assert isinstance(meta, dict)
    return str(auth.get("secretName") or meta["name"])


def unauthenticated_submit(address: str, host: str) -> int:
    """Status of a job submission without a token to the head `host` (through the stand-in)."""
    connection = http.client.HTTPConnection(address, DASHBOARD_PORT, timeout=10)
    try:
        body = b'{"entrypoint": "echo not allowed"}'
        connection.request(
            "POST",
            "/api/jobs/",
            body,
            {"Host": host, "Content-Type": "application/json"},
        )
        return connection.getresponse().status
    finally:
        connection.close()


@dataclass
class TokenWatch:
    """Keeps the stand-in dashboard's tokens current and probes each new one (before every
    sample)."""

    kube: Kube
    namespaces: tuple[str, ...]
    state: DashboardState
    address: str
    domain: str
    note: Callable[[str, str, str], None]
    verdict: Verdict = field(default_factory=lambda: Verdict(TOKEN_INVARIANT))
    probed: set[tuple[str, str]] = field(default_factory=set)

    def update(self) -> None:
        for ns in self.namespaces:
            clusters = self.kube.items(f"/apis/ray.io/v1/namespaces/{ns}/rayclusters")
            secrets = {c["metadata"]["name"]: s for c in clusters if (s := cluster_token_secret(c))}
            if not secrets:
                continue
            heads = self.kube.items(f"/api/v1/namespaces/{ns}/services", "ray.io/node-type=head")
            for service in heads:
                cluster = (service["metadata"].get("labels") or {}).get("ray.io/cluster", "")
                if cluster in secrets:
                    self._register(ns, service["metadata"]["name"], cluster, secrets[cluster])

    def _register(self, ns: str, service: str, cluster: str, secret_name: str) -> None:
        if (ns, service) in self.state.tokens:
            return
        secret = self.kube.get_or_none(f"/api/v1/namespaces/{ns}/secrets/{secret_name}")
        data = (secret or {}).get("data") or {}
        if TOKEN_KEY not in data:
            return  # not created yet: KubeRay makes it before it calls the head
        with self.state.lock:
            self.state.tokens[(ns, service)] = base64.b64decode(data[TOKEN_KEY]).decode()
        if (ns, cluster) in self.probed:
            return
        self.probed.add((ns, cluster))
        status = unauthenticated_submit(self.address, f"{service}.{ns}.svc.{self.domain}")
        self.note(
            cluster,
            "ray token",
            f"KubeRay created Secret {ns}/{secret_name}; a job submission without it: {status}",
        )
        if status != 401:
            self.verdict.breach(
                f"a job submission without the token to {ns}/{service} got {status}, not 401"
            )


def head_services(kube: Kube, namespaces: tuple[str, ...]) -> list[tuple[str, str]]:
    """(namespace, name) of every Ray head Service: the hosts KubeRay's operator calls."""
    return [
        (ns, svc["metadata"]["name"])
        for ns in namespaces
        for svc in kube.items(f"/api/v1/namespaces/{ns}/services", "ray.io/node-type=head")
    ]


def keep_heads_reachable(
    before_sample: list[Callable[[], None]],
    note: Callable[[str, str, str], None],
    *,
    kube: Kube,
    namespaces: tuple[str, ...],
    hosts: HeadHosts,
    dashboard: DashboardState | None,
) -> TokenWatch | None:
    """Before every sample (`before_sample`, an observer's hooks): the stand-in dashboard's
    tokens kept current (where there is one) and KubeRay's hosts file naming every head, so the
    cluster's RayJobs run; each token's probe is a timeline `note`."""
    tokens = None
    if dashboard is not None:
        tokens = TokenWatch(kube, namespaces, dashboard, hosts.address, hosts.domain, note)
        before_sample.append(tokens.update)
    before_sample.append(lambda: hosts.update(head_services(kube, namespaces)))
    return tokens

"""The first `pulumi up` waits until the cluster's API server authorizes the deployer.

The stack grants the identity running `pulumi up` "Azure Kubernetes Service RBAC Cluster Admin"
(components/cluster.py). ARM reports that role assignment created before AKS's authorizer
honours it (Microsoft: "up to five minutes"), and the Kubernetes provider (pulumi-kubernetes
4.25) retries a create only on NotFound and no-match errors, never on 403 Forbidden: its first
object would fail the update. `DeployerAccess` is a resource between the two: created after the
role assignment and before the provider (the provider depends on it), it asks the API server,
with the same kubeconfig, whether the deployer may create CustomResourceDefinitions (the first
thing the operators' releases create) through a SelfSubjectAccessReview, which every
authenticated user may create, every POLL_INTERVAL_S until it is allowed, at most WAIT_S. It
waits once: again only when the role assignment is replaced.

It is a Pulumi dynamic provider (pulumi.dynamic), run by the Pulumi CLI's
`pulumi-resource-pulumi-python` in the project's environment; `kubeconfig` is a secret input.
The kubeconfig's credentials are used as kubectl would: an exec plugin (AKS: `kubelogin
get-token`), a bearer token, or a client certificate.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from typing import Any, Final

import pulumi
import pulumi.dynamic
import yaml

from components.kube_credentials import current_context, exec_token

# The permission asked: the first objects of the stack are the operators' CRDs.
PERMISSION: Final = {
    "verb": "create",
    "group": "apiextensions.k8s.io",
    "resource": "customresourcedefinitions",
}
WAIT_S: Final = 15 * 60  # Microsoft says up to 5 minutes, some AKS pages 10
POLL_INTERVAL_S: Final = 10.0
REQUEST_TIMEOUT_S: Final = 30.0
_REVIEW_PATH: Final = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


class AccessError(Exception):
    """The deployer was not authorized in time."""


class _Client:
    """Just enough of a Kubernetes client to create a SelfSubjectAccessReview."""

    def __init__(self, kubeconfig: str, folder: str) -> None:
        cluster, self._user = current_context(yaml.safe_load(kubeconfig) or {})
        url = urllib.parse.urlsplit(cluster["server"])
        self._host, self._port = url.hostname or "", url.port or 443
        self._tls = ssl.create_default_context()
        if cluster.get("insecure-skip-tls-verify"):
            self._tls.check_hostname = False
            self._tls.verify_mode = ssl.CERT_NONE
        elif cluster.get("certificate-authority-data"):
            ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
            self._tls.load_verify_locations(cadata=ca)
        elif cluster.get("certificate-authority"):
            self._tls.load_verify_locations(cafile=cluster["certificate-authority"])
        if self._user.get("client-certificate-data"):
            cert, key = os.path.join(folder, "client.crt"), os.path.join(folder, "client.key")
            for path, field in ((cert, "client-certificate-data"), (key, "client-key-data")):
                with open(path, "wb") as handle:
                    handle.write(base64.b64decode(self._user[field]))
            self._tls.load_cert_chain(cert, key)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        token = self._user.get("token")
        if self._user.get("exec"):
            token = exec_token(self._user["exec"])
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def allowed(self) -> tuple[bool, str]:
        """Whether the API server allows PERMISSION now, and what it said."""
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": PERMISSION},
        }
        connection = http.client.HTTPSConnection(
            self._host, self._port, context=self._tls, timeout=REQUEST_TIMEOUT_S
        )
        try:
            connection.request("POST", _REVIEW_PATH, json.dumps(review), self._headers())
            response = connection.getresponse()
            body = response.read().decode(errors="replace")
        finally:
            connection.close()
        if response.status != 201:
            return False, f"HTTP {response.status}: {body[:300]}"
        status = json.loads(body).get("status") or {}
        return bool(status.get("allowed")), str(status.get("reason") or "not allowed yet")


def wait_until_allowed(kubeconfig: str, *, wait_s: float = WAIT_S) -> tuple[int, float]:
    """Ask with the kubeconfig until the API server allows PERMISSION: (reviews asked, seconds
    waited)."""
    with tempfile.TemporaryDirectory(prefix="aksray-access-") as folder:
        return poll(_Client(kubeconfig, folder).allowed, wait_s=wait_s)


def poll(
    ask: Callable[[], tuple[bool, str]],
    *,
    wait_s: float = WAIT_S,
    interval_s: float = POLL_INTERVAL_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[int, float]:
    """`ask` until it allows, every `interval_s`, at most `wait_s`: (times asked, seconds
    waited). A connection error counts as "not yet" (a new cluster's endpoint may settle)."""
    start = clock()
    asked = 0
    while True:
        asked += 1
        try:
            allowed, said = ask()
        except OSError as error:
            allowed, said = False, f"{type(error).__name__}: {error}"
        if allowed:
            return asked, clock() - start
        if clock() - start + interval_s > wait_s:
            raise AccessError(
                f"the cluster's API server did not allow the deployer to {PERMISSION['verb']} "
                f"{PERMISSION['resource']} within {wait_s / 60:g} minutes of its role "
                f"assignment ({asked} access reviews; last: {said}). Check the assignment (az "
                "role assignment list --scope <cluster id>) and `kubectl auth can-i create "
                "customresourcedefinitions`, then run pulumi up again"
            )
        sleep(interval_s)


class _Provider(pulumi.dynamic.ResourceProvider):
    """Waits on create; a changed role assignment replaces it (and waits again)."""

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        asked, waited = wait_until_allowed(str(props["kubeconfig"]))
        outs = {
            "role_assignment": props["role_assignment"],
            "access_reviews": asked,
            "waited_seconds": round(waited, 1),
        }
        return pulumi.dynamic.CreateResult(id_=str(props["role_assignment"]), outs=outs)

    def diff(
        self, _id: str, olds: dict[str, Any], news: dict[str, Any]
    ) -> pulumi.dynamic.DiffResult:
        changed = olds.get("role_assignment") != news.get("role_assignment")
        return pulumi.dynamic.DiffResult(
            changes=changed, replaces=["role_assignment"] if changed else [], stables=[]
        )


class DeployerAccess(pulumi.dynamic.Resource):
    """Created once the API server authorizes the deployer (see the module docstring)."""

    access_reviews: pulumi.Output[int]
    waited_seconds: pulumi.Output[float]

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: pulumi.Input[str],
        role_assignment: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(
            _Provider(),
            name,
            # Dynamic resources keep their property names as written: snake_case, so that
            # the outputs are these attributes.
            {
                "kubeconfig": pulumi.Output.secret(kubeconfig),
                "role_assignment": role_assignment,
                "access_reviews": None,
                "waited_seconds": None,
            },
            opts,
        )

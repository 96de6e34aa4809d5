"""A small Kubernetes REST client: what the rehearsal needs and nothing else; the path of any
kind comes from the API server's discovery.

Client-certificate or bearer-token authentication over one keep-alive HTTPS connection per
thread. Objects are plain dicts, the same shape `manifests/` builds. `as_user` makes requests as
another user by impersonation (Kubernetes' `Impersonate-User` and `Impersonate-Group` headers):
what that user may do is then decided by the cluster's authorizers and admission, as if the user
had signed in (the signed-in identity needs the `impersonate` verb, an admin has it).
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from components.kube_credentials import exec_token

FIELD_MANAGER: Final = "aksray-rehearse"


# How long a request waits out the server's 429s before it fails.
THROTTLED_SECONDS: Final = 30.0


class KubeError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


def api_prefix(api_version: str) -> str:
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"


@dataclass(frozen=True)
class Impersonation:
    """Whom requests act as: a user and the groups it is in."""

    user: str
    groups: tuple[str, ...] = ()

    def headers(self) -> list[tuple[str, str]]:
        return [("Impersonate-User", self.user)] + [
            ("Impersonate-Group", group) for group in self.groups
        ]


@dataclass(frozen=True)
class Credentials:
    server: str
    ca_file: str | None
    cert_file: str | None = None
    key_file: str | None = None
    token: str | None = None


def credentials_from_kubeconfig(
    path: Path, context: str | None = None, *, allow_exec: bool = False
) -> Credentials:
    """Server and credentials of a kubeconfig context: certificates or a token, and with
    `allow_exec` the token of its credential plugin (AKS: kubelogin), taken once."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    name = context or config.get("current-context")
    ctx = next(c["context"] for c in config["contexts"] if c["name"] == name)
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in config["users"] if u["name"] == ctx["user"])
    scratch = Path(tempfile.mkdtemp(prefix="aksray-kubeconfig-"))

    def materialise(inline_key: str, file_key: str, source: dict[str, Any]) -> str | None:
        if source.get(file_key):
            return str((path.parent / source[file_key]).resolve())
        if source.get(inline_key):
            target = scratch / inline_key
            target.write_bytes(base64.b64decode(source[inline_key]))
            target.chmod(0o600)
            return str(target)
        return None

    if "exec" in user and allow_exec:
        user = {**user, "token": exec_token(user["exec"])}
    elif "exec" in user or "auth-provider" in user:
        raise ValueError(
            f"kubeconfig user {ctx['user']!r} signs in through a plugin; give a context with a "
            "client certificate or a token (kind's kubeconfig has one)"
        )
    return Credentials(
        server=cluster["server"],
        ca_file=materialise("certificate-authority-data", "certificate-authority", cluster),
        cert_file=materialise("client-certificate-data", "client-certificate", user),
        key_file=materialise("client-key-data", "client-key", user),
        token=user.get("token"),
    )


class Kube:
    """Requests against one API server."""

    def __init__(
        self,
        credentials: Credentials,
        timeout: float = 30.0,
        impersonation: Impersonation | None = None,
    ) -> None:
        self.credentials = credentials
        self.impersonation = impersonation
        parsed = urllib.parse.urlsplit(credentials.server)
        self._host = parsed.hostname or "127.0.0.1"
        self._port = parsed.port or 443
        self._base = parsed.path.rstrip("/")
        self._timeout = timeout
        context = ssl.create_default_context(cafile=credentials.ca_file)
        if credentials.cert_file and credentials.key_file:
            context.load_cert_chain(credentials.cert_file, credentials.key_file)
        self._ssl = context
        self._local = threading.local()
        self._discovery: Discovery | None = None

    def as_user(self, user: str, groups: tuple[str, ...] = ()) -> Kube:
        """The same API server, every request made as `user` in `groups` (impersonation)."""
        return Kube(self.credentials, self._timeout, Impersonation(user, groups))

    def _connection(self) -> http.client.HTTPSConnection:
        connection: http.client.HTTPSConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPSConnection(
                self._host, self._port, context=self._ssl, timeout=self._timeout
            )
            self._local.connection = connection
        return connection

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: dict[str, str] | None = None,
    ) -> Any:
        url = self._base + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        headers = [("Accept", "application/json")]
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers += [("Content-Type", content_type), ("Content-Length", str(len(data)))]
        if self.credentials.token:
            headers.append(("Authorization", f"Bearer {self.credentials.token}"))
        if self.impersonation is not None:
            headers += self.impersonation.headers()  # a header per group, repeated
        # 429 (too many requests, or storage re-initialising after a CRD changed): wait as the
        # server says and try again, as client-go does, for at most THROTTLED_SECONDS.
        waited = 0.0
        status, payload, retry_after = self._send(method, url, headers, data)
        while status == 429 and waited < THROTTLED_SECONDS:
            pause = min(max(retry_after, 0.5), 5.0)
            time.sleep(pause)
            waited += pause
            status, payload, retry_after = self._send(method, url, headers, data)
        if status >= 400:
            try:
                message = json.loads(payload).get("message", payload.decode(errors="replace"))
            except ValueError:
                message = payload.decode(errors="replace")
            raise KubeError(status, message)
        return json.loads(payload) if payload else None

    def _send(
        self, method: str, url: str, headers: list[tuple[str, str]], data: bytes | None
    ) -> tuple[int, bytes, float]:
        """One request: its status, body and Retry-After (seconds; 1 when not given)."""
        for attempt in (1, 2):  # a keep-alive connection the server closed: reconnect once
            connection = self._connection()
            try:
                connection.putrequest(method, url, skip_accept_encoding=True)
                for header, value in headers:
                    connection.putheader(header, value)
                connection.endheaders(data)
                response = connection.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, ConnectionError, OSError):
                connection.close()
                self._local.connection = None
                if attempt == 2:
                    raise
        try:
            retry_after = float(response.getheader("Retry-After") or 1)
        except ValueError:
            retry_after = 1.0
        return response.status, payload, retry_after

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def get_or_none(self, path: str) -> Any:
        try:
            return self.get(path)
        except KubeError as error:
            if error.status == 404:
                return None
            raise

    def items(self, path: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        query = {"labelSelector": label_selector} if label_selector else None
        result = self.request("GET", path, query=query)
        return list(result.get("items") or [])

    def create(self, path: str, obj: dict[str, Any], dry_run: bool = False) -> Any:
        query = {"dryRun": "All"} if dry_run else None
        return self.request("POST", path, obj, query=query)

    def apply(self, obj: dict[str, Any], force: bool = False) -> Any:
        """Server-side apply under our own field manager (never forced unless asked)."""
        meta = obj["metadata"]
        if self._discovery is None:
            self._discovery = Discovery(self)
        path = self._discovery.path(
            obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace")
        )
        if path is None:
            raise KubeError(404, f"the server does not serve {obj['apiVersion']} {obj['kind']}")
        query = {"fieldManager": FIELD_MANAGER, "force": "true" if force else "false"}
        return self.request("PATCH", path, obj, "application/apply-patch+yaml", query)

    def merge_patch(self, path: str, patch: dict[str, Any]) -> Any:
        return self.request("PATCH", path, patch, "application/merge-patch+json")

    def delete(self, path: str, now: bool = False) -> Any:
        """Delete, in the background; `now`: with no grace period (a pod goes at once)."""
        options: dict[str, Any] = {"propagationPolicy": "Background"}
        if now:
            options["gracePeriodSeconds"] = 0
        try:
            return self.request("DELETE", path, options)
        except KubeError as error:
            if error.status == 404:
                return None
            raise


class Discovery:
    """API discovery, cached per group-version: the path of any kind the server serves."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self._resources: dict[str, dict[str, tuple[str, bool]]] = {}

    def resources(self, api_version: str) -> dict[str, tuple[str, bool]]:
        """kind -> (plural, namespaced) of one group-version ({} when not served)."""
        if api_version not in self._resources:
            listing = self.kube.get_or_none(api_prefix(api_version)) or {}
            self._resources[api_version] = {
                r["kind"]: (r["name"], bool(r.get("namespaced")))
                for r in listing.get("resources") or []
                if "/" not in r["name"]  # subresources (status, scale) are not objects
            }
        return self._resources[api_version]

    def path(self, api_version: str, kind: str, name: str, namespace: str | None) -> str | None:
        found = self.resources(api_version).get(kind)
        if found is None:
            return None
        plural, namespaced = found
        scope = f"/namespaces/{namespace}" if namespaced and namespace else ""
        return f"{api_prefix(api_version)}{scope}/{plural}/{name}"

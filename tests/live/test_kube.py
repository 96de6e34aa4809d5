"""The Kubernetes client (aksray/live/kube.py) against a local HTTPS server: what it sends,
impersonation included, and the client certificate the rig gives KubeRay."""

from __future__ import annotations

import http.server
import json
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from aksray.live import kube
from aksray.live.kube import Credentials, Kube, KubeError
from aksray.rehearse.rig.pki import Pki, client_certificate, make_pki


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    throttled: ClassVar[int] = 0  # how many requests to answer 429 first

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        _Recorder.seen.append(
            {
                "method": self.command,
                "path": self.path,
                "headers": [(k, v) for k, v in self.headers.items()],
                "body": json.loads(body) if body else None,
            }
        )
        payload = json.dumps({"kind": "Status", "status": {"allowed": True}}).encode()
        if _Recorder.throttled > 0:
            _Recorder.throttled -= 1
            payload = json.dumps({"message": "storage is (re)initializing"}).encode()
            self.send_response(429)
            self.send_header("Retry-After", "0")
        else:
            self.send_response(201 if self.command == "POST" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def do_DELETE(self) -> None:
        self._answer()

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def server(pki: Pki) -> Iterator[str]:
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.cert, pki.key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Recorder.seen.clear()
    _Recorder.throttled = 0
    yield f"https://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_a_request_as_another_user_names_the_user_and_each_group(pki: Pki, server: str) -> None:
    admin = Kube(Credentials(server, str(pki.ca_cert), str(pki.cert), str(pki.key)))
    member = admin.as_user("alice@example.com", ("team-a-devs", "everyone"))
    member.create("/apis/ray.io/v1/namespaces/team-a/rayjobs", {"kind": "RayJob"}, dry_run=True)
    admin.get("/version")
    first, second = _Recorder.seen
    assert (first["method"], first["path"]) == (
        "POST",
        "/apis/ray.io/v1/namespaces/team-a/rayjobs?dryRun=All",
    )
    assert first["body"] == {"kind": "RayJob"}
    impersonation = [(k, v) for k, v in first["headers"] if k.startswith("Impersonate-")]
    # One header per group: a comma-joined value would be one group named "a,b".
    assert impersonation == [
        ("Impersonate-User", "alice@example.com"),
        ("Impersonate-Group", "team-a-devs"),
        ("Impersonate-Group", "everyone"),
    ]
    assert not [k for k, _ in second["headers"] if k.startswith("Impersonate-")]


def test_a_delete_now_asks_for_no_grace_period(pki: Pki, server: str) -> None:
    """`now=True`: the object goes at once, not after its pod's graceful termination."""
    admin = Kube(Credentials(server, str(pki.ca_cert), str(pki.cert), str(pki.key)))
    admin.delete("/api/v1/namespaces/kube-system/pods/a")
    admin.delete("/api/v1/namespaces/kube-system/pods/b", now=True)
    assert [(r["method"], r["body"]) for r in _Recorder.seen] == [
        ("DELETE", {"propagationPolicy": "Background"}),
        ("DELETE", {"propagationPolicy": "Background", "gracePeriodSeconds": 0}),
    ]


def test_a_throttled_request_is_sent_again_as_the_server_asks(pki: Pki, server: str) -> None:
    """429 (as after a CRD changed: "storage is (re)initializing") is waited out, as client-go
    does, and the request's answer is the one after it."""
    admin = Kube(Credentials(server, str(pki.ca_cert), str(pki.cert), str(pki.key)))
    _Recorder.throttled = 2
    assert admin.get("/version") == {"kind": "Status", "status": {"allowed": True}}
    assert [r["path"] for r in _Recorder.seen] == ["/version"] * 3


def test_a_request_throttled_for_too_long_fails_with_the_servers_message(
    pki: Pki, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kube, "THROTTLED_SECONDS", 1.0)
    admin = Kube(Credentials(server, str(pki.ca_cert), str(pki.cert), str(pki.key)))
    _Recorder.throttled = 100
    with pytest.raises(KubeError) as refused:
        admin.get("/version")
    assert (refused.value.status, str(refused.value)) == (429, "429: storage is (re)initializing")
    assert len(_Recorder.seen) == 3  # at once, then after 0.5 s twice


def test_kuberays_certificate_names_its_service_account(pki: Pki) -> None:
    own = client_certificate(
        pki, "kuberay", "system:serviceaccount:kuberay-system:kuberay-operator", ("system:masters",)
    )
    subject = subprocess.run(
        ["openssl", "x509", "-in", str(own.cert), "-noout", "-subject", "-nameopt", "RFC2253"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert subject == (
        "subject=CN=system:serviceaccount:kuberay-system:kuberay-operator,O=system:masters"
    )
    verified = subprocess.run(
        ["openssl", "verify", "-CAfile", str(pki.ca_cert), str(own.cert)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    assert (own.ca_cert, own.ca_key) == (pki.ca_cert, pki.ca_key)
    assert own.key == Path(pki.cert.parent / "kuberay.key")

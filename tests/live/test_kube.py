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

from aksray.live.kube import Credentials, Kube
from aksray.rehearse.rig.pki import Pki, client_certificate, make_pki


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

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
        self.send_response(201 if self.command == "POST" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
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

"""A stand-in for the Ray dashboard and Serve proxy of every head pod on the rig.

kwok pods run no Ray, but KubeRay drives RayJobs and RayServices through the head's dashboard
(job submission and status, Serve applications) and Serve's proxy health. This server answers
those calls for every head at once: the operator resolves `<head-svc>.<ns>.svc.<domain>` through
its private hosts file to the dashboard's loopback address, and the Host header says which head
was called.

A submitted job is PENDING, then RUNNING for the time the scenario gives its workload, then
SUCCEEDED (or FAILED, when the scenario says so); a stop request ends it STOPPED. Serve
applications report RUNNING with every deployment HEALTHY as soon as they are deployed. A head
whose Ray cluster has token auth takes writes only with its token
(aksray/rehearse/invariants/ray_token_required.py).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

DASHBOARD_PORT: Final = 8265
SERVE_PORT: Final = 8000
PENDING_SECONDS: Final = 1.0


@dataclass
class SubmittedJob:
    namespace: str
    submission_id: str
    entrypoint: str
    submitted: float
    run_seconds: float
    fails: bool = False
    stopped_at: float | None = None

    def status(self, now: float) -> str:
        if self.stopped_at is not None:
            return "STOPPED"
        if now < self.submitted + PENDING_SECONDS:
            return "PENDING"
        if now < self.submitted + PENDING_SECONDS + self.run_seconds:
            return "RUNNING"
        return "FAILED" if self.fails else "SUCCEEDED"

    def info(self, now: float) -> dict[str, Any]:
        status = self.status(now)
        info: dict[str, Any] = {
            "job_id": self.submission_id,
            "submission_id": self.submission_id,
            "status": status,
            "entrypoint": self.entrypoint,
            "message": f"rehearsal: {status.lower()} (no Ray runs on the rig)",
            "start_time": int(self.submitted * 1000),
        }
        if status in ("SUCCEEDED", "FAILED", "STOPPED"):
            end = self.stopped_at or self.submitted + PENDING_SECONDS + self.run_seconds
            info["end_time"] = int(end * 1000)
        return info


# (namespace, submission id) -> (seconds the job runs, whether it fails)
JobTiming = Callable[[str, str], tuple[float, bool]]


def default_timing(_namespace: str, _submission_id: str) -> tuple[float, bool]:
    return 20.0, False


@dataclass
class DashboardState:
    timing: JobTiming = default_timing
    jobs: dict[tuple[str, str], SubmittedJob] = field(default_factory=dict)
    serve: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # (namespace, head service) -> the token its writes need
    # (aksray/rehearse/invariants/ray_token_required.py).
    tokens: dict[tuple[str, str], str] = field(default_factory=dict)
    refused: int = 0  # writes refused for want of the token

    def authorized(self, head: tuple[str, str], header: str | None) -> bool:
        """A write to `head` carries its token, where it has one (`Bearer <token>`)."""
        with self.lock:
            token = self.tokens.get(head)
            if token is None or header == f"Bearer {token}":
                return True
            self.refused += 1
            return False

    def submitted_jobs(self) -> list[SubmittedJob]:
        with self.lock:
            return list(self.jobs.values())

    def end_running_jobs(self) -> int:
        """Every job still pending or running succeeds now; how many there were."""
        now = time.time()
        ended = 0
        with self.lock:
            for job in self.jobs.values():
                if job.status(now) in ("PENDING", "RUNNING"):
                    job.run_seconds = max(0.0, now - job.submitted - PENDING_SECONDS)
                    ended += 1
        return ended


def head_from_host(host: str) -> tuple[str, str]:
    """`svc.ns.svc.domain:port` -> (namespace, service)."""
    name = host.split(":", 1)[0]
    parts = name.split(".")
    return (parts[1], parts[0]) if len(parts) > 2 else ("", name)


def serve_details(config: dict[str, Any]) -> dict[str, Any]:
    applications = {}
    for app in config.get("applications", []) or []:
        deployments = {
            d["name"]: {"name": d["name"], "status": "HEALTHY", "message": ""}
            for d in app.get("deployments", []) or [{"name": "default"}]
        }
        applications[app["name"]] = {
            "name": app["name"],
            "status": "RUNNING",
            "message": "",
            "route_prefix": app.get("route_prefix", "/"),
            "deployments": deployments,
        }
    return {"applications": applications, "deploy_mode": "MULTI_APP"}


def make_handler(state: DashboardState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _reply(self, code: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def _head(self) -> tuple[str, str]:
            return head_from_host(self.headers.get("Host", ""))

        def _refused(self) -> bool:
            """A write without the head's token gets 401, as from Ray's dashboard."""
            header = self.headers.get("x-ray-authorization") or self.headers.get("Authorization")
            if state.authorized(self._head(), header):
                return False
            self._reply(401, {"detail": "missing or wrong token"})
            return True

        def do_GET(self) -> None:
            namespace, service = self._head()
            path = self.path.split("?", 1)[0]
            now = time.time()
            if path.startswith("/api/serve/applications"):
                with state.lock:
                    config = state.serve.get((namespace, service), {})
                self._reply(200, serve_details(config))
            elif path.rstrip("/") == "/api/jobs":
                with state.lock:
                    jobs = [j.info(now) for (ns, _), j in state.jobs.items() if ns == namespace]
                self._reply(200, jobs)
            elif path.startswith("/api/jobs/"):
                job_id = path[len("/api/jobs/") :].split("/", 1)[0]
                with state.lock:
                    job = state.jobs.get((namespace, job_id))
                if job is None:
                    self._reply(404, {"detail": f"job {job_id} does not exist"})
                elif path.endswith("/logs"):
                    self._reply(200, {"logs": ""})
                else:
                    self._reply(200, job.info(now))
            else:
                self._reply(200, {"status": "ok"})  # health and version probes

        def do_POST(self) -> None:
            if self._refused():
                return
            namespace, _ = self._head()
            path = self.path.split("?", 1)[0]
            if path.rstrip("/") == "/api/jobs":
                body = self._body()
                job_id = body.get("submission_id") or f"raysubmit_{int(time.time() * 1000)}"
                run_seconds, fails = state.timing(namespace, job_id)
                with state.lock:
                    if (namespace, job_id) in state.jobs:
                        self._reply(500, {"detail": "Please use a different submission_id"})
                        return
                    state.jobs[(namespace, job_id)] = SubmittedJob(
                        namespace,
                        job_id,
                        body.get("entrypoint", ""),
                        time.time(),
                        run_seconds,
                        fails,
                    )
                self._reply(200, {"job_id": job_id, "submission_id": job_id})
            elif path.endswith("/stop"):
                job_id = path[len("/api/jobs/") :].split("/", 1)[0]
                with state.lock:
                    job = state.jobs.get((namespace, job_id))
                    if job is not None and job.stopped_at is None:
                        job.stopped_at = time.time()
                self._reply(200, {"stopped": job is not None})
            else:
                self._reply(404, {"detail": "unknown"})

        def do_PUT(self) -> None:
            if self._refused():
                return
            if self.path.startswith("/api/serve/applications"):
                config = self._body()
                with state.lock:
                    state.serve[self._head()] = config
                self._reply(200, {})
            else:
                self._reply(404, {"detail": "unknown"})

        def do_DELETE(self) -> None:
            if self._refused():
                return
            namespace, _ = self._head()
            job_id = self.path.split("?", 1)[0][len("/api/jobs/") :].strip("/")
            with state.lock:
                state.jobs.pop((namespace, job_id), None)
            self._reply(200, {})

    return Handler


class QuietServer(ThreadingHTTPServer):
    """A client that hangs up (the operator's 2 s timeout on a busy machine) is not an error."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


class StandInDashboard:
    """The dashboard server (every head) and the Serve proxy health server (every node)."""

    def __init__(
        self,
        dashboard_address: str,
        node_address: str,
        state: DashboardState,
        ports: tuple[int, int] = (DASHBOARD_PORT, SERVE_PORT),
    ) -> None:
        handler = make_handler(state)
        self.state = state
        self._servers = [
            QuietServer((dashboard_address, ports[0]), handler),
            QuietServer((node_address, ports[1]), handler),
        ]
        for server in self._servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()

    def close(self) -> None:
        for server in self._servers:
            with contextlib.suppress(Exception):
                server.shutdown()
                server.server_close()


class HeadHosts:
    """The KubeRay operator's private /etc/hosts: one line per head Service it may call."""

    def __init__(self, etc: Path, address: str, domain: str) -> None:
        self.path = etc / "hosts"
        self.base = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        self.address = address
        self.domain = domain
        self.names: set[str] = set()

    def update(self, services: list[tuple[str, str]]) -> None:
        names = {f"{svc}.{ns}.svc.{self.domain}" for ns, svc in services}
        if names <= self.names:
            return
        self.names |= names
        lines = "".join(f"{self.address} {name}\n" for name in sorted(self.names))
        # In place: the folder is bound over the operator's /etc, and Go's resolver re-reads
        # the file when its modification time changes.
        self.path.write_text(self.base + lines, encoding="utf-8")

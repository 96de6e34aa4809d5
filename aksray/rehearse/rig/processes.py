"""Start the rig's processes, wait for them, and stop exactly the ones started.

Every process runs in its own session (process group), with its output in a log file of the run
folder. A process that needs files at fixed paths under /etc (Kueue's metrics certificate, the
KubeRay operator's hosts file) runs in a private mount namespace where a folder of the run is
bound over /etc: nothing on the machine changes, and the files vanish with the process.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# /etc entries a Go controller may read: name resolution and the time zone.
ETC_PASSTHROUGH = ("hosts", "resolv.conf", "nsswitch.conf", "localtime", "passwd", "group")


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the rehearsal's process dies, however it dies
    (a SIGKILL included), so a rig never outlives the command that started it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class RigError(Exception):
    """The rig could not be brought up or lost a process; the message says which and why."""


def last_lines(path: Path, count: int = 12) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-count:])


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None


def private_etc(directory: Path, files: Mapping[str, bytes]) -> Path:
    """A folder to bind over /etc: the machine's resolver files plus `files` (relative paths)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ETC_PASSTHROUGH:
        source = Path("/etc") / name
        if source.is_file():
            shutil.copyfile(source, directory / name)
    for relative, content in files.items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return directory


def with_private_etc(argv: Sequence[str], etc: Path) -> list[str]:
    """`argv` run in a new mount namespace with `etc` bound over /etc (pid stays the same)."""
    unshare = ["unshare", "--mount"]
    if os.geteuid() != 0:
        unshare.append("--map-root-user")  # an unprivileged user namespace owns the mount
    script = 'mount --bind "$0" /etc && exec "$@"'
    return [*unshare, "--", "/bin/sh", "-c", script, str(etc), *argv]


@dataclass
class Supervisor:
    """The processes of one rig, stopped in reverse order of start."""

    logs: Path
    processes: list[Process] = field(default_factory=list)

    def start(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        etc: Path | None = None,
    ) -> Process:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{name}.log"
        command = with_private_etc(argv, etc) if etc is not None else list(argv)
        environment = {
            k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")
        }  # client-go would send loopback traffic, webhooks included, through a proxy
        environment.update(env or {})
        with log.open("ab") as out:
            popen = subprocess.Popen(  # noqa: S603 - our own binaries, argv from the rig
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,
                preexec_fn=die_with_parent,  # noqa: PLW1509 - no threads run during bring-up
            )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def check_alive(self) -> None:
        for process in self.processes:
            if not process.alive():
                raise RigError(
                    f"{process.name} exited with code {process.popen.returncode}; "
                    f"last lines of {process.log}:\n{last_lines(process.log)}"
                )

    def wait_for(
        self, what: str, probe: Callable[[], T | None], timeout: float, interval: float = 0.2
    ) -> T:
        """Poll `probe` until it returns a value; fail naming `what` (and a dead process)."""
        deadline = time.monotonic() + timeout
        last = ""
        while True:
            self.check_alive()
            try:
                value = probe()
            except Exception as error:  # noqa: BLE001 - not ready yet; kept for the message
                last = f" (last answer: {type(error).__name__}: {error})"
            else:
                if value is not None and value is not False:
                    return value
            if time.monotonic() > deadline:
                raise RigError(f"timed out after {timeout:.0f}s waiting for {what}{last}")
            time.sleep(interval)

    def peak_memory_mib(self) -> int:
        """The rig's peak resident memory so far: every process's high-water mark, summed."""
        total_kib = 0
        for process in self.processes:
            with contextlib.suppress(OSError):
                status = Path(f"/proc/{process.popen.pid}/status").read_text(encoding="utf-8")
                for line in status.splitlines():
                    if line.startswith("VmHWM:"):
                        total_kib += int(line.split()[1])
        return total_kib // 1024

    def stop(self, name: str, grace: float = 10.0) -> bool:
        """Stop the process `name` (SIGTERM, then SIGKILL after `grace` seconds), as a rolling
        Deployment stops its old pod; True when it went on SIGTERM."""
        found = [p for p in self.processes if p.name == name]
        if not found:
            raise RigError(f"no process {name} was started on this rig")
        process = found[0]
        clean = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.popen.pid, signal.SIGTERM)
        try:
            process.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            clean = False
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.popen.pid, signal.SIGKILL)
            process.popen.wait(timeout=5)
        self.processes.remove(process)
        return clean

    def stop_all(self, grace: float = 10.0) -> list[str]:
        """Stop every started process; return the names of any that had to be killed."""
        killed: list[str] = []
        for process in reversed(self.processes):
            if process.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in reversed(self.processes):
            remaining = max(0.1, deadline - time.monotonic())
            try:
                process.popen.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.popen.pid, signal.SIGKILL)
                process.popen.wait(timeout=5)
                killed.append(process.name)
        self.processes.clear()
        return killed

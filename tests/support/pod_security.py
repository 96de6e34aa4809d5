"""The Pod Security Standards' `restricted` profile, as checks on a pod spec.

Written from the documented controls (kubernetes.io, "Pod Security Standards", the Baseline and
Restricted tables), every control the admission plugin applies to a pod: the Baseline ones
(restricted includes them) and the Restricted ones on top. A violation is one line naming the
field path and the rule, so a failing test says what to fix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

# Baseline "Capabilities": what a container may add beyond the runtime's defaults.
BASELINE_CAPABILITIES: Final = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# Restricted "Capabilities": drop ALL, add nothing but NET_BIND_SERVICE.
RESTRICTED_CAPABILITIES: Final = frozenset({"NET_BIND_SERVICE"})
# Restricted "Volume Types".
RESTRICTED_VOLUME_TYPES: Final = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
# Baseline "Sysctls": the safe set.
SAFE_SYSCTLS: Final = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
SELINUX_TYPES: Final = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)
SECCOMP_ALLOWED: Final = frozenset({"RuntimeDefault", "Localhost"})
APPARMOR_ALLOWED: Final = frozenset({"RuntimeDefault", "Localhost"})


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in enumerate(spec.get(kind) or ()):
            yield f"spec.{kind}[{index}]", container


def restricted_violations(spec: Mapping[str, Any]) -> list[str]:
    """Every control of the `restricted` profile this pod spec breaks (empty: it passes)."""
    return [*_baseline(spec), *_restricted(spec)]


def _baseline(spec: Mapping[str, Any]) -> Iterator[str]:
    pod_context = spec.get("securityContext") or {}
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            yield f"spec.{field}: host namespaces are forbidden"
    yield from _windows_and_selinux("spec.securityContext", pod_context)
    if pod_context.get("seccompProfile", {}).get("type") == "Unconfined":
        yield "spec.securityContext.seccompProfile.type: Unconfined is forbidden"
    for index, sysctl in enumerate(pod_context.get("sysctls") or ()):
        if sysctl.get("name") not in SAFE_SYSCTLS:
            yield f"spec.securityContext.sysctls[{index}]: {sysctl.get('name')} is not safe"
    for index, volume in enumerate(spec.get("volumes") or ()):
        if "hostPath" in volume:
            yield f"spec.volumes[{index}]: hostPath volumes are forbidden"
    for path, container in _containers(spec):
        context = container.get("securityContext") or {}
        if context.get("privileged"):
            yield f"{path}.securityContext.privileged: privileged containers are forbidden"
        added = set((context.get("capabilities") or {}).get("add") or ())
        if added - BASELINE_CAPABILITIES:
            yield f"{path}.securityContext.capabilities.add: {sorted(added)} beyond baseline"
        for port in container.get("ports") or ():
            if port.get("hostPort"):
                yield f"{path}.ports: hostPort {port['hostPort']} is forbidden"
        if context.get("procMount", "Default") != "Default":
            yield f"{path}.securityContext.procMount: only Default is allowed"
        apparmor = (context.get("appArmorProfile") or {}).get("type")
        if apparmor is not None and apparmor not in APPARMOR_ALLOWED:
            yield f"{path}.securityContext.appArmorProfile.type: {apparmor} is forbidden"
        yield from _windows_and_selinux(f"{path}.securityContext", context)


def _windows_and_selinux(path: str, context: Mapping[str, Any]) -> Iterator[str]:
    if (context.get("windowsOptions") or {}).get("hostProcess"):
        yield f"{path}.windowsOptions.hostProcess: HostProcess is forbidden"
    selinux = context.get("seLinuxOptions") or {}
    if selinux.get("type", "") not in SELINUX_TYPES:
        yield f"{path}.seLinuxOptions.type: {selinux['type']} is forbidden"
    for field in ("user", "role"):
        if selinux.get(field):
            yield f"{path}.seLinuxOptions.{field}: must be unset"


def _restricted(spec: Mapping[str, Any]) -> Iterator[str]:
    pod_context = spec.get("securityContext") or {}
    for index, volume in enumerate(spec.get("volumes") or ()):
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUME_TYPES:
            yield f"spec.volumes[{index}]: {sorted(kinds)} is not an allowed volume type"
    if pod_context.get("runAsUser") == 0:
        yield "spec.securityContext.runAsUser: 0 (root) is forbidden"
    pod_non_root = pod_context.get("runAsNonRoot") is True
    pod_seccomp = (pod_context.get("seccompProfile") or {}).get("type")
    for path, container in _containers(spec):
        context = container.get("securityContext") or {}
        if context.get("allowPrivilegeEscalation") is not False:
            yield f"{path}.securityContext.allowPrivilegeEscalation: must be false"
        non_root = context.get("runAsNonRoot")
        if non_root is False or (non_root is None and not pod_non_root):
            yield f"{path}.securityContext.runAsNonRoot: must be true (here or on the pod)"
        if context.get("runAsUser") == 0:
            yield f"{path}.securityContext.runAsUser: 0 (root) is forbidden"
        seccomp = (context.get("seccompProfile") or {}).get("type") or pod_seccomp
        if seccomp not in SECCOMP_ALLOWED:
            yield f"{path}.securityContext.seccompProfile.type: RuntimeDefault or Localhost"
        capabilities = context.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or ()):
            yield f"{path}.securityContext.capabilities.drop: must include ALL"
        added = set(capabilities.get("add") or ())
        if added - RESTRICTED_CAPABILITIES:
            yield f"{path}.securityContext.capabilities.add: only NET_BIND_SERVICE may be added"

"""The device rules every pod in a team namespace obeys, as CEL for the admission policies
(manifests/access/admission.py): which resources, environment variables, runtime classes and
annotations reach a GPU, and the expressions that look for them in a pod (template).

CEL within what Kubernetes 1.33 compiles: no optional types, no list flattening; every field
that may be absent is read behind `has()`.
"""

from __future__ import annotations

from typing import Any, Final

# The environment variables by which the NVIDIA container toolkit picks a container's devices
# (nvidia-container-toolkit v1.20.0, internal/config/image/envvars.go). `void` and `none` give
# none (KAI writes `void` into pods it keeps off GPUs).
DEVICE_ENV: Final = (
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_MIG_CONFIG_DEVICES",
    "NVIDIA_MIG_MONITOR_DEVICES",
    "NVIDIA_IMEX_CHANNELS",
)
NO_DEVICES: Final = ("void", "none")
# Annotations that reach devices past the resource requests: CDI device requests (the
# container runtime's, and the GPU Operator's NRI plugin's), and KAI's GPU fractions, which KAI
# places outside Kueue's quota.
DEVICE_ANNOTATION_PREFIXES: Final = ("cdi.k8s.io/", "nvidia.cdi.k8s.io/")
FRACTION_ANNOTATIONS: Final = ("gpu-fraction", "gpu-memory", "gpu-fraction-num-devices")
GPU_RESOURCE_PREFIX: Final = "nvidia.com/"
NVIDIA_RUNTIME_PREFIX: Final = "nvidia"
TEAMS_GUIDE: Final = "docs/teams.md"


def cel_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def containers(template: str) -> str:
    """Every container of a pod (template): ordinary, init and ephemeral."""
    spec = f"{template}.spec"
    return (
        f"({spec}.containers"
        f" + (has({spec}.initContainers) ? {spec}.initContainers : [])"
        f" + (has({spec}.ephemeralContainers) ? {spec}.ephemeralContainers : []))"
    )


ENV_OK: Final = (
    f"!(e.name in {cel_list(DEVICE_ENV)})"
    " || (e.name == 'NVIDIA_VISIBLE_DEVICES' && has(e.value)"
    f" && e.value in {cel_list(NO_DEVICES)})"
)
NO_DEVICE_ENV: Final = f"(!has(c.env) || c.env.all(e, {ENV_OK}))"
_GPU_NAME: Final = f"r.startsWith('{GPU_RESOURCE_PREFIX}')"
NO_GPU: Final = (
    "(!has(c.resources) || ("
    f"(!has(c.resources.limits) || !c.resources.limits.exists(r, {_GPU_NAME}))"
    f" && (!has(c.resources.requests) || !c.resources.requests.exists(r, {_GPU_NAME}))))"
)
ANNOTATION_OK: Final = (
    "!("
    + " || ".join(f"k.startsWith('{p}')" for p in DEVICE_ANNOTATION_PREFIXES)
    + f" || k in {cel_list(FRACTION_ANNOTATIONS)})"
)


def templates_all(predicate: str) -> str:
    return f"variables.templates.all(t, {predicate})"


def template_rules(guard: str, runtime_guard: str = "") -> list[dict[str, Any]]:
    """The device rules every pod (template) obeys, Ray's or not; `guard` true skips them,
    `runtime_guard` true the runtime class rule alone (a runtime class a mutating webhook
    gave a pod from a template the Ray policy already held to the rule)."""
    skip = f"{guard} || " if guard else ""
    skip_runtime = skip + (f"{runtime_guard} || " if runtime_guard else "")
    return [
        {
            "expression": skip + templates_all(f"{containers('t')}.all(c, {NO_DEVICE_ENV})"),
            "message": (
                f"a container may not set {', '.join(DEVICE_ENV)} (they select GPUs without "
                "requesting them; NVIDIA_VISIBLE_DEVICES may only be void or none): ask for "
                f"nvidia.com/gpu in a Ray worker group of a RayJob or RayService ({TEAMS_GUIDE})"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": skip_runtime
            + templates_all(
                "!has(t.spec.runtimeClassName)"
                f" || !t.spec.runtimeClassName.startsWith('{NVIDIA_RUNTIME_PREFIX}')"
            ),
            "message": (
                "runtimeClassName nvidia* hands a container to NVIDIA's runtime, which gives it "
                "the GPUs its environment names without requesting them: leave runtimeClassName "
                "out; GPUs come from nvidia.com/gpu requests"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": skip
            + templates_all(
                "!has(t.metadata) || !has(t.metadata.annotations)"
                f" || t.metadata.annotations.all(k, {ANNOTATION_OK})"
            ),
            "message": (
                "CDI device annotations (cdi.k8s.io/, nvidia.cdi.k8s.io/) and KAI's GPU "
                f"fractions ({', '.join(FRACTION_ANNOTATIONS)}) reach GPUs outside the team's "
                "quota: ask for whole GPUs (nvidia.com/gpu) in a Ray worker group"
            ),
            "reason": "Forbidden",
        },
    ]

"""The Kubernetes invariants: Ray pods federated and queued, no inline secret, pinned charts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from resource_inputs import (
    HELM_TYPES,
    QUEUE_LABEL,
    RAY_KINDS,
    WORKLOAD_IDENTITY_CLIENT_ID,
    WORKLOAD_IDENTITY_USE,
    Resource,
    StackResource,
    get,
    kind,
)

# Env names whose value must come from a Secret, never inline.
_SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCOUNT_?KEY|CONNECTION_?STRING"
    r"|CREDENTIAL)",
    re.IGNORECASE,
)
# Values that are credentials whatever they are called.
_SECRET_VALUE = re.compile(
    r"(hf_[A-Za-z0-9]{20,}|AccountKey=|SharedAccessSignature=|sig=[A-Za-z0-9%]"
    r"{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----)"
)
# A mask or a deploy-time placeholder is not a secret.
_MASKED = ("[secret]", "<unknown until deploy")


# ---- Kubernetes ------------------------------------------------------------------------------


def _ray_cluster_spec(props: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = props.get("spec") or {}
    kind = props.get("kind")
    if kind == "RayJob":
        return spec.get("rayClusterSpec") or {}
    if kind == "RayService":
        return spec.get("rayClusterConfig") or {}
    return spec if isinstance(spec, Mapping) else {}


def ray_pod_templates(props: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(group name, pod template) for the head and every worker group of a Ray resource."""
    cluster = _ray_cluster_spec(props)
    head = get(cluster, "headGroupSpec", "template")
    if isinstance(head, Mapping):
        yield "head", head
    for group in cluster.get("workerGroupSpecs") or []:
        template = group.get("template") if isinstance(group, Mapping) else None
        if isinstance(template, Mapping):
            yield str(group.get("groupName", "worker")), template


def _is_ray(resource: Resource) -> bool:
    return resource.resource_type.startswith("kubernetes:ray.io/") and kind(resource) in RAY_KINDS


def ray_pods_use_workload_identity(resources: Sequence[StackResource]) -> list[tuple[str, str]]:
    identity_accounts = {
        (get(r.props, "metadata", "namespace"), get(r.props, "metadata", "name"))
        for r in resources
        if r.resource_type == "kubernetes:core/v1:ServiceAccount"
        and WORKLOAD_IDENTITY_CLIENT_ID in (get(r.props, "metadata", "annotations") or {})
    }
    violations = []
    for ray in (r for r in resources if _is_ray(r)):
        namespace = get(ray.props, "metadata", "namespace")
        for group, template in ray_pod_templates(ray.props):
            account = get(template, "spec", "serviceAccountName")
            if (namespace, account) not in identity_accounts:
                continue
            labels = get(template, "metadata", "labels") or {}
            if labels.get(WORKLOAD_IDENTITY_USE) != "true":
                violations.append(
                    (
                        ray.urn,
                        f"pod template {group} runs as workload-identity "
                        f"service account {account} without the label "
                        f'{WORKLOAD_IDENTITY_USE}: "true"',
                    )
                )
    return violations


def ray_workloads_are_queued(resource: Resource) -> list[str]:
    if not _is_ray(resource) or kind(resource) == "RayCluster":
        return []
    labels = get(resource.props, "metadata", "labels") or {}
    if not labels.get(QUEUE_LABEL):
        return [f"{kind(resource)} has no {QUEUE_LABEL} label: it would bypass Kueue's quota"]
    return []


def _strings(node: Any, path: str = "") -> Iterable[tuple[str, str]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _strings(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _strings(value, f"{path}[{index}]")
    elif isinstance(node, str):
        yield path, node


def _env_lists(node: Any, path: str = "") -> Iterable[tuple[str, list[Any]]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            child = f"{path}.{key}" if path else str(key)
            if key == "env" and isinstance(value, list):
                yield child, value
            else:
                yield from _env_lists(value, child)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _env_lists(value, f"{path}[{index}]")


def no_plain_text_secrets(resource: Resource) -> list[str]:
    if not resource.resource_type.startswith("kubernetes:"):
        return []
    if resource.resource_type == "kubernetes:core/v1:Secret":
        return []  # a Secret is where secret values belong (Pulumi keeps them encrypted)
    problems = []
    for path, value in _strings(resource.props):
        if _SECRET_VALUE.search(value) and not value.startswith(_MASKED):
            problems.append(
                f"{path} holds what looks like a credential in plain text; "
                "reference a Secret instead"
            )
    for path, env in _env_lists(resource.props):
        for index, entry in enumerate(env):
            if not isinstance(entry, Mapping) or "value" not in entry:
                continue
            inline = entry.get("value")
            if _SECRET_NAME.search(str(entry.get("name", ""))) and inline not in ("", None):
                problems.append(
                    f"{path}[{index}] ({entry.get('name')}) sets a secret inline; "
                    "use valueFrom.secretKeyRef"
                )
    return problems


def helm_versions_pinned(resource: Resource) -> list[str]:
    if resource.resource_type not in HELM_TYPES:
        return []
    version = str(resource.props.get("version") or "")
    if (
        not version
        or version.lower() in ("latest", "*")
        or version.startswith((">", "<", "~", "^"))
    ):
        return [
            f"Helm chart {resource.props.get('chart')!r} must pin an exact version, got "
            f"{version or 'none'!r}"
        ]
    return []

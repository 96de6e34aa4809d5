"""Each provider's own answer to "does this input change replace the resource?", and the API's
answer to "may this input change in place?" (catalog/replacement.py, catalog/immutable_fields.py
hold the rules and their sources; this module applies them as the providers do)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from aksray.offline.runner import RecordedResource
from aksray.plan.change.model import PathChange, Reason
from aksray.plan.change.paths import covers, parse_path, value_at
from catalog.immutable_fields import refused_updates
from catalog.replacement import (
    AZURE_BY_TYPE,
    BRIDGED_KEYS,
    BRIDGED_SOURCES,
    EVERY_INPUT,
    HELM_RELEASE,
    HELM_SOURCE,
    K8S_FORCE_NEW,
    K8S_METADATA_KEYS,
    K8S_MUTABLE_SWITCH,
    K8S_PROVIDER_SOURCE,
    K8S_SOURCE,
    AzureRow,
)

AZURE_PREFIX: Final = "azure-native:"
K8S_PREFIX: Final = "kubernetes:"
K8S_PROVIDER: Final = "pulumi:providers:kubernetes"
PROVIDER_PREFIX: Final = "pulumi:providers:"
# The kubernetes provider's inputs that name the cluster it talks to.
K8S_PROVIDER_CLUSTER_INPUTS: Final = ("kubeconfig", "context", "cluster")
# A JSON string input whose one field decides (grafana: a dashboard's uid).
_JSON_FIELD_KEYS: Final = {"configJson.uid": ("configJson", "uid")}


def is_kubernetes_object(type_: str) -> bool:
    return type_.startswith(K8S_PREFIX) and type_ != HELM_RELEASE


def known_type(type_: str) -> bool:
    """Whether the replacement rules of this type are known (a test holds every type the
    stacks register to it; an unknown one is planned as its provider's plain update)."""
    if type_.startswith(AZURE_PREFIX):
        return type_ in AZURE_BY_TYPE
    return type_.startswith((K8S_PREFIX, PROVIDER_PREFIX)) or type_ in BRIDGED_KEYS


def group_kind(resource_type: str, inputs: Mapping[str, Any]) -> tuple[str, str]:
    """(API group, kind) of a Kubernetes object ("" for the core group); an azure-native type's
    ("azure-native", its last part)."""
    if resource_type.startswith(AZURE_PREFIX):
        return "azure-native", resource_type.rsplit(":", 1)[-1]
    api_version = str(inputs.get("apiVersion") or resource_type.split(":")[1])
    kind = str(inputs.get("kind") or resource_type.rsplit(":", 1)[-1])
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return ("" if group == "core" else group), kind


def normalize_azure(changes: Sequence[PathChange], resource_type: str) -> list[PathChange]:
    """What azure-native drops before it classifies (applyAzureSpecificDiff): a location that
    differs only in case and spaces ("East US 2" is eastus2)."""
    if not resource_type.startswith(AZURE_PREFIX):
        return list(changes)
    return [c for c in changes if not (c.path == "location" and _same_location(c.old, c.new))]


def _same_location(old: Any, new: Any) -> bool:
    if not isinstance(old, str) or not isinstance(new, str):
        return False
    return old.replace(" ", "").lower() == new.replace(" ", "").lower()


def provider_reasons(
    resource: RecordedResource,
    changes: Sequence[PathChange],
    old_inputs: Mapping[str, Any],
    provider: RecordedResource | None,
) -> list[Reason]:
    """Why the resource's own provider replaces it: the changed inputs its rules name."""
    type_ = resource.type
    if type_.startswith(AZURE_PREFIX):
        row = AZURE_BY_TYPE.get(type_)
        return [] if row is None else _azure(row, changes)
    if type_ == HELM_RELEASE:
        return _keys(changes, ("name", "namespace"), "forceNew", HELM_SOURCE)
    if type_.startswith(K8S_PREFIX):
        return _kubernetes(resource, changes, provider)
    if type_ == K8S_PROVIDER:
        return _keys(changes, K8S_PROVIDER_CLUSTER_INPUTS, "DiffConfig", K8S_PROVIDER_SOURCE)
    if type_ in BRIDGED_KEYS:
        return _bridged(type_, changes, old_inputs, resource.inputs)
    return []


def _azure(row: AzureRow, changes: Sequence[PathChange]) -> list[Reason]:
    """azure-native's differ: a change at a replace key replaces; under one, only an update of
    a value that was there (a child added or removed is a plain change)."""
    reasons = []
    for change in changes:
        for key in row.replace_keys():
            exact = change.path == key.path
            if exact or (covers(key.path, change.path) and change.kind == "update"):
                reasons.append(Reason(change.path, key.rule, key.source))
                break
    return reasons


def _keys(
    changes: Sequence[PathChange], keys: Sequence[str], rule: str, source: str
) -> list[Reason]:
    found = []
    for change in changes:
        if any(covers(key, change.path) for key in keys):
            found.append(Reason(change.path, rule, source))
    return found


def _kubernetes(
    resource: RecordedResource, changes: Sequence[PathChange], provider: RecordedResource | None
) -> list[Reason]:
    inputs = resource.inputs
    api_version, kind = str(inputs.get("apiVersion", "")), str(inputs.get("kind", ""))
    keys = list(K8S_METADATA_KEYS)
    extra = K8S_FORCE_NEW.get((api_version, kind), ())
    switch = K8S_MUTABLE_SWITCH.get((api_version, kind))
    released = switch and provider is not None and _truthy(provider.inputs.get(switch))
    if released and not _truthy(inputs.get("immutable")):
        extra = tuple(k for k in extra if k == "type")
    keys += extra
    return _keys(changes, keys, "forceNew", K8S_SOURCE)


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _bridged(
    type_: str,
    changes: Sequence[PathChange],
    old_inputs: Mapping[str, Any],
    new_inputs: Mapping[str, Any],
) -> list[Reason]:
    source = BRIDGED_SOURCES[type_]
    reasons = []
    for key in BRIDGED_KEYS[type_]:
        if key == EVERY_INPUT:
            reasons += [Reason(c.path, "ForceNew", source) for c in changes]
        elif key in _JSON_FIELD_KEYS:
            field, inner = _JSON_FIELD_KEYS[key]
            if any(covers(field, c.path) for c in changes) and _json_field(
                old_inputs.get(field), inner
            ) != _json_field(new_inputs.get(field), inner):
                reasons.append(Reason(key, "ForceNew", source))
        else:
            reasons += [Reason(c.path, "ForceNew", source) for c in changes if covers(key, c.path)]
    return reasons


def _json_field(text: Any, field: str) -> Any:
    try:
        document = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return document.get(field) if isinstance(document, dict) else None


def refused(
    resource: RecordedResource, changes: Sequence[PathChange], old_inputs: Mapping[str, Any]
) -> tuple[list[Reason], list[Reason]]:
    """(refused now, refused while the workload runs): the in-place updates the API turns
    down, each with the API's message as its rule."""
    group, kind = group_kind(resource.type, resource.inputs)
    always: list[Reason] = []
    running: list[Reason] = []
    for rule in refused_updates(group, kind):
        if rule.only_if_old_has and not value_at(old_inputs, rule.only_if_old_has)[0]:
            continue
        if rule.only_if_old_true and not _truthy(value_at(old_inputs, rule.only_if_old_true)[1]):
            continue
        for change in changes:
            if covers(rule.path, change.path):
                reason = Reason(change.path, rule.message, f"{rule.origin}: {rule.source}")
                (running if rule.while_running else always).append(reason)
                break
    return always, running


def provider_deletes_first(
    resource: RecordedResource, old_inputs: Mapping[str, Any], reasons: Sequence[Reason]
) -> bool:
    """The provider's own delete-before-replace, when the program does not set it.

    azure-native: an explicitly named resource (its name input set) is deleted first; an
    autonamed one is created beside it. pulumi-kubernetes: an object with a fixed name whose
    name and namespace stay is deleted first. A Helm release and the bridged providers create
    the new one first.
    """
    type_, inputs = resource.type, resource.inputs
    if type_.startswith(AZURE_PREFIX):
        row = AZURE_BY_TYPE.get(type_)
        return row is not None and inputs.get(row.name_input) is not None
    if is_kubernetes_object(type_):
        renamed = any(
            parse_path(r.path)[:2] in (("metadata", "name"), ("metadata", "namespace"))
            for r in reasons
        )
        named = value_at(inputs, "metadata.name")[0]
        return named and not renamed and value_at(old_inputs, "metadata.name")[0]
    return False

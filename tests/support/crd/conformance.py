"""Validate rendered custom resources against the upstream CRDs, the way the API server does.

`validate_object(manifest)` finds the CRD of the object's group, version and kind in the
reference data (`crds/<project>/`), and checks the object against that version's
`openAPIV3Schema`:

- structural schema semantics with `jsonschema` (draft 4, the dialect OpenAPI v3.0 is built on):
  type, properties, required, enum, pattern, min/max lengths, items and properties, `format`
  (int32, int64 ranges; date-time), `nullable`, `x-kubernetes-int-or-string`,
  `x-kubernetes-list-type` (set and map entries must be unique), `x-kubernetes-embedded-resource`;
- unknown fields are errors: the API server silently prunes every field the schema does not
  declare unless `x-kubernetes-preserve-unknown-fields` is set, so a field we write that the CRD
  does not know would simply vanish;
- top-level `metadata` may hold only name, namespace, labels and annotations (ObjectMeta is not
  part of a CRD schema; our builders set only these), with Kubernetes' syntax for each; a
  namespaced kind needs a namespace and a cluster-scoped kind must not have one;
- schema defaults are applied first (as the API server does before it validates), then every
  `x-kubernetes-validations` CEL rule is evaluated with cel-python on the path it is attached to.

Rules that reference `oldSelf` are transition rules, which the API server runs only on update.
They are run as an update of the object onto itself (oldSelf = self) unless `old=` gives the
previous object, in which case old values are correlated by property, map key and list-map key
like the API server does (a rule whose old value cannot be correlated is not run, as there).

Nothing is skipped silently: a rule that does not compile, uses a CEL function this module does
not implement, or fails while evaluating is reported as an error that names the rule and its path.

Kubernetes CEL library functions implemented on top of cel-python (see `KUBERNETES_FUNCTIONS`):
the quantity library — `quantity`, `isQuantity`, `sign`, `isInteger`, `asInteger`,
`asApproximateFloat`, `add`, `sub`, `isGreaterThan`, `isLessThan`, `compareTo`. The reference
CRDs' own rules use only standard CEL (has, all, exists, filter, size, in, ?:), which cel-python
provides; anything else a future CRD brings fails loudly until it is implemented here.

The structural schema and `compile_crd` are in tests/support/crd/schema.py, the CEL rules and
libraries in tests/support/crd/cel.py; this module finds the CRDs and validates objects.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import yaml
from celpy import celtypes
from celpy.adapter import json_to_cel

from aksray.reference import CRD_PROJECTS
from tests.support.crd.cel import (
    KUBERNETES_FUNCTIONS,
    SUPPORTED_FUNCTIONS,
    CelRule,
    Quantity,
    escape_property,
    evaluate_rule,
    parse_quantity,
)
from tests.support.crd.schema import JSON_TYPES, CrdVersion, SchemaNode, compile_crd
from tests.support.reference import crds

__all__ = [
    "KUBERNETES_FUNCTIONS",
    "SUPPORTED_FUNCTIONS",
    "CelRule",
    "CrdVersion",
    "Quantity",
    "compile_crd",
    "crd_kinds",
    "crd_version",
    "escape_property",
    "is_custom_resource",
    "parse_quantity",
    "reference_rules",
    "split_api_version",
    "validate_object",
    "validate_with",
]


# --------------------------------------------------------------------------------------------
# The CRD index: found by group/kind cheaply, parsed and compiled once, on first use
# --------------------------------------------------------------------------------------------

_GROUP_LINE = re.compile(r"^  group: (\S+)$", re.MULTILINE)
_KIND_LINE = re.compile(r"^    kind: (\S+)$", re.MULTILINE)


@functools.cache
def _crd_files() -> dict[tuple[str, str], Path]:
    """(group, kind) -> CRD file, read from each file's `spec.group` and `spec.names.kind`."""
    index: dict[tuple[str, str], Path] = {}
    for path in sorted(p for project in CRD_PROJECTS for p in crds(project).rglob("*.yaml")):
        text = path.read_text()
        group, kind = _GROUP_LINE.search(text), _KIND_LINE.search(text)
        if group and kind:
            index[(group.group(1), kind.group(1))] = path
        else:  # not in controller-gen's layout: read it properly
            spec = yaml.load(text, Loader=yaml.CSafeLoader)["spec"]
            index[(spec["group"], spec["names"]["kind"])] = path
    if not index:
        raise FileNotFoundError(f"no CRDs under {crds(CRD_PROJECTS[0]).parent}")
    return index


@functools.cache
def _crd_document(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    return document


@functools.cache
def crd_version(group: str, version: str, kind: str) -> CrdVersion | None:
    """The parsed, compiled CRD version, or None if the reference has no such CRD version."""
    path = _crd_files().get((group, kind))
    if path is None:
        return None
    spec = _crd_document(path)["spec"]
    if (spec["group"], spec["names"]["kind"]) != (group, kind):
        raise LookupError(f"{path.name} is not the CRD of {kind}.{group}")
    return compile_crd(spec, version)


def crd_kinds() -> list[tuple[str, str]]:
    """(group, kind) of every CRD in the reference."""
    return sorted(_crd_files())


def reference_rules(kind: str | None = None, version: str | None = None) -> list[CelRule]:
    """Every CEL rule of the reference CRDs (optionally of one kind and version)."""
    rules: list[CelRule] = []
    for group, crd_kind in crd_kinds():
        if kind is not None and crd_kind != kind:
            continue
        spec = _crd_document(_crd_files()[(group, crd_kind)])["spec"]
        for entry in spec["versions"]:
            if version is not None and entry["name"] != version:
                continue
            compiled = crd_version(group, entry["name"], crd_kind)
            assert compiled is not None
            rules.extend(compiled.rules)
    return rules


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def is_custom_resource(manifest: Mapping[str, Any]) -> bool:
    """True unless the object belongs to a built-in Kubernetes API group."""
    group, _ = split_api_version(str(manifest.get("apiVersion", "")))
    return "." in group and not (group == "k8s.io" or group.endswith(".k8s.io"))


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _format_path(parts: Iterator[str | int] | list[str | int]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.match(r"^[A-Za-z_][A-Za-z0-9_-]*$", part):
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return text or "(root)"


def _apply_defaults(value: Any, node: SchemaNode) -> None:
    """Fill schema defaults in place, the way the API server does before validating."""
    if isinstance(value, dict):
        for name, child in node.properties.items():
            if "default" in child.schema and (
                name not in value or (value[name] is None and not child.nullable)
            ):
                value[name] = copy.deepcopy(child.schema["default"])
        for name, item in value.items():
            found = node.properties.get(name) or node.additional
            if found is not None:
                _apply_defaults(item, found)
    elif isinstance(value, list) and node.items is not None:
        for item in value:
            _apply_defaults(item, node.items)


def _to_cel(value: Any, node: SchemaNode | None) -> Any:
    """A JSON value as cel-python values, with Kubernetes' property-name escaping."""
    if isinstance(value, dict):
        if node is not None and node.properties:
            entries = {}
            for key, item in value.items():
                name = escape_property(str(key))
                if name is not None:
                    entries[celtypes.StringType(name)] = _to_cel(item, node.properties.get(key))
            return celtypes.MapType(entries)
        child = node.additional if node is not None else None
        return celtypes.MapType(
            {celtypes.StringType(str(k)): _to_cel(v, child) for k, v in value.items()}
        )
    if isinstance(value, list):
        child = node.items if node is not None else None
        return celtypes.ListType([_to_cel(item, child) for item in value])
    return json_to_cel(value)


_MISSING: Final = object()


def _matches_type(value: Any, node: SchemaNode) -> bool:
    expected = node.type
    if value is None:
        return False
    if expected is None:
        return True
    check = JSON_TYPES.get(expected)
    return check is None or check(value)


def _list_map_key(item: Any, keys: list[str]) -> tuple[Any, ...] | None:
    if not isinstance(item, dict):
        return None
    return tuple(repr(item.get(key)) for key in keys)


def _check_rules(
    value: Any,
    old: Any,
    node: SchemaNode,
    path: list[str | int],
    errors: list[str],
    *,
    self_update: bool,
) -> None:
    if not node.has_rules or not _matches_type(value, node):
        return
    if node.rules:
        self_cel = _to_cel(value, node)
        if self_update:
            old_cel = self_cel
        elif old is _MISSING or old is None:
            old_cel = _MISSING
        else:
            old_cel = _to_cel(old, node)
        for rule in node.rules:
            where = _format_path(path) + rule.field_path
            if rule.problem is not None:
                errors.append(f"{where}: rule {rule.rule!r} cannot be evaluated: {rule.problem}")
                continue
            if rule.transition and old_cel is _MISSING:
                continue  # a create, or an uncorrelated value: the API server skips it too
            passed, message = evaluate_rule(rule, self_cel, old_cel)
            if not passed:
                errors.append(f"{where}: {message} (rule: {rule.rule})")
    if isinstance(value, dict):
        for key, item in value.items():
            child = node.properties.get(key) or node.additional
            if child is None:
                continue
            old_item = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
            _check_rules(item, old_item, child, [*path, key], errors, self_update=self_update)
    elif isinstance(value, list) and node.items is not None:
        keys = list(node.schema.get("x-kubernetes-list-map-keys") or [])
        old_by_key: dict[tuple[Any, ...], Any] = {}
        if keys and isinstance(old, list) and node.schema.get("x-kubernetes-list-type") == "map":
            for old_item in old:
                key = _list_map_key(old_item, keys)
                if key is not None:
                    old_by_key[key] = old_item
        for index, item in enumerate(value):
            key = _list_map_key(item, keys) if keys else None
            old_item = old_by_key.get(key, _MISSING) if key is not None else _MISSING
            _check_rules(
                item, old_item, node.items, [*path, index], errors, self_update=self_update
            )


def validate_object(
    manifest: Mapping[str, Any],
    *,
    old: Mapping[str, Any] | None = None,
    allow_deprecated: bool = False,
) -> list[str]:
    """Every way `manifest` breaks its upstream CRD; empty when the API server would accept it.

    `old`: the object this one replaces (runs transition rules against it); by default the
    object is validated as an update onto itself, so transition rules run with oldSelf = self.
    """
    api_version = str(manifest.get("apiVersion", ""))
    kind = str(manifest.get("kind", ""))
    metadata = manifest.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    where = f"{kind or '?'} {namespace + '/' if namespace else ''}{name or '?'}"
    group, version = split_api_version(api_version)
    if not group or not version:
        return [f"{where}: apiVersion {api_version!r} is not group/version of a custom resource"]
    crd = crd_version(group, version, kind)
    if crd is None:
        known = [k for g, k in crd_kinds() if g == group]
        hint = f" (kinds of {group}: {', '.join(known)})" if known else ""
        return [f"{where}: no CRD in the reference serves {kind} {api_version}{hint}"]
    return validate_with(crd, manifest, old=old, allow_deprecated=allow_deprecated)


def validate_with(
    crd: CrdVersion,
    manifest: Mapping[str, Any],
    *,
    old: Mapping[str, Any] | None = None,
    allow_deprecated: bool = False,
) -> list[str]:
    """`validate_object` against a given compiled CRD version."""
    metadata = manifest.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    where = f"{crd.kind} {namespace + '/' if namespace else ''}{name or '?'}"
    api_version = f"{crd.group}/{crd.version}"
    errors: list[str] = []
    if manifest.get("apiVersion") != api_version or manifest.get("kind") != crd.kind:
        errors.append(f"{where}: is not a {crd.kind} {api_version}")
    if not crd.served:
        errors.append(f"{where}: apiVersion {api_version} is not served")
    if crd.deprecated and not allow_deprecated:
        errors.append(f"{where}: apiVersion {api_version} is deprecated; write the storage version")
    if crd.namespaced and not namespace:
        errors.append(
            f"{where}: metadata.namespace: {crd.kind} is namespaced; name its namespace (otherwise "
            "it lands in the provider's default namespace)"
        )
    if not crd.namespaced and namespace:
        errors.append(
            f"{where}: metadata.namespace: {crd.kind} is cluster-scoped; remove namespace"
        )
    if crd.has_status_subresource and "status" in manifest:
        errors.append(f"{where}: status: is written by the controller; the API ignores it here")

    defaulted = copy.deepcopy(dict(manifest))
    _apply_defaults(defaulted, crd.root)
    for error in crd.validator.iter_errors(defaulted):
        errors.append(f"{where}: {_format_path(list(error.absolute_path))}: {error.message}")

    if old is None:
        old_defaulted: Any = defaulted
    else:
        old_defaulted = copy.deepcopy(dict(old))
        _apply_defaults(old_defaulted, crd.root)
    rule_errors: list[str] = []
    _check_rules(defaulted, old_defaulted, crd.root, [], rule_errors, self_update=old is None)
    errors.extend(f"{where}: {error}" for error in rule_errors)
    return errors

"""The structural side of CRD conformance: `compile_crd` turns one version of a CRD into a tree of
schema nodes that carry its compiled CEL rules, and into draft-4 JSON Schema that `jsonschema`
checks with the API server's structural-schema semantics (nullable, int-or-string, list types,
unknown fields, ObjectMeta)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import jsonschema
from jsonschema import ValidationError

from tests.support.crd.cel import CelRule, compile_rule

# --------------------------------------------------------------------------------------------
# Object metadata: what a CRD schema leaves to ObjectMeta, restricted to what we write.
# --------------------------------------------------------------------------------------------

_DNS_SUBDOMAIN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_DNS_LABEL: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_LABEL_VALUE: Final = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_METADATA_FIELDS: Final = ("name", "namespace", "labels", "annotations")


def _object_meta_schema(*, name_required: bool) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 253, "pattern": _DNS_SUBDOMAIN},
            "namespace": {"type": "string", "maxLength": 63, "pattern": _DNS_LABEL},
            "labels": {
                "type": "object",
                "x-qualified-keys": True,
                "additionalProperties": {
                    "type": "string",
                    "maxLength": 63,
                    "pattern": _LABEL_VALUE,
                },
            },
            "annotations": {
                "type": "object",
                "x-qualified-keys": True,
                "additionalProperties": {"type": "string"},
            },
        },
        "required": ["name"] if name_required else [],
        "x-known-fields": list(_METADATA_FIELDS),
    }


# --------------------------------------------------------------------------------------------
# Schema nodes: the structural part of a CRD version, with its compiled rules
# --------------------------------------------------------------------------------------------


@dataclass
class SchemaNode:
    schema: Mapping[str, Any]
    properties: dict[str, SchemaNode]
    items: SchemaNode | None
    additional: SchemaNode | None
    rules: list[CelRule]
    has_rules: bool = False  # this node or a descendant has rules

    @property
    def type(self) -> str | None:
        value = self.schema.get("type")
        return str(value) if value is not None else None

    @property
    def nullable(self) -> bool:
        return bool(self.schema.get("nullable"))


def _build_nodes(
    schema: Mapping[str, Any], path: str, group: str, version: str, kind: str
) -> SchemaNode:
    properties = {
        name: _build_nodes(sub, f"{path}.{name}" if path else name, group, version, kind)
        for name, sub in (schema.get("properties") or {}).items()
    }
    items = schema.get("items")
    additional = schema.get("additionalProperties")
    node = SchemaNode(
        schema=schema,
        properties=properties,
        items=_build_nodes(items, f"{path}[*]", group, version, kind)
        if isinstance(items, Mapping)
        else None,
        additional=_build_nodes(additional, f"{path}[*]", group, version, kind)
        if isinstance(additional, Mapping)
        else None,
        rules=[
            compile_rule(entry, group=group, version=version, kind=kind, path=path)
            for entry in schema.get("x-kubernetes-validations") or []
        ],
    )
    children = [*properties.values(), node.items, node.additional]
    node.has_rules = bool(node.rules) or any(c is not None and c.has_rules for c in children)
    return node


def _json_schema(schema: Mapping[str, Any], *, root: bool = False) -> dict[str, Any]:
    """The CRD schema as draft-4 JSON Schema plus this module's keywords."""
    result: dict[str, Any] = {}
    int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
    for key, value in schema.items():
        if key in ("description", "default", "example", "x-kubernetes-validations"):
            continue
        if key == "properties":
            result[key] = {name: _json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, Mapping):
            result[key] = _json_schema(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            if int_or_string and key == "anyOf":
                continue  # checked by x-kubernetes-int-or-string, with one clear message
            result[key] = [_json_schema(sub) for sub in value]
        else:
            result[key] = value
    if schema.get("x-kubernetes-embedded-resource"):
        properties = result.setdefault("properties", {})
        properties.setdefault("apiVersion", {"type": "string"})
        properties.setdefault("kind", {"type": "string"})
        properties["metadata"] = _object_meta_schema(name_required=False)
        result["required"] = sorted({*result.get("required", []), "apiVersion", "kind"})
    if root:
        result.setdefault("properties", {})["metadata"] = _object_meta_schema(name_required=True)
    is_object = result.get("type") == "object"
    if (
        is_object
        and "additionalProperties" not in result
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["x-known-fields"] = sorted(result.get("properties", {}))
    return result


# --------------------------------------------------------------------------------------------
# jsonschema with the structural-schema semantics of the API server
# --------------------------------------------------------------------------------------------

JSON_TYPES: Final[dict[str, Callable[[object], bool]]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def _type(
    validator: Any, expected: str, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if instance is None:
        if not schema.get("nullable"):
            yield ValidationError(
                "null is not allowed here (the field is not nullable: the API server drops "
                "it); leave the field out instead"
            )
        return
    check = JSON_TYPES.get(expected)
    if check is not None and not check(instance):
        yield ValidationError(f"{instance!r} is not of type {expected!r}")


def _enum(
    validator: Any, allowed: list[Any], instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if instance is None and schema.get("nullable"):
        return
    if not any(
        a == instance and isinstance(a, bool) == isinstance(instance, bool) for a in allowed
    ):
        yield ValidationError(f"{instance!r} is not one of {allowed!r}")


def _int_or_string(
    validator: Any, enabled: bool, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not enabled or (instance is None and schema.get("nullable")):
        return
    if instance is None:
        yield ValidationError(
            "null is not allowed here (the field is not nullable: the API server drops "
            "it); leave the field out instead"
        )
    elif isinstance(instance, bool) or not isinstance(instance, (int, str)):
        yield ValidationError(f"{instance!r} must be an integer or a string")


def _known_fields(
    validator: Any, known: list[str], instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    for key in instance:
        if key not in known:
            error = ValidationError(
                "unknown field: the API server prunes fields its schema does not declare; "
                f"known fields here: {', '.join(known) if known else '(none)'}"
            )
            error.path.appendleft(key)
            yield error


def _qualified_keys(
    validator: Any, enabled: bool, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not enabled or not isinstance(instance, dict):
        return
    for key in instance:
        prefix, _, name = str(key).rpartition("/")
        valid = bool(_QUALIFIED_NAME.match(name)) and len(name) <= 63
        if prefix:
            valid = valid and len(prefix) <= 253 and re.match(_DNS_SUBDOMAIN, prefix) is not None
        if not valid:
            error = ValidationError(
                "not a valid key: an optional DNS subdomain prefix and '/', then a name of at "
                "most 63 alphanumerics, '-', '_' or '.'"
            )
            error.path.appendleft(key)
            yield error


def _list_type(
    validator: Any, list_type: str, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not isinstance(instance, list):
        return
    if list_type == "set":
        for index, item in enumerate(instance):
            if item in instance[:index]:
                error = ValidationError(f"duplicate entry {item!r} in a set-type list")
                error.path.appendleft(index)
                yield error
    elif list_type == "map":
        keys = list(schema.get("x-kubernetes-list-map-keys") or [])
        seen: list[tuple[Any, ...]] = []
        for index, item in enumerate(instance):
            if not isinstance(item, dict):
                continue
            value = tuple(item.get(key) for key in keys)
            if value in seen:
                error = ValidationError(
                    "duplicate entry in a map-type list: "
                    + ", ".join(f"{k}={v!r}" for k, v in zip(keys, value, strict=True))
                )
                error.path.appendleft(index)
                yield error
            seen.append(value)


_FORMATS = jsonschema.FormatChecker(formats=())
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _int32(value: object) -> bool:
    return not isinstance(value, int) or -(2**31) <= value < 2**31


def _int64(value: object) -> bool:
    return not isinstance(value, int) or -(2**63) <= value < 2**63


def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _RFC3339.match(value):
        return False
    datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    return True


_FORMATS.checks("int32")(_int32)
_FORMATS.checks("int64")(_int64)
_FORMATS.checks("date-time", raises=ValueError)(_date_time)


_Validator = jsonschema.validators.extend(
    jsonschema.Draft4Validator,
    {
        "type": _type,
        "enum": _enum,
        "x-kubernetes-int-or-string": _int_or_string,
        "x-known-fields": _known_fields,
        "x-qualified-keys": _qualified_keys,
        "x-kubernetes-list-type": _list_type,
    },
)


# --------------------------------------------------------------------------------------------
# A CRD version, compiled: its schema nodes and its validator
# --------------------------------------------------------------------------------------------


@dataclass
class CrdVersion:
    group: str
    version: str
    kind: str
    namespaced: bool
    served: bool
    deprecated: bool
    has_status_subresource: bool
    root: SchemaNode
    validator: Any

    @property
    def rules(self) -> list[CelRule]:
        found: list[CelRule] = []

        def walk(node: SchemaNode | None) -> None:
            if node is None or not node.has_rules:
                return
            found.extend(node.rules)
            for child in (*node.properties.values(), node.items, node.additional):
                walk(child)

        walk(self.root)
        return found


def compile_crd(spec: Mapping[str, Any], version: str) -> CrdVersion | None:
    """One version of a CRD's `spec`, compiled: schema validator and CEL programs."""
    group, kind = str(spec["group"]), str(spec["names"]["kind"])
    for entry in spec["versions"]:
        if entry["name"] != version:
            continue
        schema = entry["schema"]["openAPIV3Schema"]
        return CrdVersion(
            group=group,
            version=version,
            kind=kind,
            namespaced=spec["scope"] == "Namespaced",
            served=bool(entry.get("served")),
            deprecated=bool(entry.get("deprecated")),
            has_status_subresource="status" in (entry.get("subresources") or {}),
            root=_build_nodes(schema, "", group, version, kind),
            validator=_Validator(_json_schema(schema, root=True), format_checker=_FORMATS),
        )
    return None

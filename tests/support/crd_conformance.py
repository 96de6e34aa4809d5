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
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Final

import celpy
import jsonschema
import yaml
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, base_functions
from jsonschema import ValidationError

from aksray.reference import CRD_PROJECTS
from tests.support.reference import crds

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
# The Kubernetes CEL quantity library, on top of cel-python
# --------------------------------------------------------------------------------------------

_QUANTITY = re.compile(
    r"^(?P<number>[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"
)
_SUFFIX_FACTORS: Final[dict[str, Decimal]] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    **{suffix: Decimal(1024**power) for power, suffix in enumerate(("Ki", "Mi", "Gi"), 1)},
    "Ti": Decimal(1024**4),
    "Pi": Decimal(1024**5),
    "Ei": Decimal(1024**6),
}


def parse_quantity(text: str) -> Decimal:
    """A Kubernetes quantity string (any suffix, exponent form included) as an exact Decimal."""
    match = _QUANTITY.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a Kubernetes quantity")
    suffix = match.group("suffix") or ""
    number = Decimal(match.group("number"))
    if suffix[:1] in ("e", "E"):
        return number.scaleb(int(suffix[1:]))
    return number * _SUFFIX_FACTORS[suffix]


class Quantity:
    """The value of `quantity(...)` in Kubernetes CEL."""

    def __init__(self, value: Decimal) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self.value})"


def _cel_function(
    function: Callable[..., celtypes.Value | Quantity],
) -> Callable[..., Any]:
    """Errors inside a library function become CEL evaluation errors, not Python crashes."""

    @functools.wraps(function)
    def wrapper(*args: Any) -> Any:
        try:
            return function(*args)
        except (ValueError, TypeError, InvalidOperation, AttributeError) as exc:
            return CELEvalError(f"{function.__name__}: {exc}", type(exc), exc.args)

    return wrapper


def _as_quantity(value: object) -> Quantity:
    if isinstance(value, Quantity):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Quantity(Decimal(int(value)))
    raise TypeError(f"expected a quantity or an int, got {type(value).__name__}")


def _quantity(text: celtypes.StringType) -> Quantity:
    return Quantity(parse_quantity(str(text)))


def _is_quantity(text: celtypes.StringType) -> celtypes.BoolType:
    return celtypes.BoolType(_QUANTITY.match(str(text)) is not None)


def _sign(q: Quantity) -> celtypes.IntType:
    return celtypes.IntType((q.value > 0) - (q.value < 0))


def _is_integer(q: Quantity) -> celtypes.BoolType:
    return celtypes.BoolType(q.value == q.value.to_integral_value() and -(2**63) <= q.value < 2**63)


def _as_integer(q: Quantity) -> celtypes.IntType:
    if not _is_integer(q):
        raise ValueError(f"{q.value} is not an int64 integer")
    return celtypes.IntType(int(q.value))


def _as_approximate_float(q: Quantity) -> celtypes.DoubleType:
    return celtypes.DoubleType(float(q.value))


def _add(q: Quantity, other: object) -> Quantity:
    return Quantity(q.value + _as_quantity(other).value)


def _sub(q: Quantity, other: object) -> Quantity:
    return Quantity(q.value - _as_quantity(other).value)


def _is_greater_than(q: Quantity, other: Quantity) -> celtypes.BoolType:
    return celtypes.BoolType(q.value > _as_quantity(other).value)


def _is_less_than(q: Quantity, other: Quantity) -> celtypes.BoolType:
    return celtypes.BoolType(q.value < _as_quantity(other).value)


def _compare_to(q: Quantity, other: Quantity) -> celtypes.IntType:
    value = _as_quantity(other).value
    return celtypes.IntType((q.value > value) - (q.value < value))


KUBERNETES_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "quantity": _cel_function(_quantity),
    "isQuantity": _cel_function(_is_quantity),
    "sign": _cel_function(_sign),
    "isInteger": _cel_function(_is_integer),
    "asInteger": _cel_function(_as_integer),
    "asApproximateFloat": _cel_function(_as_approximate_float),
    "add": _cel_function(_add),
    "sub": _cel_function(_sub),
    "isGreaterThan": _cel_function(_is_greater_than),
    "isLessThan": _cel_function(_is_less_than),
    "compareTo": _cel_function(_compare_to),
}
# Standard CEL: macros and functions cel-python evaluates itself.
_CEL_MACROS: Final = frozenset({"has", "all", "exists", "exists_one", "map", "filter"})
SUPPORTED_FUNCTIONS: Final = frozenset(
    set(base_functions) | _CEL_MACROS | set(KUBERNETES_FUNCTIONS)
)

# --------------------------------------------------------------------------------------------
# CEL rules: compiled once per CRD version
# --------------------------------------------------------------------------------------------

# Kubernetes escapes object property names that are CEL keywords or carry special characters.
_CEL_RESERVED: Final = frozenset(
    (
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for"),
        *("function", "if", "import", "let", "loop", "package", "namespace", "return", "var"),
        *("void", "while"),
    )
)
_CEL_IDENTIFIER = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")


def escape_property(name: str) -> str | None:
    """The name a CEL rule uses for an object property; None if CEL cannot reach it."""
    if name in _CEL_RESERVED:
        return f"__{name}__"
    if not _CEL_IDENTIFIER.match(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )


@functools.cache
def _cel_environment() -> celpy.Environment:
    return celpy.Environment()


def _functions_used(tree: Any) -> set[str]:
    names: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data == "ident_arg":
            names.add(str(node.children[0]))
        elif node.data == "member_dot_arg":
            names.add(str(node.children[1]))
    return names


@dataclass(frozen=True)
class CelRule:
    """One `x-kubernetes-validations` entry of a CRD version, compiled."""

    group: str
    version: str
    kind: str
    path: str  # where the rule sits in the schema: `spec.resourceGroups[*]`
    rule: str
    message: str
    transition: bool  # refers to oldSelf: runs on update only
    functions: frozenset[str]
    problem: str | None  # why this rule cannot be evaluated, or None
    field_path: str = ""
    program: Any = field(default=None, compare=False, repr=False)
    message_program: Any = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.group}/{self.version} at {self.path or '(root)'}: {self.rule}"


def _compile_rule(
    entry: Mapping[str, Any], *, group: str, version: str, kind: str, path: str
) -> CelRule:
    rule = str(entry.get("rule", ""))
    message = str(entry.get("message") or f"failed rule: {rule}")
    env = _cel_environment()
    problem: str | None = None
    program = message_program = None
    functions: frozenset[str] = frozenset()
    try:
        ast = env.compile(rule)
        functions = frozenset(_functions_used(ast))
        program = env.program(ast, functions=KUBERNETES_FUNCTIONS)
    except CELParseError as exc:
        problem = f"does not compile: {str(exc).splitlines()[0]}"
    missing = sorted(functions - SUPPORTED_FUNCTIONS)
    if missing:
        problem = f"uses CEL functions this validator does not implement: {', '.join(missing)}"
    if entry.get("optionalOldSelf"):
        problem = "sets optionalOldSelf; cel-python has no optional types"
    if entry.get("messageExpression") and problem is None:
        try:
            message_program = env.program(
                env.compile(str(entry["messageExpression"])), functions=KUBERNETES_FUNCTIONS
            )
        except CELParseError as exc:
            problem = f"messageExpression does not compile: {str(exc).splitlines()[0]}"
    return CelRule(
        group=group,
        version=version,
        kind=kind,
        path=path,
        rule=rule,
        message=message,
        transition=re.search(r"\boldSelf\b", rule) is not None,
        functions=functions,
        problem=problem,
        field_path=str(entry.get("fieldPath") or ""),
        program=program,
        message_program=message_program,
    )


# --------------------------------------------------------------------------------------------
# Schema nodes: the structural part of a CRD version, with its compiled rules
# --------------------------------------------------------------------------------------------


@dataclass
class _Node:
    schema: Mapping[str, Any]
    properties: dict[str, _Node]
    items: _Node | None
    additional: _Node | None
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
) -> _Node:
    properties = {
        name: _build_nodes(sub, f"{path}.{name}" if path else name, group, version, kind)
        for name, sub in (schema.get("properties") or {}).items()
    }
    items = schema.get("items")
    additional = schema.get("additionalProperties")
    node = _Node(
        schema=schema,
        properties=properties,
        items=_build_nodes(items, f"{path}[*]", group, version, kind)
        if isinstance(items, Mapping)
        else None,
        additional=_build_nodes(additional, f"{path}[*]", group, version, kind)
        if isinstance(additional, Mapping)
        else None,
        rules=[
            _compile_rule(entry, group=group, version=version, kind=kind, path=path)
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

_JSON_TYPES: Final[dict[str, Callable[[object], bool]]] = {
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
    check = _JSON_TYPES.get(expected)
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
# The CRD index: found by group/kind cheaply, parsed and compiled once, on first use
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
    root: _Node
    validator: Any

    @property
    def rules(self) -> list[CelRule]:
        found: list[CelRule] = []

        def walk(node: _Node | None) -> None:
            if node is None or not node.has_rules:
                return
            found.extend(node.rules)
            for child in (*node.properties.values(), node.items, node.additional):
                walk(child)

        walk(self.root)
        return found


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


def _apply_defaults(value: Any, node: _Node) -> None:
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


def _to_cel(value: Any, node: _Node | None) -> Any:
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


def _matches_type(value: Any, node: _Node) -> bool:
    expected = node.type
    if value is None:
        return False
    if expected is None:
        return True
    check = _JSON_TYPES.get(expected)
    return check is None or check(value)


def _list_map_key(item: Any, keys: list[str]) -> tuple[Any, ...] | None:
    if not isinstance(item, dict):
        return None
    return tuple(repr(item.get(key)) for key in keys)


def _evaluate(rule: CelRule, self_value: Any, old_value: Any) -> tuple[bool, str]:
    """(passed, message) for one rule on one value."""
    activation = {"self": self_value}
    if rule.transition:
        activation["oldSelf"] = old_value
    try:
        result = rule.program.evaluate(activation)
    except CELEvalError as exc:
        return False, f"could not be evaluated: {str(exc.args[0])[:200]}"
    except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError) as exc:
        return False, f"could not be evaluated: {type(exc).__name__}: {str(exc)[:200]}"
    if isinstance(result, CELEvalError):
        return False, f"could not be evaluated: {str(result.args[0])[:200]}"
    if not isinstance(result, (celtypes.BoolType, bool)):
        return False, f"returned {type(result).__name__}, not a bool"
    if bool(result):
        return True, ""
    message = rule.message
    if rule.message_program is not None:
        try:
            custom = rule.message_program.evaluate(activation)
            if isinstance(custom, str) and custom:  # cel-python may return a plain str
                message = str(custom)
        except CELEvalError:
            pass  # the API server falls back to `message` too
    return False, message


def _check_rules(
    value: Any,
    old: Any,
    node: _Node,
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
            passed, message = _evaluate(rule, self_cel, old_cel)
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

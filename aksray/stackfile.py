"""Read a `Pulumi.<stack>.yaml` file the way the Pulumi CLI hands it to the program.

Scalars arrive as strings, maps and lists as JSON text, `secure:` values as secrets. Offline there
is no key to decrypt a `secure:` value, so the runner passes a visible stand-in unless the caller
supplies the plain value (tests do, to prove it never leaks).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from catalog.project import PROJECT

# libyaml's safe loader when PyYAML has it (about ten times faster on large stack files), the
# pure-Python one otherwise: both build plain data only.
_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StackYamlLoader(_BASE_LOADER):  # type: ignore[misc]
    """Reads a stack file the way the Pulumi CLI does: YAML 1.2's core schema, not PyYAML's 1.1.

    Only true/false are booleans (`yes`, `on` stay strings), numbers have no base-60 forms
    (`22:30` stays a string), a date stays text, and a key given twice is an error.
    """

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping

    def construct_decimal_int(self, node: Any) -> int:
        # YAML 1.2: a leading zero is still decimal (1.1 read `010` as octal 8).
        text = str(self.construct_scalar(node)).replace("_", "")
        return int(text, 16) if text.lower().startswith("0x") else int(text, 10)

    def construct_timestamp_text(self, node: Any) -> str:
        # The Pulumi CLI hands an unquoted date over as Go prints it.
        text = str(self.construct_scalar(node))
        return f"{text} 00:00:00 +0000 UTC" if _DATE.match(text) else text


_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
StackYamlLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("timestamp", r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?$", "0123456789"),
):
    StackYamlLoader.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first)
    )
StackYamlLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", StackYamlLoader.construct_timestamp_text
)
StackYamlLoader.add_constructor("tag:yaml.org,2002:int", StackYamlLoader.construct_decimal_int)
_LOADER: Final = StackYamlLoader
SECRET_STAND_IN: Final = "[secret]"  # noqa: S105 - a mask, not a credential
# Stack-file keys that are not configuration.
_NON_CONFIG_KEYS: Final = frozenset(
    {"secretsprovider", "encryptedkey", "encryptionsalt", "environment"}
)


class StackFileError(Exception):
    """The stack file cannot be read as Pulumi configuration. `path` names the culprit."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True)
class StackConfig:
    values: dict[str, str]  # full key (`project:key`) -> value as Pulumi passes it
    secret_keys: frozenset[str]


def _is_secure(value: object) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def _unwrap_secure(value: Any, plain: str | None) -> tuple[Any, bool]:
    """Replace nested `{secure: ...}` with the plain value (or the stand-in)."""
    if _is_secure(value):
        return (plain if plain is not None else SECRET_STAND_IN), True
    if isinstance(value, Mapping):
        found = False
        result: dict[str, Any] = {}
        for key, item in value.items():
            result[key], nested = _unwrap_secure(item, plain)
            found = found or nested
        return result, found
    if isinstance(value, list):
        found = False
        items = []
        for item in value:
            unwrapped, nested = _unwrap_secure(item, plain)
            items.append(unwrapped)
            found = found or nested
        return items, found
    return value, False


def _as_config_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _project_defaults(project_file: Path | None) -> dict[str, Any]:
    if project_file is None or not project_file.exists():
        return {}
    project = yaml.load(project_file.read_text(), Loader=_LOADER) or {}  # noqa: S506 - safe
    defaults: dict[str, Any] = {}
    for key, schema in (project.get("config") or {}).items():
        if isinstance(schema, Mapping) and "default" in schema:
            full = key if ":" in key else f"{PROJECT}:{key}"
            defaults[full] = schema["default"]
    return defaults


def load_stack_config(
    path: Path, *, project_file: Path | None = None, secret_values: Mapping[str, str] | None = None
) -> StackConfig:
    """Parse a stack file.

    `secret_values` maps a config key (without the project prefix) to its plain value.
    """
    name = str(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise StackFileError(name, f"cannot read the stack file ({exc.strerror})") from None
    try:
        document = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise StackFileError(name, f"is not valid YAML{where}: {problem}; fix the syntax") from None
    if document is None:
        raise StackFileError(name, "is empty; a stack file needs a `config:` map")
    if not isinstance(document, Mapping):
        raise StackFileError(name, "must be a YAML map with a `config:` key")
    unknown = [k for k in document if k != "config" and str(k).lower() not in _NON_CONFIG_KEYS]
    if unknown:
        raise StackFileError(
            f"{name}: {unknown[0]!r}",
            "unknown top-level key; a stack file holds `config:` (and secrets provider settings)",
        )
    config = document.get("config")
    if config is None:
        raise StackFileError(name, f"has no `config:` map; add one with the `{PROJECT}:` keys")
    if not isinstance(config, Mapping):
        raise StackFileError("config", "must be a map of `namespace:key: value` entries")

    values: dict[str, str] = {}
    secret_keys: set[str] = set()
    for key, raw_value in {**_project_defaults(project_file), **config}.items():
        full_key = str(key) if ":" in str(key) else f"{PROJECT}:{key}"
        if raw_value is None:
            continue
        plain = (secret_values or {}).get(full_key.split(":", 1)[1])
        value, is_secret = _unwrap_secure(raw_value, plain)
        if is_secret:
            secret_keys.add(full_key)
        values[full_key] = _as_config_string(value)
    return StackConfig(values=values, secret_keys=frozenset(secret_keys))

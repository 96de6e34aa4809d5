"""Read a `Pulumi.<stack>.yaml` file the way the Pulumi CLI hands it to the program.

Scalars arrive as strings (a number as Go's JSON writes it, a key with no value as ""), maps and
lists as JSON text with their keys sorted, `secure:` values as secrets. Offline there is no key
to decrypt a `secure:` value, so the runner passes a visible stand-in unless the caller supplies
the plain value (tests do, to prove it never leaks).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from aksray.stackfile.bounded_yaml import StackFileError, load_stack_yaml
from aksray.stackfile.scalars import number_text
from catalog.project import PROJECT
from settings.errors import shown

__all__ = ["SECRET_STAND_IN", "StackConfig", "StackFileError", "load_stack_config"]

SECRET_STAND_IN: Final = "[secret]"  # noqa: S105 - a mask, not a credential
# Stack-file keys that are not configuration.
_NON_CONFIG_KEYS: Final = frozenset(
    {"secretsprovider", "encryptedkey", "encryptionsalt", "environment"}
)


@dataclass(frozen=True)
class StackConfig:
    values: dict[str, str]  # full key (`project:key`) -> value as Pulumi passes it
    secret_keys: frozenset[str]
    # The Pulumi ESC environments the file imports (`environment:`): `pulumi up` merges their
    # `pulumiConfig` into the config, which no offline run can see.
    environments: tuple[str, ...] = ()


def _is_secure(value: object) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


# What a secrets provider writes under `secure:`: the passphrase provider's
# `v1:<base64 nonce>:<base64 ciphertext>`, or the plain base64 of the cloud and service providers.
_BASE64 = r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
_CIPHERTEXT = re.compile(rf"^(?:v1:{_BASE64}:{_BASE64}|{_BASE64})$")


def _check_ciphertext(value: object, path: str) -> None:
    if isinstance(value, str) and len(value) >= 8 and _CIPHERTEXT.match(value):
        return
    nested = "." in path or "[" in path
    path = shown(path)
    command = f"--secret --path '{path}'" if nested else f"--secret {path}"
    raise StackFileError(
        path,
        "`secure:` holds something that is not Pulumi ciphertext (a value pasted in by hand is "
        f"stored in plain text); remove it and run `pulumi config set {command} <value>`",
    )


def _unwrap_secure(value: Any, plain: str | None, path: str) -> tuple[Any, bool]:
    """Replace nested `{secure: ...}` with the plain value (or the stand-in)."""
    if _is_secure(value):
        _check_ciphertext(value["secure"], path)
        return (plain if plain is not None else SECRET_STAND_IN), True
    if isinstance(value, Mapping):
        found = False
        result: dict[str, Any] = {}
        for key, item in value.items():
            result[key], nested = _unwrap_secure(item, plain, f"{path}.{key}")
            found = found or nested
        return result, found
    if isinstance(value, list):
        found = False
        items = []
        for index, item in enumerate(value):
            unwrapped, nested = _unwrap_secure(item, plain, f"{path}[{index}]")
            items.append(unwrapped)
            found = found or nested
        return items, found
    return value, False


# Go's JSON escapes these inside strings; the program reads the same text either way, and the
# values stay byte for byte what the CLI passes.
_GO_JSON_ESCAPE: Final = re.compile("[<>&\u2028\u2029]")


def as_config_string(value: Any) -> str:
    """A setting's value as the CLI passes it: a scalar as text (None, a key with no value, as
    ""), a map or list as compact JSON with sorted keys (Go writes maps that way)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number_text(value)
    if isinstance(value, dict | list):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return _GO_JSON_ESCAPE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
    return str(value)


def _project_defaults(project_file: Path | None) -> dict[str, Any]:
    if project_file is None or not project_file.exists():
        return {}
    project = load_stack_yaml(project_file.read_bytes(), str(project_file)) or {}
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
        data = path.read_bytes()
    except OSError as exc:
        raise StackFileError(name, f"cannot read the stack file ({exc.strerror})") from None
    document = load_stack_yaml(data, name)
    if document is None:
        raise StackFileError(name, "is empty; a stack file needs a `config:` map")
    if not isinstance(document, Mapping):
        raise StackFileError(name, "must be a YAML map with a `config:` key")
    unknown = [k for k in document if k != "config" and str(k).lower() not in _NON_CONFIG_KEYS]
    if unknown:
        raise StackFileError(
            f"{name}: {shown(str(unknown[0]))!r}",
            "unknown top-level key; a stack file holds `config:` (and secrets provider settings)",
        )
    if "config" not in document:
        raise StackFileError(name, f"has no `config:` map; add one with the `{PROJECT}:` keys")
    config = document["config"]
    if config is None:  # `config:` with nothing under it: the CLI reads no settings
        config = {}
    if not isinstance(config, Mapping):
        raise StackFileError("config", "must be a map of `namespace:key: value` entries")

    values: dict[str, str] = {}
    secret_keys: set[str] = set()
    written: dict[str, str] = {}  # full key -> the key as the file spells it
    for key in config:
        full_key = _full_key(key)
        if full_key in written:
            raise StackFileError(
                shown(full_key.split(":", 1)[1]),
                f"is set twice, as `{shown(written[full_key])}` and as `{shown(str(key))}`, "
                "and only one would count; keep one",
            )
        written[full_key] = str(key)
    for key, raw_value in {**_project_defaults(project_file), **config}.items():
        full_key = _full_key(key)
        short_key = full_key.split(":", 1)[1]
        plain = (secret_values or {}).get(short_key)
        value, is_secret = _unwrap_secure(raw_value, plain, short_key)
        if is_secret:
            secret_keys.add(full_key)
        values[full_key] = as_config_string(value)
    return StackConfig(
        values=values,
        secret_keys=frozenset(secret_keys),
        environments=_environments(_top_level(document, "environment")),
    )


def _top_level(document: Mapping[Any, Any], key: str) -> Any:
    """A top-level key, spelled in any case (Pulumi's reader ignores the case of these)."""
    return next((value for k, value in document.items() if str(k).lower() == key), None)


def _environments(value: Any) -> tuple[str, ...]:
    """The names under `environment:`: a list of names, or an environment definition whose
    `imports` lists them (an entry may be `{name: {merge: false}}`); inline `values` count as one
    unnamed environment."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    imports = value.get("imports") if isinstance(value, Mapping) else value
    names: list[str] = []
    for entry in imports if isinstance(imports, list) else []:
        names.extend([str(k) for k in entry] if isinstance(entry, Mapping) else [str(entry)])
    if isinstance(value, Mapping) and value.get("values"):
        names.append("(inline values)")
    return tuple(names)


def _full_key(key: object) -> str:
    """`namespace:key`; a bare key is the project's."""
    return str(key) if ":" in str(key) else f"{PROJECT}:{key}"


# How Pulumi's language host hands the stack's configuration to a program: JSON in these
# environment variables (its executor then calls set_all_config from them).
CONFIG_ENV: Final = "PULUMI_CONFIG"
CONFIG_SECRET_KEYS_ENV: Final = "PULUMI_CONFIG_SECRET_KEYS"  # noqa: S105 - a variable's name


def hand_over_config(config: StackConfig) -> dict[str, str | None]:
    """Set the configuration's environment variables as the language host does, so the program
    reads it through the public runtime API as under `pulumi up`; what they held before, for
    restore_environ."""
    before = {name: os.environ.get(name) for name in (CONFIG_ENV, CONFIG_SECRET_KEYS_ENV)}
    os.environ[CONFIG_ENV] = json.dumps(dict(config.values))
    os.environ[CONFIG_SECRET_KEYS_ENV] = json.dumps(sorted(config.secret_keys))
    return before


def restore_environ(before: Mapping[str, str | None]) -> None:
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value

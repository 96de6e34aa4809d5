"""Reading the stack configuration from the Pulumi runtime, once, before any resource exists.

The only module of the project that uses the Pulumi runtime's config internals. What it reads
is handed to the pure parsers; a configuration with problems raises `StackSettingsError`, a
`pulumi.RunError`, so `pulumi up` prints one line per problem without a traceback and
registers nothing.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any, Final

import pulumi

from catalog.project import PROJECT
from settings.errors import Problem, SettingsError, printable, shown
from settings.model import Settings
from settings.parse import parse_settings
from settings.reader import describe
from settings.unset import nothing_set_warning

# Config namespaces a stack file may use besides the project's: the providers' own settings.
KNOWN_NAMESPACES: Final = frozenset({"azure-native", "kubernetes", "random", "pulumi"})
# Provider settings this program never reads, and where the setting that does count lives.
# Every Azure resource is given its region explicitly, and the Kubernetes providers are
# explicit ones: a provider instance reads its arguments, never the stack's `kubernetes:` keys.
IGNORED_PROVIDER_SETTINGS: Final = {
    "azure-native:location": f"every Azure resource takes its region from {PROJECT}:location",
    "kubernetes:": "the Kubernetes provider is configured by cluster.kubeconfigContext and "
    "cluster.renderYamlTo",
}
# Keys whose value is a map or list in the stack file: Pulumi hands them over as JSON text.
_STRUCTURED_KEYS: Final = frozenset(
    {"cluster", "storage", "scheduling", "workloads", "operators", "observability", "multikueue"}
)


class StackSettingsError(SettingsError, pulumi.RunError):
    """A `SettingsError` as `pulumi up` must see it: a RunError, printed without a traceback."""


def _decode(key: str, value: Any, problems: list[Problem]) -> Any:
    if key not in _STRUCTURED_KEYS or not isinstance(value, str):
        return value
    if value == "":
        problems.append(
            Problem(
                key,
                "has no value (Pulumi passes a key with nothing after it as an empty string); "
                "write its settings under it, or remove the key for the defaults",
            )
        )
        return None
    try:
        decoded = json.loads(value)
    except json.JSONDecodeError:
        problems.append(Problem(key, f"must be a map of settings, got {describe(value)}"))
        return None
    if not isinstance(decoded, dict):
        problems.append(Problem(key, f"must be a map of settings, got {describe(decoded)}"))
        return None
    return decoded


def _unknown_namespace(full_key: str) -> Problem:
    namespace = full_key.split(":", 1)[0]
    guess = difflib.get_close_matches(namespace, [PROJECT], n=1, cutoff=0.8)
    name = shown(full_key.split(":", 1)[-1])
    suggestion = f' (did you mean "{PROJECT}:{name}"?)' if guess else ""
    return Problem(
        printable(shown(full_key)),
        f"unknown config namespace {shown(namespace)!r}{suggestion}: a stack reads "
        f"only {PROJECT}: keys and the settings of the providers "
        f"({', '.join(sorted(KNOWN_NAMESPACES))}); anything else would be "
        "silently ignored",
    )


def _ignored_provider_setting(full_key: str) -> Problem | None:
    for ignored, instead in IGNORED_PROVIDER_SETTINGS.items():
        if full_key == ignored or (ignored.endswith(":") and full_key.startswith(ignored)):
            return Problem(
                printable(shown(full_key)),
                f"does nothing in this program ({instead}); remove it",
            )
    return None


def settings_from_config(
    values: Mapping[str, str],
    secret_keys: frozenset[str] | set[str],
    *,
    stack: str,
) -> Settings:
    """Validate config as Pulumi hands it over: `project:key -> string`, maps as JSON text."""
    prefix = f"{PROJECT}:"
    problems: list[Problem] = []
    raw: dict[str, Any] = {}
    secret: set[str] = set()
    for full_key in sorted(values):
        if not full_key.startswith(prefix):
            if full_key.split(":", 1)[0] not in KNOWN_NAMESPACES:
                problems.append(_unknown_namespace(full_key))
            elif (ignored := _ignored_provider_setting(full_key)) is not None:
                problems.append(ignored)
            continue
        key = full_key[len(prefix) :]
        raw[key] = _decode(key, values[full_key], problems)
        if full_key in secret_keys:
            secret.add(key)
    try:
        settings = parse_settings(raw, stack=stack, secret_keys=frozenset(secret))
    except SettingsError as exc:
        whole = exc.settings if not problems else None
        raise StackSettingsError(problems + list(exc.problems), settings=whole) from None
    if problems:
        raise StackSettingsError(problems)
    return settings


def config_warnings(values: Mapping[str, str]) -> list[Problem]:
    """What a valid configuration should still be told: a stack that sets nothing."""
    prefix = f"{PROJECT}:"
    own = {key[len(prefix) :]: value for key, value in values.items() if key.startswith(prefix)}
    warning = nothing_set_warning(own)
    return [warning] if warning is not None else []


def load_settings() -> Settings:
    """Read this project's stack configuration from the Pulumi runtime and validate it; warn
    (through the engine, so `pulumi up` and `aksray plan` both show it) what `config_warnings`
    finds."""
    # The configuration the language host hands the program (PULUMI_CONFIG), through Pulumi's
    # public runtime API only; the offline runner hands it over the same way.
    keys = set(pulumi.runtime.get_config_env())
    values = {key: pulumi.runtime.get_config(key) for key in keys}
    secret_keys = {key for key in keys if pulumi.runtime.is_config_secret(key)}
    settings = settings_from_config(values, secret_keys, stack=pulumi.get_stack())
    for warning in config_warnings(values):
        pulumi.log.warn(str(warning))
    return settings


def huggingface_token() -> pulumi.Output[str] | None:
    """The Hugging Face token as a Pulumi secret, or None; never a plain string.

    An Output is a value of the running program, not data of the settings: it is read here,
    after `load_settings()` has checked that the stack keeps it as a secret string.
    """
    return pulumi.Config(PROJECT).get_secret("huggingfaceToken")

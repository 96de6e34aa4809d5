"""What `pulumi up` reads from the stack file and an offline plan cannot act out.

- `pulumi:disable-default-providers`: the engine refuses every resource of a listed package
  (or of any, with "*") that has no explicit provider; the mock runtime does not. This program
  gives explicit providers only to its Kubernetes resources, so the plan finds the resources
  that would be refused: an error, as `pulumi up` fails on the first of them.
- `environment:` (Pulumi ESC): `pulumi up` merges each environment's `pulumiConfig` into the
  config; the plan reads only the file's `config:`, so whatever an environment sets or
  overrides is not in it: a warning that names the environments.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Final

from aksray.plan.checks.findings import Findings, listed
from aksray.plan.model.plan import Plan

DISABLE_DEFAULT_PROVIDERS: Final = "pulumi:disable-default-providers"
ROOT_STACK: Final = "pulumi:pulumi:Stack"


def _disabled_packages(text: str) -> list[str]:
    """The value as the engine reads it: a JSON list of package names ("*": all of them)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = [text]
    items = value if isinstance(value, list) else [value]
    return [str(item).strip() for item in items if str(item).strip()]


def check_default_providers_enabled(plan: Plan, out: Findings) -> None:
    config = plan.result.config
    if config is None or DISABLE_DEFAULT_PROVIDERS not in config.values:
        return
    disabled = set(_disabled_packages(config.values[DISABLE_DEFAULT_PROVIDERS]))
    refused: Counter[str] = Counter()
    for resource in plan.result.resources:
        package = resource.type.split(":", 1)[0]
        if not resource.custom or resource.provider or resource.type == ROOT_STACK:
            continue
        if package == "pulumi":  # the stack itself and provider resources need no provider
            continue
        if "*" in disabled or package in disabled:
            refused[package] += 1
    if not refused:
        return
    packages = sorted(refused)
    counts = listed([f"{refused[p]} {p}" for p in packages])
    out.error(
        DISABLE_DEFAULT_PROVIDERS,
        f"turns off the default provider of {', '.join(packages)}, but this program creates "
        f"{counts} resources with it (only its Kubernetes resources have an explicit "
        f"provider), and `pulumi up` would refuse the first one; remove "
        f"{', '.join(packages)} from the list (or the key); the offline plan does not apply it",
    )


def check_environments_seen(plan: Plan, out: Findings) -> None:
    config = plan.result.config
    if config is None or not config.environments:
        return
    names = listed(list(config.environments))
    first = config.environments[0]
    plural = "s" if len(config.environments) > 1 else ""
    out.warning(
        "environment",
        f"the stack file imports Pulumi ESC environment{plural} {names}, whose pulumiConfig "
        "`pulumi up` merges into the config; this plan did not "
        "see those values (it reads only config:), so any key they set is planned at the file's "
        f"value or the default: see them with `pulumi env open {first} pulumiConfig`, and put "
        "them in config: to plan them",
    )

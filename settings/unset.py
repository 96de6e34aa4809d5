"""A stack that sets nothing of its own: one warning naming the defaults it plans instead.

Such a stack is almost always a mistake (the wrong file, or keys under another project's
prefix), and it would deploy a whole cluster of defaults without a word.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.project import PROJECT
from settings.defaults import (
    DEFAULT_CLUSTER_MODE,
    DEFAULT_CPU_POOL,
    DEFAULT_KUBERNETES_VERSION,
    DEFAULT_LOCATION,
    DEFAULT_OBSERVABILITY_ENABLED,
    DEFAULT_OPERATORS_INSTALL,
    DEFAULT_STORAGE_ENABLED,
    DEFAULT_WORKLOAD_ENABLED,
)
from settings.errors import Problem


def _yaml(flag: bool) -> str:
    return "true" if flag else "false"


def defaults_planned() -> str:
    """What a stack that sets nothing gets, from the defaults table."""
    pool = DEFAULT_CPU_POOL
    return (
        f"location {DEFAULT_LOCATION}, cluster.mode {DEFAULT_CLUSTER_MODE} with Kubernetes "
        f"{DEFAULT_KUBERNETES_VERSION}, a CPU pool of {pool.vm_size} x {pool.min_count}.."
        f"{pool.max_count} and no GPU pool, no team, "
        f"{'every' if DEFAULT_WORKLOAD_ENABLED else 'no'} workload enabled, storage.enabled "
        f"{_yaml(DEFAULT_STORAGE_ENABLED)}, "
        f"operators.install {_yaml(DEFAULT_OPERATORS_INSTALL)}, observability.enabled "
        f"{_yaml(DEFAULT_OBSERVABILITY_ENABLED)}"
    )


def nothing_set_warning(settings: Mapping[str, Any]) -> Problem | None:
    """The warning for project settings (`key -> value`, without the prefix) that set nothing:
    none at all, or only `location` at its default (the value Pulumi.yaml fills in)."""
    own = [key for key, value in settings.items() if (key, value) != ("location", DEFAULT_LOCATION)]
    if own:
        return None
    return Problem(
        "config",
        f"sets no {PROJECT}: setting of its own, so the stack plans every default: "
        f"{defaults_planned()}; a stack that sets nothing is almost always the wrong file or "
        f"keys under another prefix (write `{PROJECT}:<key>`, or the bare key)",
    )

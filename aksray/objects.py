"""Reading the scheduling objects the program registered, as the checks and the summary need them.

The ClusterQueues and KAI Queues are read from the recorded inputs, exactly as `pulumi up` would
send them: amounts come back in canonical units (cpu millicores, memory bytes, GPUs) for
ClusterQueues and in KAI's own units for KAI Queues.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from catalog.quantities import parse_cpu_millis, parse_memory_bytes


def parse_amount(resource: str, value: object) -> int:
    """A quota quantity of a resource in canonical integer units."""
    if resource == "cpu":
        return parse_cpu_millis(value)
    return parse_memory_bytes(value)  # memory in bytes; extended resources are plain counts


def flavor_entries(cluster_queue: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every `resourceGroups[*].flavors[*]` entry of a ClusterQueue, in the queue's order."""
    for group in cluster_queue["spec"].get("resourceGroups", []):
        yield from group["flavors"]


def resource_quota(
    cluster_queue: Mapping[str, Any], flavor: str, resource: str
) -> Mapping[str, Any] | None:
    """The `{name, nominalQuota, borrowingLimit?, lendingLimit?}` entry of one flavor's resource."""
    for entry in flavor_entries(cluster_queue):
        if entry["name"] != flavor:
            continue
        quotas: list[Mapping[str, Any]] = entry["resources"]
        found = next((quota for quota in quotas if quota["name"] == resource), None)
        if found is not None:
            return found
    return None


def nominal_quota(cluster_queue: Mapping[str, Any], flavor: str, resource: str) -> int:
    """The nominal quota of a flavor's resource; 0 where the queue has none."""
    quota = resource_quota(cluster_queue, flavor, resource)
    return 0 if quota is None else parse_amount(resource, quota["nominalQuota"])


def borrowing_limit(cluster_queue: Mapping[str, Any], flavor: str, resource: str) -> int | None:
    """The borrowing limit of a flavor's resource; None where none is set (no limit)."""
    quota = resource_quota(cluster_queue, flavor, resource)
    if quota is None or quota.get("borrowingLimit") is None:
        return None
    return parse_amount(resource, quota["borrowingLimit"])


def kai_amount(kai_queue: Mapping[str, Any], kai_resource: str, key: str = "quota") -> int:
    """`spec.resources.<kai_resource>.<key>` of a KAI Queue (quota, limit, overQuotaWeight)."""
    return int(kai_queue["spec"]["resources"][kai_resource][key])


def parent_queue(kai_queue: Mapping[str, Any]) -> str | None:
    parent = kai_queue["spec"].get("parentQueue")
    return str(parent) if parent else None

"""Reading the KAI queues the program registered, as the checks and the summary need them.

KAI Queues are read from the recorded inputs, exactly as `pulumi up` would send them, in KAI's
own units. ClusterQueues are read by the scheduling core (scheduling/queues.py
`read_cluster_queue`), the one reader of that object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def kai_amount(kai_queue: Mapping[str, Any], kai_resource: str, key: str = "quota") -> int:
    """`spec.resources.<kai_resource>.<key>` of a KAI Queue (quota, limit, overQuotaWeight)."""
    return int(kai_queue["spec"]["resources"][kai_resource][key])


def parent_queue(kai_queue: Mapping[str, Any]) -> str | None:
    parent = kai_queue["spec"].get("parentQueue")
    return str(parent) if parent else None

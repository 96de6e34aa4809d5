"""Azure's limits that the stack file is held to before anything is created.

The settings validation reports a value outside them at its config path; the builders in
manifests/ rely on them to derive names and schedules Azure accepts.
"""

from __future__ import annotations

import re
from typing import Final

# Azure names of an `aks` stack derive from the stack name (manifests/aks.py `aks_names`,
# manifests/storage.py), so the stack name is held to what every one of them accepts.
MAX_STACK_NAME_LENGTH: Final = 40
STACK_NAME_PATTERN: Final = re.compile(r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?\Z")

# AKS: Linux agent pool names are 1-12 lowercase alphanumerics starting with a letter.
AKS_POOL_NAME_PATTERN: Final = re.compile(r"^[a-z][a-z0-9]{0,11}\Z")
# AKS: at most 1000 nodes per node pool.
MAX_POOL_NODES: Final = 1000

# Azure Blob: 3-63 chars, lowercase letters, digits and single hyphens, alphanumeric at the ends.
BLOB_CONTAINER_NAME_PATTERN: Final = re.compile(r"^(?=.{3,63}\Z)[a-z0-9]+(-[a-z0-9]+)*\Z")

# Planned maintenance: a window lasts 4 to 24 hours (AKS asks for at least 4 with auto-upgrade)
# and a weekly schedule repeats every 1 to 4 weeks. A new node image ships weekly, so AKS
# recommends a weekly node OS window with the NodeImage channel.
WEEK_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MIN_MAINTENANCE_HOURS: Final = 4
MAX_MAINTENANCE_HOURS: Final = 24
MAX_MAINTENANCE_INTERVAL_WEEKS: Final = 4

# A storage account name: 3-24 lowercase letters and digits, unique in Azure.
STORAGE_ACCOUNT_NAME_PATTERN: Final = re.compile(r"^[a-z0-9]{3,24}\Z")

# AKS pricing tiers: Free is meant for clusters of up to 10 nodes (no uptime SLA); Standard and
# Premium scale the control plane up to 5,000 nodes.
FREE_TIER_MAX_NODES: Final = 10

# Azure RBAC: at most 4,000 role assignments per subscription (all of them, not only this
# stack's).
MAX_ROLE_ASSIGNMENTS_PER_SUBSCRIPTION: Final = 4000

# AKS's managed Prometheus agent: the label limits Azure's PodMonitor and ServiceMonitor
# templates (azmonitoring.coreos.com) set on every object, so that its processing pipeline
# drops no series for a label count or length beyond what it supports.
SCRAPE_LABEL_LIMITS: Final = {
    "labelLimit": 63,
    "labelNameLengthLimit": 511,
    "labelValueLengthLimit": 1023,
}

# Federated identity credentials one user-assigned managed identity may hold (Azure's limit):
# with MultiKueue each worker cluster's OIDC issuer adds credentials to every team identity.
MAX_FEDERATED_CREDENTIALS_PER_IDENTITY: Final = 20

# AKS: at most 100 node pools per cluster (Microsoft Learn, "Quotas, virtual machine size
# restrictions, and region availability in AKS": maximum node pools per cluster, 100). This
# stack creates the system pool, the CPU pool and one pool per GPU pool.
MAX_NODE_POOLS: Final = 100

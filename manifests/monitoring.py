"""Azure Monitor managed Prometheus and Azure Managed Grafana, as plain keyword arguments for
pulumi-azure-native (no Pulumi import; components/observability.py registers them).

The pinned SDK's types and the API versions they use (pulumi-azure-native 3.29.0):
`monitor.AzureMonitorWorkspace` (Microsoft.Monitor/accounts 2023-04-03),
`monitor.DataCollectionEndpoint`, `DataCollectionRule`, `DataCollectionRuleAssociation`
(Microsoft.Insights 2022-06-01), `dashboard.Grafana` (Microsoft.Dashboard/grafana 2024-10-01),
`authorization.RoleAssignment`.

How metrics flow (the metrics add-on's documented wiring): the cluster's `azureMonitorProfile`
runs the ama-metrics agent; the data collection rule, associated with the cluster, forwards its
`Microsoft-PrometheusMetrics` stream through the data collection endpoint into the workspace.
Managed Grafana's integration with the workspace gives it a Prometheus data source that queries
as Grafana's own identity, which therefore reads the workspace's data and nothing else.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final

from catalog.pools import POOL_LABEL_KEY
from catalog.versions import GRAFANA_MAJOR_VERSION

PROMETHEUS_STREAM: Final = "Microsoft-PrometheusMetrics"
WORKSPACE_DESTINATION: Final = "MonitoringAccount1"

# Built-in roles (Azure RBAC built-in roles, Monitor and Analytics sections):
# - Monitoring Data Reader: read the data of an Azure Monitor workspace (PromQL queries); what
#   Grafana's identity needs on the workspace, and all it gets. Monitoring Reader (read any
#   monitoring setting in its scope) is not needed: the data source comes from the workspace
#   integration, not from browsing subscriptions.
# - Grafana Editor: create and edit dashboards and folders; what the deployer needs to
#   provision the stack's dashboards. Grafana Admin (data sources, users, Grafana roles) is more
#   than that, and the data source is Azure's to manage.
MONITORING_DATA_READER_ROLE: Final = "b0d8363b-8ddd-447d-831f-62ca05bff136"
GRAFANA_EDITOR_ROLE: Final = "a79a5197-3a5c-4973-a920-486035ffd60f"
MONITORING_DATA_READER_ROLE_NAME: Final = "Monitoring Data Reader"
GRAFANA_EDITOR_ROLE_NAME: Final = "Grafana Editor"
# Who may look: not granted by the stack (people and groups are the organisation's):
# `az role assignment create --role "Grafana Viewer"` on the Grafana instance.
GRAFANA_VIEWER_ROLE: Final = "60921a7e-fef1-4a43-9b16-a26c52ad4769"
# The Entra ID application of Azure Managed Grafana: the audience of a token for its HTTP API.
GRAFANA_TOKEN_AUDIENCE: Final = "ce34e7e5-485f-4d76-964f-b3d2b16d1e4f"  # noqa: S105 - an app id
# Azure's name limits: workspace 4-44, endpoint 3-44, rule 1-64, Grafana 2-23 characters.
MAX_GRAFANA_NAME: Final = 23


@dataclass(frozen=True)
class MonitoringNames:
    workspace: str
    endpoint: str
    rule: str
    association: str
    grafana: str


def monitoring_names(stack: str) -> MonitoringNames:
    """Names within Azure's limits for every valid stack name (1-40 characters)."""
    grafana = f"amg-{stack}"
    if len(grafana) > MAX_GRAFANA_NAME:
        digest = hashlib.sha256(stack.encode()).hexdigest()[:4]
        grafana = f"amg-{stack[:14].rstrip('-')}-{digest}"
    return MonitoringNames(
        workspace=f"amw-{stack}",
        endpoint=f"dce-{stack}",
        rule=f"dcr-prometheus-{stack}",
        association="prometheus-metrics",
        grafana=grafana,
    )


def azure_monitor_profile() -> dict[str, Any]:
    """The ManagedCluster's metrics add-on. Its kube-state-metrics keeps each node's pool label,
    so node series can be grouped per pool."""
    return {
        "metrics": {
            "enabled": True,
            "kube_state_metrics": {
                "metric_labels_allowlist": f"nodes=[{POOL_LABEL_KEY}]",
                "metric_annotations_allow_list": "",
            },
        }
    }


def workspace_args(stack: str, *, location: str) -> dict[str, Any]:
    return {"azure_monitor_workspace_name": monitoring_names(stack).workspace, "location": location}


def endpoint_args(stack: str, *, location: str) -> dict[str, Any]:
    return {
        "data_collection_endpoint_name": monitoring_names(stack).endpoint,
        "location": location,
        "kind": "Linux",
        "network_acls": {"public_network_access": "Enabled"},
        "description": "Prometheus metrics of the AKS cluster into its Azure Monitor workspace",
    }


def rule_args(
    stack: str, *, location: str, endpoint_id: object, workspace_id: object
) -> dict[str, Any]:
    """The rule the add-on's agent follows: its Prometheus stream into the workspace."""
    return {
        "data_collection_rule_name": monitoring_names(stack).rule,
        "location": location,
        "kind": "Linux",
        "data_collection_endpoint_id": endpoint_id,
        "data_sources": {
            "prometheus_forwarder": [
                {
                    "name": "PrometheusDataSource",
                    "streams": [PROMETHEUS_STREAM],
                    "label_include_filter": {},
                }
            ]
        },
        "destinations": {
            "monitoring_accounts": [
                {"account_resource_id": workspace_id, "name": WORKSPACE_DESTINATION}
            ]
        },
        "data_flows": [{"streams": [PROMETHEUS_STREAM], "destinations": [WORKSPACE_DESTINATION]}],
        "description": "Prometheus metrics of the AKS cluster",
    }


def association_args(stack: str, *, cluster_id: object, rule_id: object) -> dict[str, Any]:
    return {
        "association_name": monitoring_names(stack).association,
        "resource_uri": cluster_id,
        "data_collection_rule_id": rule_id,
        "description": "The cluster's metrics add-on sends through this rule; deleting the "
        "association stops its metrics",
    }


def grafana_args(stack: str, *, location: str, workspace_id: object) -> dict[str, Any]:
    """Managed Grafana (Standard: the tier with an SLA and Azure Monitor workspace integration),
    its own system identity, no API keys (Entra ID sign-in only)."""
    return {
        "workspace_name": monitoring_names(stack).grafana,
        "location": location,
        "sku": {"name": "Standard"},
        "identity": {"type": "SystemAssigned"},
        "properties": {
            "grafana_major_version": GRAFANA_MAJOR_VERSION,
            "api_key": "Disabled",
            "deterministic_outbound_ip": "Disabled",
            "public_network_access": "Enabled",
            "zone_redundancy": "Disabled",
            "grafana_integrations": {
                "azure_monitor_workspace_integrations": [
                    {"azure_monitor_workspace_resource_id": workspace_id}
                ]
            },
        },
    }

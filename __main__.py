"""aks-ray-platform: a GPU platform for Ray on Azure, from one stack file per environment."""

import pulumi

from components.multikueue.platform import MultiKueuePlatform
from components.platform import Platform
from settings.load import huggingface_token, load_settings

settings = load_settings()  # validates everything before the first resource exists
if settings.multikueue is None:
    platform = Platform("aksray", settings, huggingface_token=huggingface_token())
else:
    # A manager cluster that dispatches to worker clusters in other regions (docs/multikueue.md).
    federation = MultiKueuePlatform("aksray", settings, huggingface_token=huggingface_token())
    platform = federation.manager
    pulumi.export(
        "workerClusters",
        {w: worker.cluster.cluster_name for w, worker in federation.workers.items()},
    )

pulumi.export("clusterName", platform.cluster.cluster_name)
pulumi.export("teamNamespaces", [team.namespace for team in settings.scheduling.teams])
if platform.cluster.kubeconfig is not None:
    pulumi.export("kubeconfig", platform.cluster.kubeconfig)
    pulumi.export("oidcIssuerUrl", platform.cluster.oidc_issuer_url)
    pulumi.export("nodeResourceGroup", platform.cluster.node_resource_group)
if platform.storage is not None:
    pulumi.export("storageAccountName", platform.storage.account_name)
    pulumi.export("blobEndpoint", platform.storage.blob_endpoint)
    pulumi.export("dfsEndpoint", platform.storage.dfs_endpoint)
    pulumi.export(
        "workloadIdentityClientIds",
        {team: identity.client_id for team, identity in platform.storage.identities.items()},
    )
if platform.observability is not None and platform.observability.grafana_endpoint is not None:
    # Azure Managed Grafana, with the stack's dashboards (docs/monitoring.md).
    pulumi.export("grafanaEndpoint", platform.observability.grafana_endpoint)
    pulumi.export("grafanaDashboards", list(platform.observability.dashboards))
if platform.image_cache is not None:
    # The registry the nodes pull the Ray image through (docs/aks.md, "Pulling the Ray image").
    pulumi.export("imageCacheRegistry", platform.image_cache.registry_name)
if platform.workloads.staged:
    # Enabled RayJobs waiting for their inputs: `pulumi config set --path workloads.<name>.run 1`.
    pulumi.export("stagedJobs", platform.workloads.staged)

"""One MultiKueue worker: its own AKS cluster in its region, with operators, the teams that
have quota there, their queues, the workloads pinned to it, and the account the manager uses."""

from __future__ import annotations

from base64 import b64decode
from collections.abc import Collection
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import managedidentity

from catalog.versions import KUEUE, KUEUE_API_VERSION
from components.cluster import AksCluster
from components.cluster_jobs import cluster_jobs
from components.k8s_objects import create_object
from components.multikueue.support import DispatchedWorkloadSupport
from components.namespaces import TeamNamespaces
from components.operators import ClusterOperators
from components.queues import SchedulingQueues
from components.storage import BlobStorage
from components.workloads import RayWorkloads
from manifests.access.multikueue import (
    manager_account,
    namespace_binding,
    queue_policy,
    token_secret,
    token_secret_name,
    worker_roles,
)
from manifests.identity import team_identities
from manifests.multikueue import kubeconfig_text, server_of
from settings.model import Settings, WorkloadSettings


class MultiKueueWorker(pulumi.ComponentResource):
    cluster: AksCluster
    namespaces: TeamNamespaces
    operators: ClusterOperators
    queues: SchedulingQueues
    workloads: RayWorkloads
    support: DispatchedWorkloadSupport  # what dispatched jobs' pods need here
    kubeconfig: pulumi.Output[str]  # for the manager: a Pulumi secret

    def __init__(
        self,
        name: str,
        worker: str,
        settings: Settings,
        *,
        storage: BlobStorage | None,
        kinds: Collection[str],
        token_rotation: str = "",
        api_server: str = "",
        federation_chain: dict[str, pulumi.Resource],
        dispatched: tuple[WorkloadSettings, ...] = (),
        huggingface_token: pulumi.Output[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`settings`: the worker's own (scheduling/multikueue.py `worker_settings`);
        `storage`: the stack's one Blob account and the teams' identities (in the manager's
        region), which this cluster's OIDC issuer is trusted by here; `federation_chain`: per team,
        the identity's last federated credential so far, which this worker's chain after (Azure
        rejects concurrent credential writes to one identity), updated here; `dispatched`: the
        submitted workloads MultiKueue may send here (their code, policy and token go here);
        `api_server`: an existing worker's API server as the manager reaches it (an AKS
        worker's is read from its kubeconfig)."""
        super().__init__("aksray:platform:MultiKueueWorker", name, None, opts)
        self._settings = settings
        child = pulumi.ResourceOptions(parent=self)
        self.cluster = AksCluster(
            f"{name}-cluster",
            settings.cluster,
            location=settings.location,
            stack=settings.stack,
            opts=child,
        )
        teams = settings.scheduling.teams
        credentials = self._federation(name, settings, storage, federation_chain)
        self.namespaces = TeamNamespaces(
            f"{name}-teams",
            teams,
            provider=self.cluster.provider,
            identities={t.name: storage.identities[t.name] for t in teams} if storage else None,
            elastic_teams=settings.elastic_teams,
            workloads=settings.workloads,
            opts=pulumi.ResourceOptions(parent=self, depends_on=credentials),
        )
        jobs = cluster_jobs(
            name,
            settings,
            parent=self,
            provider=self.cluster.provider,
            namespaces=self.namespaces,
            storage_account=(
                storage.account_name if storage else settings.storage.existing_account or None
            ),
            huggingface_token=huggingface_token,
            multikueue=True,
        )
        self.operators, self.queues, self.workloads = jobs.operators, jobs.queues, jobs.workloads
        self.support = DispatchedWorkloadSupport(
            f"{name}-dispatched",
            settings,
            dispatched,
            provider=self.cluster.provider,
            namespaces=self.namespaces,
            huggingface_token=huggingface_token,
            opts=child,
        )
        self.kubeconfig = self._manager_access(name, worker, kinds, token_rotation, api_server)
        self.register_outputs({"clusterName": self.cluster.cluster_name})

    def _federation(
        self,
        name: str,
        settings: Settings,
        storage: BlobStorage | None,
        chain_after: dict[str, pulumi.Resource],
    ) -> list[pulumi.Resource]:
        """Each team's identity trusts this cluster's issuer too: one more credential per
        service account (docs/multikueue.md counts them against Azure's 20 per identity)."""
        issuer = self.cluster.oidc_issuer_url
        if issuer is None or storage is None:
            return []
        plans = team_identities(
            settings.stack,
            ((t.name, t.namespace) for t in settings.scheduling.teams),
            settings.elastic_teams,
        )
        created: list[pulumi.Resource] = []
        for plan in plans:
            identity = storage.managed_identities[plan.team]
            chain: list[pulumi.Resource] = (
                [chain_after[plan.team]] if plan.team in chain_after else []
            )
            for credential in plan.credentials:
                # Azure rejects concurrent credential writes to one identity: chained.
                resource = managedidentity.FederatedIdentityCredential(
                    f"{name}-{plan.team}-federation-{credential.account}",
                    resource_group_name=storage.resource_group_name,
                    resource_name_=identity.name,
                    federated_identity_credential_resource_name=(
                        f"{credential.name}-{settings.stack}"
                    ),
                    issuer=issuer,
                    subject=credential.subject,
                    audiences=list(credential.audiences),
                    opts=pulumi.ResourceOptions(parent=self, depends_on=chain[-1:]),
                )
                chain.append(resource)
                created.append(resource)
                chain_after[plan.team] = resource
        return created

    def _manager_access(
        self, name: str, worker: str, kinds: Collection[str], rotation: str, api_server: str
    ) -> pulumi.Output[str]:
        """The manager's account here (manifests/access/multikueue.py), and the kubeconfig
        holding its token, a Pulumi secret."""
        kueue = self.operators.release_for(KUEUE_API_VERSION)
        ready = [kueue] if kueue else []
        teams = self._settings.scheduling.teams

        def make(manifest: dict[str, Any], *after: pulumi.Resource) -> pulumi.CustomResource:
            meta = manifest["metadata"]
            where = f"{meta['namespace']}-" if manifest["kind"] == "RoleBinding" else ""
            return create_object(
                f"{name}-{manifest['kind'].lower()}-{where}{meta['name']}",
                manifest,
                pulumi.ResourceOptions(
                    parent=self, provider=self.cluster.provider, depends_on=[*ready, *after]
                ),
            )

        account = make(manager_account())
        granted = [
            *(make(role) for role in worker_roles(kinds)),
            # The writes, in each served team's namespace only.
            *(
                make(namespace_binding(t.namespace), self.namespaces.namespaces[t.name])
                for t in teams
            ),
            *(make(p) for p in queue_policy(kinds, {t.namespace: t.local_queue for t in teams})),
        ]
        # After its ServiceAccount: Kubernetes' token controller deletes a token Secret whose
        # account does not exist yet ("Service account does not exist, deleting token").
        token = make(token_secret(rotation), account)
        # Read back once Kubernetes has filled in the token, and once every grant and the
        # policy are there (Kueue's first connection then succeeds). The id is the created
        # Secret's: unknown in a preview before it exists, where the read then waits.
        token_id = token.id.apply(lambda _: f"{KUEUE.namespace}/{token_secret_name(rotation)}")
        token_secret_read = k8s.core.v1.Secret.get(
            f"{name}-manager-token",
            token_id,
            opts=pulumi.ResourceOptions(
                parent=self, provider=self.cluster.provider, depends_on=[token, *granted]
            ),
        )
        server = (
            pulumi.Output.from_input(api_server)
            if api_server
            else (self.cluster.kubeconfig or pulumi.Output.from_input("")).apply(
                lambda text: server_of(text) if text else ""
            )
        )
        kubeconfig = pulumi.Output.all(server, token_secret_read.data).apply(
            lambda values: kubeconfig_text(
                worker=worker,
                server=values[0],
                ca_data=(values[1] or {}).get("ca.crt", ""),
                token=_decoded((values[1] or {}).get("token", "")),
            )
        )
        return pulumi.Output.secret(kubeconfig)


def _decoded(data: str) -> str:
    """A Secret's `data` value (base64) as text."""
    return b64decode(data).decode() if data else ""

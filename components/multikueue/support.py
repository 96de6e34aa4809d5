"""On a worker, what a dispatched workload's pods need besides the job MultiKueue copies there:
its code ConfigMap, its NetworkPolicy and the team's Hugging Face token Secret. MultiKueue
copies only the Ray object; without these its pods would never start in the worker."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_objects import create_object
from components.namespaces import TeamNamespaces
from manifests.network import stack_network_policy
from manifests.ray import hf_token_secret, payload_config_map
from settings.model import Settings, WorkloadSettings
from workloads.catalog import WORKLOADS, payload_files


class DispatchedWorkloadSupport(pulumi.ComponentResource):
    objects: list[pulumi.Resource]

    def __init__(
        self,
        name: str,
        settings: Settings,
        workloads: tuple[WorkloadSettings, ...],
        *,
        provider: k8s.Provider,
        namespaces: TeamNamespaces,
        huggingface_token: pulumi.Output[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`settings`: the worker's; `workloads`: the dispatched ones of its teams."""
        super().__init__("aksray:platform:DispatchedWorkloadSupport", name, None, opts)
        self.objects = []
        for team_name in sorted({w.team for w in workloads}):
            team = settings.scheduling.team(team_name)
            options = pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=[namespaces.namespaces[team_name]]
            )
            if huggingface_token is not None:
                self.objects.append(
                    create_object(
                        f"{name}-{team_name}-hf-token",
                        # A Pulumi secret already (settings/load.py `huggingface_token`).
                        hf_token_secret(team.namespace, huggingface_token),
                        options,
                    )
                )
            for workload in (w for w in workloads if w.team == team_name):
                spec = WORKLOADS[workload.name]
                self.objects.append(
                    create_object(
                        f"{name}-{spec.name}-network",
                        stack_network_policy(spec, team, settings),
                        options,
                    )
                )
                if spec.kind == "RayJob":
                    self.objects.append(
                        create_object(
                            f"{name}-{spec.name}-code",
                            payload_config_map(spec, team, payload_files(spec)),
                            options,
                        )
                    )
        self.register_outputs({"workloads": sorted(w.name for w in workloads)})

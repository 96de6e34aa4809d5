"""The Ray payloads as stack resources: per enabled workload its RayJob or RayService, the
ConfigMap that carries its code and the NetworkPolicy its pods are reached through, and per team
the Secret with the Hugging Face token.

With `cluster.renderYamlTo` the token Secret is left out: the Kubernetes provider would write it
into the rendered YAML in plain text (base64 is no protection). The pods still read the token
from the Secret by name, and the program warns, naming the namespaces and the `kubectl` command
that creates it where the YAML is applied.

A RayJob is a resource that finishes. `pulumi up` does not wait for it: custom resources get no
readiness await from the Kubernetes provider, and nothing here adds one (no `pulumi.com/waitFor`),
except where a workload of the same `pulumi up` streams the model `model-stage` copies: then
Pulumi waits for the copy to succeed and creates the streaming workloads after it
(manifests/staging.py).
The object stays after the job ends (KubeRay deletes only its Ray cluster), so a second
`pulumi up` without changes finds it unchanged and leaves it alone. A changed payload, spec or
setting changes the job's name (`<workload>-<digest>`): Pulumi replaces the job, deleting the old
one first, and the new one queues in Kueue like any job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from catalog.versions import RAY_IMAGE
from components.k8s_objects import create_object
from components.namespaces import TeamNamespaces
from components.queues import SchedulingQueues
from manifests.network import stack_network_policy
from manifests.ray import (
    BlobPlaces,
    blob_places,
    hf_token_secret,
    model_path,
    payload_config_map,
    ray_job,
    ray_service,
)
from manifests.ray_pods import HF_TOKEN_KEY, HF_TOKEN_SECRET
from manifests.serve_config import serve_config_v2
from manifests.staging import awaited_until_staged
from settings.model import Settings, TeamSettings, WorkloadSettings
from settings.workloads import STAGING_WORKLOAD
from workloads.catalog import WORKLOADS, payload_files, requirements
from workloads.spec import WorkloadSpec

# Kueue owns these fields once the object exists: it unsuspends on admission and suspends on
# eviction. Pulumi must never write them back (after a `pulumi refresh` it would see `false`).
RAY_JOB_SUSPEND: str = "spec.suspend"
RAY_SERVICE_SUSPEND: str = "spec.rayClusterConfig.suspend"
RAY_SERVICE_CLUSTER: str = "spec.rayClusterConfig"


@dataclass(frozen=True)
class _Placement:
    """One enabled workload where it runs: its team, its Blob account (None without Blob),
    whether a token Secret is mounted, and what it is created after."""

    spec: WorkloadSpec
    workload: WorkloadSettings
    team: TeamSettings
    storage_account: pulumi.Input[str] | None
    places: BlobPlaces | None  # its containers besides the shared ones; None without Blob
    hf_token: bool
    after: list[pulumi.Resource]
    awaited: bool = False  # Pulumi waits for the job's success (model-stage, see above)


class RayWorkloads(pulumi.ComponentResource):
    """The enabled workloads of a stack, each in its team's namespace and queue."""

    workloads: dict[str, pulumi.CustomResource]  # by workload name: RayJob or RayService
    config_maps: dict[str, pulumi.CustomResource]  # by workload name (RayJobs)
    network_policies: dict[str, pulumi.CustomResource]  # by workload name
    # By team name, when a token is configured and the stack applies (never when it renders).
    secrets: dict[str, pulumi.CustomResource]
    staged: list[str]  # enabled RayJobs without a `run` yet: nothing registered for them

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        provider: k8s.Provider,
        namespaces: TeamNamespaces,
        storage_account: pulumi.Input[str] | None = None,
        queues: SchedulingQueues | None = None,
        ready: Sequence[pulumi.Resource] = (),
        huggingface_token: pulumi.Output[str] | None = None,
        ray_image: pulumi.Input[str] = RAY_IMAGE,
        dispatched: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`dispatched`: the workloads of a MultiKueue manager, which MultiKueue sends to the
        workers. `storage_account`: the Blob account name (required when an enabled workload uses
        Blob). `queues`: each workload is created after its own team's queues and priority
        class. `ready`: what every workload must be created after besides: Kueue (its webhook
        serving), the KubeRay operator and, with an image cache, what a pull through it needs.
        `huggingface_token`: a Pulumi secret, or None. `ray_image`: the image every Ray pod
        runs (through the stack's registry with `cluster.imageCache`)."""
        super().__init__("aksray:platform:RayWorkloads", name, None, opts)
        self._name = name
        self._image = ray_image
        self._provider = provider
        self._namespaces = namespaces
        self._dispatched = dispatched
        # A staged RayJob (enabled, no `run` yet) is planned and checked but not submitted:
        # its inputs must be in Blob before its GPUs are worth paying for.
        enabled = tuple(w for w in settings.enabled_workloads if not w.staged)
        self.staged = [w.name for w in settings.enabled_workloads if w.staged]
        # The copy first, then whatever streams it (registered after it, so it can wait).
        enabled = tuple(sorted(enabled, key=lambda w: w.name != STAGING_WORKLOAD))
        streaming = {w.name for w in enabled if _streams_staged_model(w)}
        for workload in enabled:
            spec = WORKLOADS[workload.name]
            if _uses_blob(spec, workload) and storage_account is None:
                raise ValueError(f"{workload.name} uses Blob: RayWorkloads needs storage_account")
        token = huggingface_token
        self.secrets = self._token_secrets(settings, enabled, token)
        self.workloads = {}
        self.config_maps = {}
        self.network_policies = {}
        for workload in enabled:
            spec = WORKLOADS[workload.name]
            team = settings.scheduling.team(workload.team)
            uses_blob = _uses_blob(spec, workload)
            # In force before the head listens, removed only after the Ray object is gone.
            self.network_policies[spec.name] = create_object(
                f"{name}-{spec.name}-network",
                stack_network_policy(spec, team, settings),
                self._options(depends_on=[namespaces.namespaces[team.name]]),
            )
            after: list[pulumi.Resource] = [
                self.network_policies[spec.name],
                namespaces.service_accounts[team.name],
                *([namespaces.head_service_accounts[team.name]] if workload.elastic else []),
                *(queues.ready_for(team.name, workload.priority) if queues else ()),
                *ready,
                *([self.secrets[team.name]] if team.name in self.secrets else []),
            ]
            places = blob_places(settings.workloads, team.name)
            if workload.name in streaming and STAGING_WORKLOAD in self.workloads:
                after.append(self.workloads[STAGING_WORKLOAD])
            placement = _Placement(
                spec,
                workload,
                team,
                storage_account=storage_account if uses_blob else None,
                places=places if uses_blob else None,
                hf_token=token is not None,
                after=after,
                awaited=workload.name == STAGING_WORKLOAD and bool(streaming),
            )
            add = self._ray_job if spec.kind == "RayJob" else self._ray_service
            self.workloads[spec.name] = add(placement)
        self.register_outputs(
            {
                "workloads": {w: WORKLOADS[w].kind for w in sorted(self.workloads)},
                "staged": self.staged,
            }
        )

    def _options(self, **options: Any) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, provider=self._provider, **options)

    def _token_secrets(
        self,
        settings: Settings,
        enabled: tuple[WorkloadSettings, ...],
        token: pulumi.Output[str] | None,
    ) -> dict[str, pulumi.CustomResource]:
        """Per team that runs a workload: the Secret with the Hugging Face token, if any."""
        if token is None:
            return {}
        teams = sorted({w.team for w in enabled})
        if settings.cluster.render_yaml_to:
            namespaces = [settings.scheduling.team(name).namespace for name in teams]
            if namespaces:
                pulumi.log.warn(
                    render_token_warning(settings.cluster.render_yaml_to, namespaces), self
                )
            return {}
        secrets: dict[str, pulumi.CustomResource] = {}
        for team_name in teams:
            team = settings.scheduling.team(team_name)
            secrets[team_name] = create_object(
                f"{self._name}-{team_name}-hf-token",
                hf_token_secret(team.namespace, _secret(token)),
                self._options(depends_on=[self._namespaces.namespaces[team_name]]),
            )
        return secrets

    def _ray_job(self, placement: _Placement) -> pulumi.CustomResource:
        """The payload's code as a ConfigMap, and the RayJob that mounts it."""
        spec, team = placement.spec, placement.team
        files = payload_files(spec)
        code = create_object(
            f"{self._name}-{spec.name}-code",
            payload_config_map(spec, team, files),
            self._options(depends_on=[self._namespaces.namespaces[team.name]]),
        )
        self.config_maps[spec.name] = code
        manifest = ray_job(
            spec,
            placement.workload,
            team,
            files=files,
            requirements=requirements(spec),
            hf_token=placement.hf_token,
            storage_account=placement.storage_account,
            places=placement.places,
            image=self._image,
            dispatched=self._dispatched,
        )
        return create_object(
            f"{self._name}-{spec.name}",
            awaited_until_staged(manifest) if placement.awaited else manifest,
            self._options(
                depends_on=[code, *placement.after],
                ignore_changes=[RAY_JOB_SUSPEND],
                # Any spec change re-runs the job; deleting first frees its quota and its name
                # even when the name did not change.
                replace_on_changes=["spec"],
                delete_before_replace=True,
            ),
        )

    def _ray_service(self, placement: _Placement) -> pulumi.CustomResource:
        spec, workload = placement.spec, placement.workload
        serve = _serve_config(
            workload, placement.storage_account, placement.places, requirements(spec)
        )
        return create_object(
            f"{self._name}-{spec.name}",
            ray_service(
                spec,
                workload,
                placement.team,
                serve_config_yaml=serve,
                hf_token=placement.hf_token,
                storage_account=placement.storage_account,
                image=self._image,
                dispatched=self._dispatched,
            ),
            self._options(
                depends_on=placement.after,
                ignore_changes=[RAY_SERVICE_SUSPEND],
                # A Serve config change is applied in place. A change to the Ray cluster
                # (image, resources, workers, labels) replaces the RayService, deleting it
                # first: KubeRay's zero-downtime upgrade would otherwise bring up a second
                # cluster beside the first, which Kueue neither admits nor counts.
                replace_on_changes=[RAY_SERVICE_CLUSTER, "metadata.labels"],
                delete_before_replace=True,
            ),
        )


def render_token_warning(directory: str, namespaces: Sequence[str]) -> str:
    """What a render-mode stack says about the token Secret it leaves out."""
    where = "namespace" if len(namespaces) == 1 else "namespaces"
    return (
        f"cluster.renderYamlTo: the Hugging Face token is left out of the YAML rendered to "
        f"{directory} (the provider would write Secret {HF_TOKEN_SECRET} there in plain text); "
        f"before applying it, create that Secret in {where} {', '.join(namespaces)}: "
        f"kubectl create secret generic {HF_TOKEN_SECRET} --namespace <namespace> "
        f'--from-literal={HF_TOKEN_KEY}="$HF_TOKEN"'
    )


def _secret(token: pulumi.Output[str]) -> pulumi.Output[str]:
    # The stack's value is a secret already; marking it again keeps that explicit here.
    secret: pulumi.Output[str] = pulumi.Output.secret(token)
    return secret


def _streams_staged_model(workload: WorkloadSettings) -> bool:
    """Reads the base model from the copy model-stage makes."""
    return workload.name != STAGING_WORKLOAD and model_path(workload) is not None


def _uses_blob(spec: WorkloadSpec, workload: WorkloadSettings) -> bool:
    return spec.uses_blob(
        lora_adapter=workload.lora_adapter, blob_model=workload.model_source == "blob"
    )


def _serve_config(
    workload: WorkloadSettings,
    account: pulumi.Input[str] | None,
    places: BlobPlaces | None,
    reqs: Sequence[str],
) -> pulumi.Input[str]:
    """The Serve config; a deploy-time value when it names the storage account."""
    low = workload.min_workers or 1
    options: dict[str, Any] = {
        "lora_adapter": workload.lora_adapter,
        "adapter_container": places.adapter if places else None,
        "requirements": reqs,
        "model_blob_path": model_path(workload),
        "replicas": (low, workload.max_workers or low),
    }
    if account is None:
        return serve_config_v2(storage_account=None, **options)

    def render(name: str) -> str:
        return serve_config_v2(storage_account=name, **options)

    return pulumi.Output.from_input(account).apply(render)

"""Kueue and KAI scheduling objects for the whole organisation tree (built in manifests/)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_objects import create_object
from components.namespaces import TeamNamespaces
from manifests.kai import department_queue, team_queue
from manifests.kueue import (
    awaited_active,
    cluster_queue,
    cohort,
    local_queue,
    resource_flavors,
    workload_priority_classes,
)
from scheduling.queues import team_flavors
from settings.model import Settings

# How long `pulumi up` waits for a MultiKueue manager's LocalQueue to be active: its team's
# AdmissionCheck exists once every worker's account is there, and is active once Kueue has
# connected to one worker (seconds; a worker that cannot be reached fails the `up` here).
DISPATCH_WAIT_SECONDS: Final = 600


def _explicit_dependencies(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """The Resources in `opts.depends_on`; every child waits for them too."""
    if opts is None or opts.depends_on is None:
        return []
    depends_on = opts.depends_on
    items = depends_on if isinstance(depends_on, Sequence) else [depends_on]
    return [item for item in items if isinstance(item, pulumi.Resource)]


class SchedulingQueues(pulumi.ComponentResource):
    """ResourceFlavors, WorkloadPriorityClasses, Cohorts, ClusterQueues and LocalQueues for
    Kueue; department and team Queues for KAI.

    `kueue` and `kai` are the operator releases these objects need (their CRDs and webhooks);
    None when the cluster already runs the operator. `kai_webhook` completes once KAI's queue
    webhook serves, which KAI's release alone does not wait for. Anything in `opts.depends_on`
    is waited for by every child as well. `admission_checks`: on a MultiKueue manager, per team,
    the AdmissionCheck (and what it needs) the team's ClusterQueue names: the queue is created
    after it (and deleted before it, which its finalizer requires), and Pulumi waits for the
    team's LocalQueue to be active, i.e. able to dispatch, before anything is submitted to it.
    """

    flavors: dict[str, pulumi.CustomResource]  # by flavor name
    priority_classes: dict[str, pulumi.CustomResource]  # by class name
    _team_ready: dict[str, list[pulumi.Resource]]  # by team name: its LocalQueue and KAI leaf
    cohorts: dict[str, pulumi.CustomResource]  # by department
    cluster_queues: dict[str, pulumi.CustomResource]  # by team
    local_queues: dict[str, pulumi.Resource]  # by team
    kai_queues: dict[str, pulumi.CustomResource]  # by department or team name
    ready: list[pulumi.Resource]  # what a workload must wait for

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        provider: k8s.Provider,
        namespaces: TeamNamespaces,
        kueue: pulumi.Resource | None = None,
        kai: pulumi.Resource | None = None,
        kai_webhook: pulumi.Resource | None = None,
        admission_checks: Mapping[str, Sequence[pulumi.Resource]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("aksray:platform:SchedulingQueues", name, None, opts)
        self._name = name
        self._provider = provider
        self._checks = admission_checks
        common = _explicit_dependencies(opts)
        self._kueue_ready = [*common, *([kueue] if kueue is not None else [])]
        self._kai_ready = [*common, *(r for r in (kai, kai_webhook) if r is not None)]
        scheduling = settings.scheduling
        self._kueue_cluster_objects(settings)
        self._team_queues(settings, namespaces)
        self._kai_queues(settings)
        self.ready = [
            *self.priority_classes.values(),
            *self.local_queues.values(),
            *(self.kai_queues[team.name] for team in scheduling.teams),
        ]
        # Per team: what one of its workloads of a given priority is admitted through.
        self._team_ready = {
            team.name: [self.local_queues[team.name], self.kai_queues[team.name]]
            for team in scheduling.teams
        }
        self.register_outputs(
            {
                "clusterQueues": sorted(self.cluster_queues),
                "localQueues": {t.name: f"{t.namespace}/{t.local_queue}" for t in scheduling.teams},
                "kaiQueues": sorted(self.kai_queues),
            }
        )

    def _child(self, *depends_on: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(
            parent=self, provider=self._provider, depends_on=list(depends_on)
        )

    def _kueue_cluster_objects(self, settings: Settings) -> None:
        """ResourceFlavors, WorkloadPriorityClasses and one Cohort per department."""
        name = self._name
        self.flavors = {
            manifest["metadata"]["name"]: create_object(
                f"{name}-flavor-{manifest['metadata']['name']}",
                manifest,
                self._child(*self._kueue_ready),
            )
            for manifest in resource_flavors(settings.cluster)
        }
        self.priority_classes = {
            manifest["metadata"]["name"]: create_object(
                f"{name}-priority-{manifest['metadata']['name']}",
                manifest,
                self._child(*self._kueue_ready),
            )
            for manifest in workload_priority_classes()
        }
        self.cohorts = {
            dept.name: create_object(
                f"{name}-cohort-{dept.name}", cohort(dept.name), self._child(*self._kueue_ready)
            )
            for dept in settings.scheduling.departments
        }

    def _team_queues(self, settings: Settings, namespaces: TeamNamespaces) -> None:
        """Per team its ClusterQueue and, in its namespace, its LocalQueue."""
        self.cluster_queues = {}
        self.local_queues = {}
        for team in settings.scheduling.teams:
            # A ResourceFlavor cannot be deleted while a ClusterQueue uses it (Kueue's
            # resource-in-use finalizer): the queue goes first on destroy, after on create.
            flavors = (self.flavors[f] for f in team_flavors(team, settings))
            checks = (self._checks or {}).get(team.name, ())
            self.cluster_queues[team.name] = create_object(
                f"{self._name}-cq-{team.name}",
                cluster_queue(team, settings),
                self._child(*self._kueue_ready, *flavors, *checks),
            )
            manifest = local_queue(team)
            self.local_queues[team.name] = create_object(
                f"{self._name}-lq-{team.name}",
                awaited_active(manifest, DISPATCH_WAIT_SECONDS) if self._checks else manifest,
                self._child(
                    *self._kueue_ready,
                    self.cluster_queues[team.name],
                    namespaces.namespaces[team.name],
                ),
            )

    def _kai_queues(self, settings: Settings) -> None:
        """A parent queue per department, then a leaf per team."""
        scheduling = settings.scheduling
        self.kai_queues = {
            dept.name: create_object(
                f"{self._name}-kai-{dept.name}",
                department_queue(dept, settings),
                self._child(*self._kai_ready),
            )
            for dept in scheduling.departments
        }
        for team in scheduling.teams:
            # A leaf names its parent: the parent exists first and is deleted last.
            self.kai_queues[team.name] = create_object(
                f"{self._name}-kai-{team.name}",
                team_queue(team, settings),
                self._child(*self._kai_ready, self.kai_queues[team.department]),
            )

    def ready_for(self, team: str, priority: str) -> list[pulumi.Resource]:
        """What a workload of `team` at `priority` must be created after (and deleted before):
        the team's LocalQueue (and through it its ClusterQueue), its KAI leaf queue and the
        Kueue priority class its label names."""
        return [*self._team_ready[team], self.priority_classes[priority]]

"""The cluster software: NVIDIA GPU Operator, KubeRay, Kueue and KAI Scheduler, pinned.

Each chart is one `helm.v3.Release` (Helm itself installs it), never a `helm.v4.Chart` (which
templates client-side, drops Helm hooks and turns the chart's `crds/` into stack resources):

- GPU Operator: its CRD upgrade runs as a pre-upgrade hook and the ClusterPolicy cleanup as a
  pre-delete hook; the bundled NFD chart cleans its node labels in a post-delete hook.
- KAI Scheduler: a pre-install/pre-upgrade hook installs and upgrades its CRDs, a post-install
  hook applies the `kai-config` Config that makes the operator deploy the scheduler at all, and
  a post-delete hook cleans up. Without hooks KAI would not run.
- Kueue: no hooks, but the release must count as created only when Kueue's admission webhook
  serves (a RayJob created earlier is never suspended and bypasses quota). A Release waits
  (`skipAwait` stays false) until the controller Deployment is available, and Kueue reports ready
  only once its certificates are in place and its webhook server listens
  (`cmd/kueue/main.go` readyz check at v0.19.2). One resource is one edge to depend on.
- KubeRay: no hooks either; a Release keeps the four charts alike and waits for the operator.
  Helm installs `crds/` on first install only and KubeRay has no hook that upgrades them, so the
  stack registers them itself, from the same chart, before the release (components/chart_crds.py):
  an operator upgrade is one `pulumi up`.

KAI's queue webhook appears only after Helm's wait (KAI's operator registers it): a Job that
proves it serves stands between the KAI release and every KAI Queue (manifests/kai_webhook.py).

Every release gets a namespace the stack creates first and deletes last. Dependents (queues,
workloads) depend on the release that installs their CRDs, so `pulumi destroy` deletes them
while the operators whose webhooks and finalizers they need still run.
"""

from __future__ import annotations

from typing import Any, Final

import pulumi
import pulumi_kubernetes as k8s

from catalog.versions import (
    CHART_SETS,
    GPU_OPERATOR,
    KAI_SCHEDULER,
    KUBERAY_OPERATOR,
    KUEUE,
    HelmChart,
    release_for_api_version,
)
from components.chart_crds import chart_crds
from components.k8s_objects import create_object
from manifests.helm_values import (
    gpu_operator_values,
    kai_scheduler_values,
    kuberay_operator_values,
    kueue_values,
)
from manifests.kai_webhook import (
    WAIT_NAME,
    webhook_wait_account,
    webhook_wait_binding,
    webhook_wait_job,
    webhook_wait_role,
)
from manifests.namespaces import operator_namespace
from settings.model import Settings

# Helm's wait on a cold CPU pool (node scale-up, image pulls, install hooks) can exceed the
# provider's 300 s default.
RELEASE_TIMEOUT_SECONDS: Final = 600


class ClusterOperators(pulumi.ComponentResource):
    """The four operator releases; each attribute is None when the stack does not install them."""

    gpu_operator: pulumi.Resource | None
    kuberay: pulumi.Resource | None
    kueue: pulumi.Resource | None  # created only once Kueue's webhook serves
    kai: pulumi.Resource | None
    kai_queue_webhook: pulumi.Resource | None  # the Job that completes once KAI's webhook serves
    namespaces: dict[str, pulumi.Resource]  # by release name

    def __init__(
        self,
        name: str,
        settings: Settings,
        *,
        provider: k8s.Provider,
        gpu_nodes: bool = True,
        multikueue: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`gpu_nodes`: False on a cluster that never runs a GPU pod (a MultiKueue manager),
        which gets no GPU Operator; `multikueue`: a manager or worker of a stack with
        `multikueue` (Kueue's MultiKueue feature gates)."""
        super().__init__("aksray:platform:ClusterOperators", name, None, opts)
        self.namespaces = {}
        operators = settings.operators
        if not operators.install:
            self.gpu_operator = self.kuberay = self.kueue = self.kai = None
            self.kai_queue_webhook = None
            self.register_outputs({"installed": False})
            return

        driver = settings.cluster.gpu_driver
        charts = CHART_SETS[operators.chart_source]
        self.gpu_operator = (
            self._release(
                name,
                charts.gpu_operator,
                gpu_operator_values(driver, gpu_sharing=operators.gpu_sharing),
                provider,
            )
            if gpu_nodes
            else None
        )
        self.kuberay = self._release(
            name, charts.kuberay, kuberay_operator_values(image=charts.kuberay_image), provider
        )
        # Kueue after KubeRay: its RayJob and RayService integrations then find the Ray CRDs when
        # Kueue starts, so "Kueue ready" also means "Kueue manages RayJobs and RayServices".
        self.kueue = self._release(
            name,
            charts.kueue,
            kueue_values(
                metrics=settings.observability.enabled,
                pods_ready=settings.scheduling.pods_ready,
                image=charts.kueue_image,
                multikueue=multikueue,
            ),
            provider,
            depends_on=[self.kuberay],
        )
        self.kai = self._release(
            name,
            charts.kai,
            kai_scheduler_values(driver, gpu_sharing=operators.gpu_sharing),
            provider,
        )
        self.kai_queue_webhook = self._kai_queue_webhook_wait(name, self.kai, provider)
        self.register_outputs(
            {
                "installed": True,
                "releases": {
                    chart.release: f"{chart.chart}@{chart.version}"
                    for chart in charts.charts
                    if gpu_nodes or chart is not charts.gpu_operator
                },
            }
        )

    def release_for(self, api_version: str) -> pulumi.Resource | None:
        """The release a custom resource of `api_version` must depend on (its CRD's installer).

        None for built-in APIs, and for every API when the stack does not install operators.
        """
        release = release_for_api_version(api_version)
        releases = {
            GPU_OPERATOR.release: self.gpu_operator,
            KUBERAY_OPERATOR.release: self.kuberay,
            KUEUE.release: self.kueue,
            KAI_SCHEDULER.release: self.kai,
        }
        return releases[release] if release is not None else None

    def _kai_queue_webhook_wait(
        self, name: str, kai: pulumi.Resource, provider: k8s.Provider
    ) -> pulumi.Resource:
        """The Job, after KAI and the rights it runs with (its namespace is KAI's)."""
        prefix = f"{name}-{WAIT_NAME}"

        def child(*depends_on: pulumi.Resource) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=list(depends_on)
            )

        namespace = self.namespaces[KAI_SCHEDULER.release]
        account = create_object(f"{prefix}-account", webhook_wait_account(), child(namespace))
        role = create_object(f"{prefix}-role", webhook_wait_role(), child())
        binding = create_object(f"{prefix}-binding", webhook_wait_binding(), child())
        return create_object(prefix, webhook_wait_job(), child(kai, account, role, binding))

    def _release(
        self,
        name: str,
        chart: HelmChart,
        values: dict[str, Any],
        provider: k8s.Provider,
        depends_on: list[pulumi.Resource] | None = None,
    ) -> k8s.helm.v3.Release:
        namespace = create_object(
            f"{name}-{chart.release}-namespace",
            operator_namespace(chart.namespace, privileged=chart is GPU_OPERATOR),
            pulumi.ResourceOptions(parent=self, provider=provider),
        )
        self.namespaces[chart.release] = namespace
        crds = chart_crds(name, chart, provider=provider, parent=self)
        repository = (
            k8s.helm.v3.RepositoryOptsArgs(repo=chart.repository_url)
            if chart.repository_url
            else None
        )
        return k8s.helm.v3.Release(
            f"{name}-{chart.release}",
            k8s.helm.v3.ReleaseArgs(
                # A fixed release name: the charts derive their object names from it.
                name=chart.release,
                chart=chart.chart_ref,
                version=chart.version,
                repository_opts=repository,
                namespace=chart.namespace,
                create_namespace=False,
                values=values,
                skip_await=False,
                # The stack's own CRD resources stand for the chart's crds/ (chart_crds.py).
                skip_crds=bool(crds),
                timeout=RELEASE_TIMEOUT_SECONDS,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=provider,
                depends_on=[namespace, *crds, *(depends_on or [])],
            ),
        )

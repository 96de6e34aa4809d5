"""Helm values for the four cluster operators: pure functions of the stack settings.

Every key path set here exists in the pinned chart's default `values.yaml` (the tests check each
one against the upstream file), because Helm silently ignores a misspelt key.

Placement: every controller, webhook and install hook runs on the CPU pool (never on the tainted
system pool, never on a GPU node). The GPU Operator's node agents are the exception by design:
they must run on the GPU nodes, so they tolerate the GPU taint and the AKS spot taint.
"""

from __future__ import annotations

from typing import Any, Final

import yaml

from catalog.kai import BINPACK, EVICTING_ACTIONS
from catalog.pools import (
    CPU_POOL_NAME,
    GPU_TAINT,
    SPOT_TAINT,
    pool_node_labels,
    tolerations_for,
)
from catalog.versions import (
    KAI_IMAGE_TAG,
    KAI_REGISTRY,
    KUBERAY_OPERATOR_IMAGE,
    KUEUE_CONFIG_API_VERSION,
    KUEUE_IMAGE,
    HelmChart,
    Image,
)
from settings.model import PodsReady

GPU_DRIVER_MODES: Final = ("operator", "aks")

# The RuntimeClass GPU pods run with. The GPU Operator creates it under the name (and handler)
# `operator.runtimeClass`; AKS-managed GPU nodes configure containerd with the handler
# `nvidia-container-runtime`, the operator's own toolkit with `nvidia`.
RUNTIME_CLASS_BY_DRIVER: Final[dict[str, str]] = {
    "operator": "nvidia",
    "aks": "nvidia-container-runtime",
}

# The name KubeRay's scheduler plugin and KAI's scheduler share.
KAI_SCHEDULER_NAME: Final = "kai-scheduler"

# The Kueue integrations our workloads need, by the kind of object each workload is.
#
# `ray.io/raycluster` stays off on purpose. We create no standalone RayClusters: the RayClusters
# here belong to a RayJob or the RayService, which Kueue manages as top-level jobs (the
# RayService since v0.17). With the RayCluster integration on, Kueue would also claim the
# RayService's own RayCluster (it inherits the queue-name label) and contend with the RayService
# controller, which owns that cluster and rewrites its spec, over `spec.suspend`: the failure the
# Azure aks-kueue sample removed the integration for. With it off, a RayCluster applied by hand is
# not queued by Kueue, and KAI (whose queues are unlimited) holds it to no quota either: only
# Kueue's quota bounds a team, so everything a team runs must go through Kueue.
# The price, with KubeRay 1.7: Kueue suspends a RayService through `rayClusterConfig.suspend`,
# which KubeRay copies only when it creates the cluster, so an endpoint Kueue evicts would keep
# running on its GPUs. `aksray plan` therefore refuses a stack in which an endpoint could ever be
# evicted (aksray/plan/checks/services.py), and a change to the endpoint's Ray
# cluster replaces the RayService instead of updating it (components/workloads.py).
#
# `pod`, `deployment` and `statefulset` (in the chart's default list) stay off too: the chart gives
# their webhooks failurePolicy Fail only when they are listed, and then, while Kueue is down, no
# pod, Deployment or StatefulSet could be created in any namespace but kube-system and Kueue's own.
KUEUE_FRAMEWORK_BY_KIND: Final[dict[str, str]] = {
    "RayJob": "ray.io/rayjob",
    "RayService": "ray.io/rayservice",
}
KUEUE_FRAMEWORKS: Final = tuple(KUEUE_FRAMEWORK_BY_KIND.values())
# Elastic workloads (the endpoint's and batch inference's autoscaling): Kueue admits each
# scale-up as a workload slice against quota and records each scale-down in place. Beta and on
# by default since Kueue 0.18; written out so the configuration says what the platform relies on
# (and a Kueue that changed the default would still run it). Set in the Configuration, not the
# chart's `controllerManager.featureGates` (Kueue refuses both at once).
KUEUE_FEATURE_GATES: Final[dict[str, bool]] = {"ElasticJobsViaWorkloadSlices": True}

# Kueue's pod-readiness wait: the fixed part (the timeout and the requeue limit are the stack's).
# No recovery timeout ("0s" turns it off). Kueue reads a RayJob's pods as ready when its Ray
# cluster's state is `ready`, which KubeRay 1.7 never takes back while the cluster runs
# (raycluster_controller.go `calculateStatus`), so a recovery timeout could only ever evict a
# RayService whose Serve endpoints dropped to 0: an endpoint Kueue must never evict.
PODS_READY_RECOVERY_TIMEOUT: Final = "0s"
# Requeue backoff: Kueue's base (60 s, doubling per requeue); at most 30 minutes.
REQUEUE_BACKOFF_BASE_SECONDS: Final = 60
REQUEUE_BACKOFF_MAX_SECONDS: Final = 1800
# The charts' own Prometheus Operator objects stay off whatever the stack says: a cluster this
# stack creates has no monitoring.coreos.com CRD (catalog/chart_objects.py), and AKS's managed
# Prometheus never reads them. The stack's own scrape objects replace them
# (manifests/scrape.py).
CHART_SERVICE_MONITOR: Final = {"serviceMonitor": {"enabled": False}}


def operator_node_selector() -> dict[str, str]:
    """Where the operators' controllers, webhooks and hooks run: the CPU pool."""
    return pool_node_labels(CPU_POOL_NAME)


def gpu_node_tolerations() -> list[dict[str, str]]:
    """Tolerations of the GPU Operator's node agents: every GPU pool's taints, spot included."""
    # Exists (not Equal): the operator's agents tolerate the GPU taint whatever its value.
    gpu = {"key": GPU_TAINT["key"], "operator": "Exists", "effect": GPU_TAINT["effect"]}
    return [gpu, *tolerations_for([SPOT_TAINT])]


def gpu_operator_values(gpu_driver: str) -> dict[str, Any]:
    """NVIDIA GPU Operator: who installs the driver decides three values that go together.

    `operator`: the operator's driver and container toolkit run on every GPU node (pools are
    created with `gpuProfile.driver: None`). `aks`: AKS installs both, so the operator must not;
    its pods then use AKS's `nvidia-container-runtime` handler.
    """
    if gpu_driver not in GPU_DRIVER_MODES:
        raise ValueError(f"gpu_driver must be one of {', '.join(GPU_DRIVER_MODES)}: {gpu_driver!r}")
    by_operator = gpu_driver == "operator"
    cpu_pool = operator_node_selector()
    return {
        "operator": {
            "nodeSelector": cpu_pool,  # also the upgrade-CRD and cleanup hook jobs
            "runtimeClass": RUNTIME_CLASS_BY_DRIVER[gpu_driver],
        },
        "driver": {"enabled": by_operator},
        "toolkit": {"enabled": by_operator},
        # The operand DaemonSets (device plugin, GFD, DCGM exporter, validator, ...).
        "daemonsets": {"tolerations": gpu_node_tolerations()},
        # The chart's default turns the operator's DCGM ServiceMonitor on.
        "dcgmExporter": CHART_SERVICE_MONITOR,
        # The bundled Node Feature Discovery chart: its worker labels the GPU nodes, so it
        # tolerates them; master and garbage collector are controllers.
        "node-feature-discovery": {
            "master": {"nodeSelector": cpu_pool},
            "gc": {"nodeSelector": cpu_pool},
            "worker": {"tolerations": gpu_node_tolerations()},
        },
    }


def kuberay_operator_values(*, image: Image = KUBERAY_OPERATOR_IMAGE) -> dict[str, Any]:
    """KubeRay: every Ray pod is scheduled by KAI.

    Only `batchScheduler.name` is set; the deprecated `batchScheduler.enabled` (which means
    Volcano) must stay unset, as KubeRay refuses both together. `image`: the chart source's
    operator image (Microsoft's build names its own, through the same values).
    """
    return {
        "image": {"repository": image.repository, "tag": image.tag},
        "nodeSelector": operator_node_selector(),
        "batchScheduler": {"name": KAI_SCHEDULER_NAME},
        "metrics": CHART_SERVICE_MONITOR,
    }


def kueue_pods_ready(pods_ready: PodsReady) -> dict[str, Any]:
    """`waitForPodsReady`. Kueue v0.19.2 runs it even when left out (30 minutes, a 30-minute
    recovery timeout, endless requeues); written out, it fits the workloads:

    - a job admitted onto nodes that never come (no VM quota, spot capacity gone) is evicted
      (`PodsReadyTimeout`) after `timeout`, its quota freed, and requeued after a backoff that
      doubles; ordered by its eviction time (`timestamp: Eviction`), behind what queued while
      it held the quota. Each admission assigns flavors afresh, in the ClusterQueue's order;
    - after `backoffLimitCount` requeues the next timeout deactivates it: its quota stays free;
    - no recovery timeout (see PODS_READY_RECOVERY_TIMEOUT), so an endpoint that once served is
      never evicted for readiness; the timeout is long enough for its cold start;
    - `blockAdmission: false`: one job waiting for nodes does not stop the rest of its queue.
    """
    return {
        "timeout": f"{pods_ready.timeout_minutes}m",
        "recoveryTimeout": PODS_READY_RECOVERY_TIMEOUT,
        "blockAdmission": False,
        "requeuingStrategy": {
            "timestamp": "Eviction",
            "backoffLimitCount": pods_ready.requeue_limit,
            "backoffBaseSeconds": REQUEUE_BACKOFF_BASE_SECONDS,
            "backoffMaxSeconds": REQUEUE_BACKOFF_MAX_SECONDS,
        },
    }


def kueue_manager_config(*, metrics: bool, pods_ready: PodsReady) -> dict[str, Any]:
    """Kueue's Configuration (config.kueue.x-k8s.io/v1beta2).

    `metrics`: Kueue also reports each ClusterQueue's quota use per flavor and resource
    (`kueue_cluster_queue_resource_usage` and friends), what the Queues dashboard shows; on with
    observability.

    The chart's default configuration at v0.19.2, with our integrations,
    `manageJobsWithoutQueueName: false` written out (Kueue manages only the jobs that carry the
    `kueue.x-k8s.io/queue-name` label) our pod-readiness wait and the feature gates of
    KUEUE_FEATURE_GATES. The chart adds `internalCertManagement` itself.
    """
    return {
        "apiVersion": KUEUE_CONFIG_API_VERSION,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {
            "bindAddress": ":8443",
            **({"enableClusterQueueResources": True} if metrics else {}),
        },
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        "waitForPodsReady": kueue_pods_ready(pods_ready),
        "manageJobsWithoutQueueName": False,
        "integrations": {"frameworks": list(KUEUE_FRAMEWORKS)},
        "featureGates": dict(KUEUE_FEATURE_GATES),
    }


def kueue_values(
    *, metrics: bool, pods_ready: PodsReady, image: Image = KUEUE_IMAGE
) -> dict[str, Any]:
    """Kueue: the controller manager (which also serves the webhooks) on the CPU pool.

    `image`: the chart source's controller image, set through the chart's own values.
    """
    config = kueue_manager_config(metrics=metrics, pods_ready=pods_ready)
    return {
        # The chart's ServiceMonitor (monitoring.coreos.com/v1) stays off, as above.
        "enablePrometheus": False,
        "controllerManager": {
            "manager": {
                "image": {
                    "repository": image.repository,
                    "tag": image.tag,
                    "pullPolicy": "IfNotPresent",
                }
            },
            "nodeSelector": operator_node_selector(),
        },
        "managerConfig": {
            "controllerManagerConfigYaml": yaml.safe_dump(config, sort_keys=False),
        },
    }


def kai_scheduler_actions() -> dict[str, dict[str, bool]]:
    """`scheduler.actions`: every action that evicts a running pod off (catalog/kai.py).

    One scheduling authority: Kueue admits, preempts and reclaims whole workloads; KAI only
    places and binds what Kueue admitted. KAI's consolidation, reclaim, preempt and stale-gang
    eviction delete pods of admitted gangs behind Kueue's back (Kueue never learns of it) and
    race the cluster autoscaler: a gang evicted to make room for another one Kueue admitted,
    while the node that would have held both was minutes away (KAI v0.17.0
    docs/preemption-delay/README.md). Unlimited queues (manifests/kai.py) stop reclaim, not
    preempt or consolidation, which ignore quota. `kai.scheduler/preemption-delay` only
    postpones them and labelling workloads `non-preemptible` misses stale-gang eviction and every
    job without the label, so the actions go. Without stale-gang eviction, a gang that lost a
    pod ends when its Ray job fails (Kueue's readiness wait does not see it: KubeRay keeps a
    RayJob's cluster `ready`, see PODS_READY_RECOVERY_TIMEOUT). The scheduler then runs
    `allocate` alone: gang placement and binding, bin-packing and GPU sharing stay.
    """
    return {name: {"enabled": False} for name in EVICTING_ACTIONS}


def kai_scheduler_values(gpu_driver: str, *, gpu_sharing: bool) -> dict[str, Any]:
    """KAI Scheduler: placement only, its priority classes, GPU sharing per stack, no catch-all
    queue.

    The chart renders its `default` SchedulingShard from `scheduler.*` (templates/
    default-shard.yaml: `spec.actions` is `scheduler.actions` as given), and KAI's operator
    writes the scheduler's action list from that shard: here `allocate` alone. `defaultShard`
    and `placementStrategy` are the chart's defaults, written out because the action list
    depends on them: no default shard would leave the actions to whoever manages the shards,
    and `binpack` keeps GPU bin-packing (`spread` would swap the placement plugins).

    GPU sharing comes with `global.clusterAutoscaling`. A pod that asks for a fraction of a GPU
    names it in an annotation, not in its resource requests, so the cluster autoscaler never
    sees it and a GPU pool at 0 nodes stays at 0 (KAI v0.17.0,
    docs/gpu-sharing/autoscaling/README.md). The switch deploys KAI's node-scale-adjuster: for
    such unschedulable pods it starts placeholder pods (namespace `kai-scale-adjust`) that request
    whole GPUs with the pending pods' node selector, affinity and tolerations, and the autoscaler
    scales the right pool up for them. Every GPU pool here autoscales, so the two go together.

    `defaultQueue.createDefaultQueue` is off. KAI puts every pod without a queue label into
    `default-queue`; the chart's default one has quota 0 but no limit, so unlabelled Ray pods
    would run on idle GPUs outside every team's quota, and the chart keeps it on uninstall
    (`helm.sh/resource-policy: keep`), outside the stack. Without it such pods stay pending
    until they name a team queue.
    """
    if gpu_driver not in GPU_DRIVER_MODES:
        raise ValueError(f"gpu_driver must be one of {', '.join(GPU_DRIVER_MODES)}: {gpu_driver!r}")
    return {
        "global": {
            # The published chart has these two already; the chart source has a placeholder
            # registry, so we say it ourselves.
            "registry": KAI_REGISTRY,
            "tag": KAI_IMAGE_TAG,
            # The operator, every service it deploys and the install hooks.
            "nodeSelector": operator_node_selector(),
            "gpuSharing": gpu_sharing,
            "clusterAutoscaling": gpu_sharing,
        },
        # Pods that share a GPU run with the runtime class the GPU Operator created.
        "admission": {"gpuFractionRuntimeClassName": RUNTIME_CLASS_BY_DRIVER[gpu_driver]},
        # train 50, build-preemptible 75, build 100, inference 125 (catalog/priorities.py).
        "defaultPriorityClasses": {"enabled": True},
        "defaultQueue": {"createDefaultQueue": False},
        "scheduler": {"placementStrategy": BINPACK, "actions": kai_scheduler_actions()},
        "defaultShard": {"enabled": True},
    }


# The CRDs a chart keeps in `crds/` with nothing that upgrades them (catalog/versions.py
# `HelmChart.stack_crds`): the stack registers each as a resource of its own, taken from the very
# chart its release installs, and the release installs none (`skipCrds`).
CRD_API_VERSION: Final = "apiextensions.k8s.io/v1"
# Server-side apply with force: the live CRDs of a cluster Helm installed first belong to Helm's
# field manager, and the stack takes them over as they are.
PATCH_FORCE_ANNOTATION: Final = "pulumi.com/patchForce"


def chart_template_options(chart: HelmChart) -> dict[str, Any]:
    """What the Kubernetes provider's `kubernetes:helm:template` renders: the release's chart, at
    its version, from its repository (an OCI reference names it whole)."""
    options: dict[str, Any] = {
        "chart": chart.chart_ref,
        "version": chart.version,
        "namespace": chart.namespace,
        "release_name": chart.release,
    }
    if chart.repository_url:
        options["fetch_opts"] = {"repo": chart.repository_url}
    return options


def chart_crd_spec(rendered: list[dict[str, Any]], chart: HelmChart, name: str) -> Any:
    """The spec of CRD `name` among what the chart rendered; a chart whose CRDs are not the ones
    the catalog lists fails the deploy before any CRD changes, naming both lists."""
    found = {
        str((o.get("metadata") or {}).get("name")): o
        for o in rendered
        if o.get("kind") == "CustomResourceDefinition"
    }
    if sorted(found) != sorted(chart.stack_crds):
        raise ValueError(
            f"chart {chart.chart} {chart.version} ({chart.repository}) has the CRDs "
            f"{sorted(found)}, not the {sorted(chart.stack_crds)} catalog/versions.py lists: "
            "update its `stack_crds`"
        )
    return found[name]["spec"]


def stack_crd_manifest(name: str, spec: Any) -> dict[str, Any]:
    """One chart CRD as the stack applies it (`spec`: the chart's, possibly an Output)."""
    return {
        "apiVersion": CRD_API_VERSION,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name, "annotations": {PATCH_FORCE_ANNOTATION: "true"}},
        "spec": spec,
    }

"""Ray pods as KubeRay runs them: the pod sets Kueue admits and the pod templates they run.

- Workload identity on the head and every worker: the team's Ray service account and the pod
  label `azure.workload.identity/use: "true"`. Workers carry no node selector or toleration:
  Kueue injects those of the ResourceFlavor it assigned to each pod set when it admits the
  workload (a GPU pool for GPU workers). The head alone selects the CPU pool (the `cpu` flavor's
  own node labels, so they can never contradict): Kueue only assigns a flavor whose node labels
  the pod's selector allows, so a head waits for CPU-pool quota instead of spilling onto a GPU
  flavor's cpu/memory quota and holding a GPU node.
- A fixed workload: every worker group has minReplicas == maxReplicas == replicas and there is
  no in-tree autoscaling, so the gang KAI schedules (head + every worker) is the gang Kueue
  admitted: `pod_sets()`, in the canonical units the planner's admission model counts.
- An elastic workload (`WorkloadSettings.elastic`): its GPU group starts at the minimum and the
  Ray autoscaler (`enableInTreeAutoscaling`, a sidecar on the head that Kueue counts in the
  head's pod set) grows it up to the maximum. Every pod template carries Kueue's scheduling gate
  `kueue.x-k8s.io/elastic-job`: Kueue lifts it only for pods its admitted workload slice holds,
  so a pod added by a scale-up waits, unscheduled, until Kueue admits the bigger slice against
  the team's quota (Kueue 0.19's RayService webhook adds the gate itself, its RayJob webhook does
  not: writing it here gives both kinds the same admission, and the stack the object that runs).
  KAI gangs the head and the minimum only.
- A model streamed from Blob (`modelSource: blob`): every Ray container gets the account in
  `AZURE_STORAGE_ACCOUNT_NAME`, where the Run:ai Model Streamer reads it; the credential is the
  pod's workload identity (`DefaultAzureCredential`), never a key.
- Payload code is mounted from the workload's ConfigMap on every Ray container; the Hugging Face
  token (when configured) comes from a Secret by `secretKeyRef`, never as a value.
- Every Ray cluster requires KubeRay's token (`authOptions`); who may reach its pods at all is
  manifests/network.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from catalog.pools import CPU_POOL_NAME, pool_node_labels
from catalog.quantities import GPU_RESOURCE, parse_cpu_millis, parse_memory_bytes
from catalog.versions import RAY_IMAGE, RAY_VERSION
from manifests.access.autoscaler import autoscaler_token_mount, with_autoscaler_access
from manifests.namespaces import ELASTIC_HEAD_SERVICE_ACCOUNT, RAY_SERVICE_ACCOUNT
from manifests.pod_security import container_security_context, pod_security_context
from scheduling.amounts import Amounts
from scheduling.podsets import PodSet
from scheduling.workers import gpu_worker_ray_cpus, ray_resources, worker_requests
from workloads.common.cluster import WORKER_CPUS_ENV
from workloads.spec import PodShape, WorkerGroup, WorkloadSpec

# Labels on every Ray pod.
WORKLOAD_IDENTITY_LABEL: Final = "azure.workload.identity/use"
WORKLOAD_LABEL: Final = "aksray.io/workload"
TEAM_LABEL: Final = "aksray.io/team"

HEAD_CONTAINER: Final = "ray-head"
WORKER_CONTAINER: Final = "ray-worker"
PAYLOAD_VOLUME: Final = "payload"
PAYLOAD_MOUNT: Final = "/home/ray/payload"
HF_TOKEN_SECRET: Final = "huggingface-token"  # noqa: S105 - a Secret's name, not a credential
HF_TOKEN_KEY: Final = "token"  # noqa: S105 - a key name
HF_TOKEN_ENV: Final = "HF_TOKEN"  # noqa: S105 - an environment variable's name
STORAGE_ACCOUNT_ENV: Final = "AZURE_STORAGE_ACCOUNT"
# The Run:ai Model Streamer's Azure backend reads the account from this variable (and the
# credential from DefaultAzureCredential: the workload identity webhook's token file).
STREAMER_ACCOUNT_ENV: Final = "AZURE_STORAGE_ACCOUNT_NAME"
SERVE_PORT: Final = 8000
DASHBOARD_PORT: Final = 8265
# KubeRay's token auth (KubeRay 1.6+, Ray 2.52+): the operator generates a Secret with a
# random token per Ray cluster, sets RAY_AUTH_MODE=token and RAY_AUTH_TOKEN on every Ray
# container, and signs its own dashboard calls with it. Ray then refuses every dashboard, Jobs
# API, GCS and client request without the token; Serve's HTTP traffic is the application's.
RAY_AUTH_OPTIONS: Final = {"mode": "token"}
# Where each Ray node's metrics agent serves Prometheus metrics (Ray's own, Serve's and vLLM's
# through Ray): set on every node and declared as the container port the scrape objects name
# (manifests/scrape.py).
METRICS_PORT_NAME: Final = "metrics"
METRICS_PORT: Final = 8080
_METRICS_PORTS: Final = ((METRICS_PORT_NAME, METRICS_PORT),)
_METRICS_START_PARAMS: Final = {"metrics-export-port": str(METRICS_PORT)}
ELASTIC_JOB_GATE: Final = "kueue.x-k8s.io/elastic-job"  # Kueue's scheduling gate for elastic pods
# The Ray autoscaler sidecar KubeRay adds to the head, at KubeRay's default size, written out
# because Kueue counts it in the head's pod set (and so does the planner).
AUTOSCALER_RESOURCES: Final = PodShape(cpu="500m", memory="512Mi")
AUTOSCALER_IDLE_TIMEOUT_S: Final = 60  # an idle GPU worker goes after a minute

_HEAD_PORTS: Final = (("gcs-server", 6379), ("dashboard", DASHBOARD_PORT), ("client", 10001))
# The head runs on the CPU pool: the `cpu` flavor's own node labels (catalog/pools.py).
HEAD_NODE_SELECTOR: Final = pool_node_labels(CPU_POOL_NAME)


class Team(Protocol):
    """What a workload needs from its team (settings.model.TeamSettings fits)."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def local_queue(self) -> str: ...


class WorkerCount(Protocol):
    """How many GPU workers a workload runs, and what each asks per GPU."""

    @property
    def workers(self) -> int | None: ...
    @property
    def cpu_per_gpu(self) -> int | None: ...
    @property
    def memory_per_gpu(self) -> int | None: ...
    @property
    def min_workers(self) -> int | None: ...
    @property
    def max_workers(self) -> int | None: ...
    @property
    def elastic(self) -> bool: ...


class Workload(WorkerCount, Protocol):
    """What a builder needs from one workload's settings (WorkloadSettings fits)."""

    @property
    def name(self) -> str: ...
    @property
    def priority(self) -> str: ...
    @property
    def lora_adapter(self) -> bool: ...
    @property
    def run(self) -> str: ...
    @property
    def model_source(self) -> str: ...
    @property
    def model_revision(self) -> str: ...


# --------------------------------------------------------------------------------------------
# Pod sets: what Kueue admits and KAI gang-schedules
# --------------------------------------------------------------------------------------------


def worker_groups(spec: WorkloadSpec, workload: WorkerCount) -> tuple[WorkerGroup, ...]:
    """The spec's worker groups; the GPU group's pods sized per GPU by the core
    (scheduling/workers.py) and counted by the `workers` option, or by the minimum and maximum
    of an elastic payload, where it has one."""
    gpu = spec.gpu_group
    if gpu is None:
        return spec.workers
    if workload.workers is not None and "workers" in spec.options:
        low, high = workload.workers, None
    elif workload.min_workers is not None:
        low, high = workload.min_workers, workload.max_workers if workload.elastic else None
    else:
        low, high = gpu.replicas, gpu.max_replicas
    size = worker_requests(spec, workload).quantities()
    pod = PodShape(cpu=str(size["cpu"]), memory=str(size["memory"]), gpus=gpu.pod.gpus)
    return tuple(
        WorkerGroup(group.name, low, pod, high, group.minimum_why) if group is gpu else group
        for group in spec.workers
    )


def pod_requests(pod: PodShape) -> dict[str, int]:
    """One pod's requests in canonical units, as Kueue counts them (no GPU entry without GPUs)."""
    requests = {"cpu": parse_cpu_millis(pod.cpu), "memory": parse_memory_bytes(pod.memory)}
    if pod.gpus:
        requests[GPU_RESOURCE] = pod.gpus
    return requests


def pod_sets(spec: WorkloadSpec, workload: WorkerCount, *, at_max: bool = False) -> list[PodSet]:
    """Head plus every worker group: the gang is all of them (Σ count pods, Σ GPUs).

    What the planner's admission model (scheduling/admission.py) admits: the head carries its
    CPU-pool node selector, exactly as its pod template does; workers carry none (Kueue injects
    the assigned flavor's). An elastic workload's head counts the autoscaler sidecar, as Kueue
    does; its groups count their minimum (the first slice Kueue admits), or with `at_max` their
    maximum (the biggest slice the Ray autoscaler can ask for)."""
    head_requests = pod_requests(spec.head)
    if workload.elastic:
        sidecar = pod_requests(AUTOSCALER_RESOURCES)
        head_requests = {r: head_requests[r] + sidecar.get(r, 0) for r in head_requests}
    head = PodSet("head", 1, head_requests, dict(HEAD_NODE_SELECTOR))
    return [head] + [
        PodSet(
            group.name,
            (group.max_replicas or group.replicas) if at_max else group.replicas,
            pod_requests(group.pod),
        )
        for group in worker_groups(spec, workload)
    ]


def config_map_key(path: str) -> str:
    # ConfigMap keys allow [-._a-zA-Z0-9]; the volume's `items` map each key back to its path.
    return path.replace("/", "__")


# --------------------------------------------------------------------------------------------
# Pod templates
# --------------------------------------------------------------------------------------------


def _resources(pod: PodShape) -> dict[str, Any]:
    requests: dict[str, Any] = {"cpu": pod.cpu, "memory": pod.memory}
    limits: dict[str, Any] = {"memory": pod.memory}
    if pod.gpus:
        requests[GPU_RESOURCE] = pod.gpus
        limits[GPU_RESOURCE] = pod.gpus
    return {"requests": requests, "limits": limits}


def _storage_env(storage_account: object | None, *, blob_model: bool) -> list[dict[str, Any]]:
    """The Blob account for the payloads' SDK clients, and for the model streamer."""
    if storage_account is None:
        return []
    names = (STORAGE_ACCOUNT_ENV, STREAMER_ACCOUNT_ENV) if blob_model else (STORAGE_ACCOUNT_ENV,)
    return [{"name": name, "value": storage_account} for name in names]


def _env(
    spec: WorkloadSpec, *, code: bool, hf_token: bool, gpu_worker_cpus: int | None = None
) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in spec.env]
    if gpu_worker_cpus is not None:
        # The payload's driver sizes its bundles from the GPU workers' own CPUs.
        env.append({"name": WORKER_CPUS_ENV, "value": str(gpu_worker_cpus)})
    if code:
        env.append({"name": "PYTHONPATH", "value": PAYLOAD_MOUNT})
    if hf_token:
        ref = {"name": HF_TOKEN_SECRET, "key": HF_TOKEN_KEY}
        env.append({"name": HF_TOKEN_ENV, "valueFrom": {"secretKeyRef": ref}})
    return env


def _pod_template(
    spec: WorkloadSpec,
    team: Team,
    *,
    container: str,
    pod: PodShape,
    ports: Sequence[tuple[str, int]],
    config_map: str | None,
    files: Mapping[str, str],
    hf_token: bool,
    storage_account: object | None,
    blob_model: bool,
    elastic: bool,
    node_selector: Mapping[str, str] | None = None,
    gpu_worker_cpus: int | None = None,
) -> dict[str, Any]:
    env = _env(
        spec, code=config_map is not None, hf_token=hf_token, gpu_worker_cpus=gpu_worker_cpus
    )
    env += _storage_env(storage_account, blob_model=blob_model)
    main: dict[str, Any] = {
        "name": container,
        "image": RAY_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "resources": _resources(pod),
        "env": env,
        "securityContext": container_security_context(),
    }
    if ports:
        main["ports"] = [{"name": name, "containerPort": port} for name, port in ports]
    pod_spec: dict[str, Any] = {
        "serviceAccountName": RAY_SERVICE_ACCOUNT,
        "securityContext": pod_security_context(),
        "containers": [main],
    }
    if node_selector:
        pod_spec["nodeSelector"] = dict(node_selector)
    if elastic:
        pod_spec["schedulingGates"] = [{"name": ELASTIC_JOB_GATE}]
    if config_map is not None:
        main["volumeMounts"] = [
            {"name": PAYLOAD_VOLUME, "mountPath": PAYLOAD_MOUNT, "readOnly": True}
        ]
        pod_spec["volumes"] = [
            {
                "name": PAYLOAD_VOLUME,
                "configMap": {
                    "name": config_map,
                    "items": [{"key": config_map_key(p), "path": p} for p in sorted(files)],
                },
            }
        ]
    return {
        "metadata": {
            "labels": {
                WORKLOAD_IDENTITY_LABEL: "true",
                WORKLOAD_LABEL: spec.name,
                TEAM_LABEL: team.name,
            }
        },
        "spec": pod_spec,
    }


def ray_cluster_spec(
    spec: WorkloadSpec,
    workload: Workload,
    team: Team,
    *,
    config_map: str | None,
    files: Mapping[str, str],
    hf_token: bool,
    storage_account: object | None,
) -> dict[str, Any]:
    serve_ports: tuple[tuple[str, int], ...] = (
        (("serve", SERVE_PORT),) if spec.kind == "RayService" else ()
    )
    groups = worker_groups(spec, workload)
    cpus = gpu_worker_ray_cpus(spec, workload)

    def template(
        container: str,
        pod: PodShape,
        ports: Sequence[tuple[str, int]],
        node_selector: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        return _pod_template(
            spec,
            team,
            container=container,
            pod=pod,
            ports=ports,
            config_map=config_map,
            files=files,
            hf_token=hf_token,
            storage_account=storage_account,
            blob_model=workload.model_source == "blob",
            elastic=workload.elastic,
            node_selector=node_selector,
            gpu_worker_cpus=cpus,
        )

    cluster: dict[str, Any] = {
        "rayVersion": RAY_VERSION,
        "authOptions": dict(RAY_AUTH_OPTIONS),
        # A fixed shape unless elastic: then Kueue admits each step as a workload slice.
        "enableInTreeAutoscaling": workload.elastic,
    }
    if workload.elastic:
        cluster["autoscalerOptions"] = autoscaler_options()
    head = template(
        HEAD_CONTAINER,
        spec.head,
        (*_HEAD_PORTS, *_METRICS_PORTS, *serve_ports),
        node_selector=HEAD_NODE_SELECTOR,
    )
    if workload.elastic:  # its autoscaler's API rights stay with it (access/autoscaler.py)
        head = with_autoscaler_access(head, ELASTIC_HEAD_SERVICE_ACCOUNT)
    workers = [
        _worker_group_spec(g, template(WORKER_CONTAINER, g.pod, (*_METRICS_PORTS, *serve_ports)))
        for g in groups
    ]
    if workers:  # Kueue's webhook writes an empty list back absent: a head-only job would differ
        cluster["workerGroupSpecs"] = workers
    return cluster | {
        "headGroupSpec": {
            # No tasks on the head: the driver (or Serve's controller) runs there, the work on
            # the workers.
            "rayStartParams": {
                "num-cpus": "0",
                "dashboard-host": "0.0.0.0",  # noqa: S104
                **_METRICS_START_PARAMS,
            },
            "template": head,
        },
    }


def autoscaler_options() -> dict[str, Any]:
    """The Ray autoscaler sidecar: KubeRay's default size, written out (Kueue counts it)."""
    size = _resources(AUTOSCALER_RESOURCES)
    size["limits"]["cpu"] = AUTOSCALER_RESOURCES.cpu
    return {
        "upscalingMode": "Default",
        "idleTimeoutSeconds": AUTOSCALER_IDLE_TIMEOUT_S,
        "resources": size,
        "securityContext": container_security_context(),
        "volumeMounts": [autoscaler_token_mount()],
    }


def _worker_group_spec(group: WorkerGroup, template: dict[str, Any]) -> dict[str, Any]:
    """A group of one-host workers: fixed (the shape Kueue admitted never changes), or elastic
    from `replicas` (the minimum) up to `max_replicas`."""
    return {
        "groupName": group.name,
        "replicas": group.replicas,
        "minReplicas": group.replicas,
        "maxReplicas": group.max_replicas or group.replicas,
        "numOfHosts": 1,
        "rayStartParams": {**_METRICS_START_PARAMS, **ray_start_resources(group.pod)},
        "template": template,
    }


def ray_start_resources(pod: PodShape) -> dict[str, str]:
    """What Ray advertises on a GPU worker: the pod's own numbers (scheduling/workers.py)."""
    return ray_resources(Amounts(pod_requests(pod))) if pod.gpus else {}

"""RayJobs and the RayService of the payloads, as plain dicts (KubeRay v1).

Every rule the schedulers and KubeRay read of the objects themselves lives here, once (the pods
are manifests/ray_pods.py):

- Queue and priority labels for both schedulers on the RayJob/RayService: Kueue
  (`kueue.x-k8s.io/queue-name` = the team's LocalQueue, `kueue.x-k8s.io/priority-class`) and KAI
  (`kai.scheduler/queue` = the team's leaf queue, `priorityClassName`). KubeRay copies the KAI
  queue label to the pods; Kueue admits the whole object.
- Created suspended: a RayJob with `spec.suspend: true`, the RayService with
  `spec.rayClusterConfig.suspend: true` (the field Kueue's RayService integration flips). Kueue
  owns the field from then on: the component tells Pulumi to ignore it.
- `shutdownAfterJobFinishes: true` (Kueue rejects a suspendable RayJob without it) and a
  `ttlSecondsAfterFinished`: KubeRay deletes the Ray cluster, the RayJob object stays.
- `submissionMode: HTTPMode`: KubeRay submits the job to the head's dashboard itself. KubeRay with
  `batchScheduler.name: kai-scheduler` rejects the default K8sJobMode, and HTTPMode adds no
  submitter pod or sidecar, so the pods Kueue and KAI count are exactly `pod_sets()`.
- Payload code comes from the repository as an immutable ConfigMap, its runtime requirements as
  Ray `runtime_env` pip packages.
- An elastic workload carries `kueue.x-k8s.io/elastic-job: "true"`: Kueue admits it in workload
  slices (its minimum first, every scale-up of the Ray autoscaler as a bigger slice, a
  scale-down recorded in place), with the ElasticJobsViaWorkloadSlices gate that
  manifests/helm_values.py turns on. The endpoint's Serve deployment then autoscales between
  the same minimum and maximum replicas, one per GPU worker.
- `modelSource: blob`: the base model streams from model-stage's copy in Blob (the `az://` URI
  and engine settings of workloads/common/streaming.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

import yaml

from catalog.versions import RAY_API_VERSION, RAY_IMAGE
from manifests.kai import KAI_PRIORITY_LABEL, KAI_QUEUE_LABEL
from manifests.kueue import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from manifests.namespaces import MANAGED_BY
from manifests.ray_pods import (
    HF_TOKEN_KEY,
    HF_TOKEN_SECRET,
    TEAM_LABEL,
    WORKLOAD_LABEL,
    Team,
    Workload,
    config_map_key,
    ray_cluster_spec,
    worker_groups,
)
from settings.blob_access import adapter_team
from settings.model import WorkloadSettings
from workloads.common.layout import (
    BASE_MODEL,
    staged_model_path,
    team_container,
)
from workloads.spec import WorkloadSpec

RUN_LABEL: Final = "aksray.io/run"
ELASTIC_JOB_ANNOTATION: Final = "kueue.x-k8s.io/elastic-job"
SUBMISSION_MODE: Final = "HTTPMode"
MAX_NAME_LENGTH: Final = 47  # KubeRay: RayJob/RayService names leave room for the cluster's
DIGEST_LENGTH: Final = 10


# --------------------------------------------------------------------------------------------
# Names and the payload ConfigMap
# --------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """What JSON lacks: a set as its sorted members (its own order follows the process's
    string hashing), anything else as its text."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def digest(value: Any) -> str:
    """A short, stable hash of plain data (sorted JSON), the same in every process."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


def payload_config_map_name(spec: WorkloadSpec, files: Mapping[str, str]) -> str:
    return f"{spec.name}-code-{digest(dict(files))}"


def payload_config_map(spec: WorkloadSpec, team: Team, files: Mapping[str, str]) -> dict[str, Any]:
    """The payload's files, immutable: a changed file is a new ConfigMap (its name hashes them)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": payload_config_map_name(spec, files),
            "namespace": team.namespace,
            "labels": {**MANAGED_BY, WORKLOAD_LABEL: spec.name, TEAM_LABEL: team.name},
        },
        "immutable": True,
        "data": {config_map_key(path): text for path, text in sorted(files.items())},
    }


def hf_token_secret(namespace: str, token: object) -> dict[str, Any]:
    """The team's Hugging Face token Secret. `token` is the stack's secret, passed through."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": HF_TOKEN_SECRET,
            "namespace": namespace,
            "labels": dict(MANAGED_BY),
        },
        "type": "Opaque",
        "stringData": {HF_TOKEN_KEY: token},
    }


def _metadata(spec: WorkloadSpec, workload: Workload, team: Team, name: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": team.namespace,
        "labels": {
            **MANAGED_BY,
            WORKLOAD_LABEL: spec.name,
            TEAM_LABEL: team.name,
            QUEUE_NAME_LABEL: team.local_queue,
            PRIORITY_CLASS_LABEL: workload.priority,
            KAI_QUEUE_LABEL: team.name,
            KAI_PRIORITY_LABEL: workload.priority,
        },
    }
    if workload.elastic:
        metadata["annotations"] = {ELASTIC_JOB_ANNOTATION: "true"}
    return metadata


def model_path(workload: Workload) -> str | None:
    """The staged model's folder in the models container, when the workload streams it."""
    if workload.model_source != "blob":
        return None
    return staged_model_path(BASE_MODEL, workload.model_revision)


def runtime_env(requirements: Sequence[str]) -> dict[str, Any]:
    # pip_check off: the image's own packages need not satisfy every pin's resolver view.
    return {"pip": {"packages": list(requirements), "pip_check": False}}


# --------------------------------------------------------------------------------------------
# RayJob
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlobPlaces:
    """The containers a workload's payload writes and reads besides the shared ones: its team's
    own (`<team>-data`) and the one holding the LoRA adapter (settings/blob_access.py)."""

    team: str
    adapter: str


def blob_places(workloads: Iterable[WorkloadSettings], team: str) -> BlobPlaces:
    """Where a workload of `team` writes its own data and reads the LoRA adapter."""
    return BlobPlaces(
        team=team_container(team), adapter=team_container(adapter_team(workloads, team))
    )


def entrypoint_args(
    spec: WorkloadSpec, workload: Workload, run_id: str, places: BlobPlaces | None = None
) -> list[str]:
    """The command-line arguments the payload's `main` parses."""
    args = ["--run-id", run_id]
    if places is not None and spec.team_container_option is not None:
        args += [spec.team_container_option, places.team]
    if places is not None and spec.reads_adapter and spec.kind == "RayJob":
        args += ["--adapter-container", places.adapter]
    if "workers" in spec.options:
        args += ["--workers", str(sum(g.replicas for g in worker_groups(spec, workload)))]
    if "loraAdapter" in spec.options and not workload.lora_adapter:
        args.append("--no-lora")
    if "revision" in spec.options:
        args += ["--revision", workload.model_revision]
    path = model_path(workload) if "modelSource" in spec.options else None
    if path is not None:
        args += ["--model-blob-path", path]
    if "minWorkers" in spec.options and workload.min_workers is not None:
        args += ["--min-workers", str(workload.min_workers)]
        args += ["--max-workers", str(workload.max_workers or workload.min_workers)]
    return args


def _run_id(
    spec: WorkloadSpec,
    workload: Workload,
    team: Team,
    files: Mapping[str, str],
    requirements: Sequence[str],
    *,
    hf_token: bool,
    places: BlobPlaces | None,
) -> str:
    """The digest of everything a run depends on: a change to any of it is a new run."""
    return digest(
        {
            "spec": spec.run_fields(),
            "workload": {
                "run": workload.run,
                "priority": workload.priority,
                "workers": workload.workers,
                "lora": workload.lora_adapter,
                "model": [workload.model_source, workload.model_revision],
                "scale": [workload.min_workers, workload.max_workers],
            },
            "team": {"namespace": team.namespace, "queue": team.local_queue, "name": team.name},
            "files": dict(files),
            "requirements": list(requirements),
            "hf_token": hf_token,
            "blob": None if places is None else asdict(places),
            "image": RAY_IMAGE,
        }
    )


def ray_job(
    spec: WorkloadSpec,
    workload: Workload,
    team: Team,
    *,
    files: Mapping[str, str],
    requirements: Sequence[str],
    hf_token: bool,
    storage_account: object | None,
    places: BlobPlaces | None = None,
) -> dict[str, Any]:
    """The workload's RayJob. Its name is `<workload>-<digest>`: the digest covers the stack's
    `run` label, the payload files, requirements, spec and settings, so any change — a new run
    label included — is a new job (and run id)."""
    if spec.kind != "RayJob" or spec.entrypoint_module is None:
        raise ValueError(f"{spec.name} is not a RayJob payload")
    run_id = _run_id(spec, workload, team, files, requirements, hf_token=hf_token, places=places)
    name = f"{spec.name}-{run_id}"
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"RayJob name {name!r} is longer than {MAX_NAME_LENGTH} characters")
    metadata = _metadata(spec, workload, team, name)
    metadata["labels"][RUN_LABEL] = run_id
    args = entrypoint_args(spec, workload, run_id, places)
    command = ["python", "-m", spec.entrypoint_module, *args]
    return {
        "apiVersion": RAY_API_VERSION,
        "kind": "RayJob",
        "metadata": metadata,
        "spec": {
            "suspend": True,
            "submissionMode": SUBMISSION_MODE,
            "entrypoint": " ".join(command),
            "runtimeEnvYAML": yaml.safe_dump(runtime_env(requirements), sort_keys=True),
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": spec.ttl_seconds_after_finished,
            "backoffLimit": 0,
            "rayClusterSpec": ray_cluster_spec(
                spec,
                workload,
                team,
                config_map=payload_config_map_name(spec, files),
                files=files,
                hf_token=hf_token,
                storage_account=storage_account,
            ),
        },
    }


# --------------------------------------------------------------------------------------------
# RayService: the OpenAI-compatible endpoint
# --------------------------------------------------------------------------------------------


def ray_service(
    spec: WorkloadSpec,
    workload: Workload,
    team: Team,
    *,
    serve_config_yaml: object,
    hf_token: bool,
    storage_account: object | None,
) -> dict[str, Any]:
    """The RayService. Its name is stable: Serve config changes apply in place, and clients
    keep the `<name>-serve-svc` Service. `serve_config_yaml` is `serve_config_v2(...)`, or a
    deploy-time value that resolves to it."""
    if spec.kind != "RayService":
        raise ValueError(f"{spec.name} is not a RayService payload")
    cluster = ray_cluster_spec(
        spec,
        workload,
        team,
        config_map=None,
        files={},
        hf_token=hf_token,
        storage_account=storage_account,
    )
    # Kueue's RayService integration suspends and admits through the cluster's own field.
    cluster["suspend"] = True
    return {
        "apiVersion": RAY_API_VERSION,
        "kind": "RayService",
        "metadata": _metadata(spec, workload, team, spec.name),
        "spec": {"serveConfigV2": serve_config_yaml, "rayClusterConfig": cluster},
    }

"""The four Ray workloads as stack resources: every invariant the schedulers, KubeRay and workload
identity rely on, for every workload in every stack, and the Hugging Face token never leaking."""

from __future__ import annotations

import copy
import json
import shlex
import tempfile
from collections.abc import Iterator
from functools import cache, partial
from pathlib import Path
from typing import Any

import pytest
import yaml

import aksray.offline.runner
from aksray.offline.render import write_render
from aksray.offline.runner import RecordedResource, RunResult, run_program
from catalog.versions import RAY_IMAGE, RAY_VERSION
from manifests import ray, ray_pods
from manifests.namespaces import ELASTIC_HEAD_SERVICE_ACCOUNT, RAY_SERVICE_ACCOUNT
from tests.support.crd.conformance import validate_object
from tests.support.harness import (
    assert_rejected,
    cli,
    mutated,
    one,
    planned,
    stack_document,
    with_runs,
    write_stack,
)
from workloads.catalog import WORKLOADS, payload_files, requirements

RAY_JOB = "kubernetes:ray.io/v1:RayJob"
RAY_SERVICE = "kubernetes:ray.io/v1:RayService"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
P = "aks-ray-platform:"
TOKEN = "hf_TESTVALUE_must_never_leak_0123456789"


def _variant(config: dict[str, Any]) -> None:
    """dev with a two-worker gang, the adapter off for the endpoint, a token and a LocalQueue
    whose name differs from the team's (so the two queue labels are told apart)."""
    config[f"{P}scheduling"]["departments"][0]["teams"][0]["localQueue"] = "team-a-queue"
    config[f"{P}workloads"]["qwen-lora"]["workers"] = 2
    config[f"{P}workloads"]["llm-serve"]["loraAdapter"] = False
    config[f"{P}workloads"]["vllm-batch"]["priority"] = "build"
    config[f"{P}huggingfaceToken"] = {"secure": "v1:QUJDREVGR0g=:c2VjcmV0"}


@cache
def _variant_run() -> RunResult:

    folder = Path(tempfile.mkdtemp(prefix="aksray-variant-"))
    stack = write_stack(folder, with_runs(mutated("dev", _variant)), "Pulumi.variant.yaml")
    return run_program(stack, secret_values={"huggingfaceToken": TOKEN})


def _run(stack: str) -> RunResult:
    return _variant_run() if stack == "variant" else planned(stack)


STACKS = ("dev+run", "prod+run", "local", "variant")


def _ray_objects(result: RunResult) -> list[RecordedResource]:
    return result.by_type(RAY_JOB) + result.by_type(RAY_SERVICE)


def _cases() -> Iterator[tuple[str, str]]:
    for stack in STACKS:
        for workload in _run(stack).settings.enabled_workloads:
            yield stack, workload.name


def _object(result: RunResult, workload: str) -> RecordedResource:
    kind = WORKLOADS[workload].kind
    return one(result, RAY_JOB if kind == "RayJob" else RAY_SERVICE, f"aksray-workloads-{workload}")


def _cluster(manifest: dict[str, Any]) -> dict[str, Any]:
    spec = manifest["spec"]
    cluster: dict[str, Any] = spec[
        "rayClusterSpec" if manifest["kind"] == "RayJob" else "rayClusterConfig"
    ]
    return cluster


def _templates(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    cluster = _cluster(manifest)
    return [cluster["headGroupSpec"]["template"]] + [
        group["template"] for group in cluster.get("workerGroupSpecs", [])
    ]


def _settings(result: RunResult, workload: str) -> tuple[Any, Any]:
    settings = next(w for w in result.settings.workloads if w.name == workload)
    return settings, result.settings.scheduling.team(settings.team)


# --------------------------------------------------------------------------------------------
# What the stacks register
# --------------------------------------------------------------------------------------------


def test_every_enabled_workload_is_one_ray_object() -> None:
    for stack in ("dev+run", "prod+run"):
        names = {r.name for r in _ray_objects(planned(stack))}
        assert names == {f"aksray-workloads-{w}" for w in WORKLOADS}
        assert [r.name for r in planned(stack).by_type(RAY_SERVICE)] == [
            "aksray-workloads-llm-serve"
        ]
    # local has no Blob: only the endpoint, without its adapter.
    assert [r.name for r in _ray_objects(planned("local"))] == ["aksray-workloads-llm-serve"]


@pytest.mark.reference
@pytest.mark.parametrize("stack", STACKS)
def test_every_ray_object_validates_against_the_kuberay_crds(stack: str) -> None:
    objects = _ray_objects(_run(stack))
    assert len(objects) == len(_run(stack).settings.enabled_workloads) > 0
    for resource in objects:
        assert validate_object(resource.inputs) == [], resource.name


@pytest.mark.reference
def test_the_validator_catches_a_broken_worker_group() -> None:
    manifest = copy.deepcopy(_object(planned("dev+run"), "qwen-lora").inputs)
    del manifest["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["groupName"]
    manifest["spec"]["rayClusterSpec"]["headGroupSpec"]["unknownField"] = 1
    errors = validate_object(manifest)
    assert any("groupName" in e for e in errors), errors
    assert any("unknownField" in e for e in errors), errors


# --------------------------------------------------------------------------------------------
# Scheduler contract
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("stack", "workload"), list(_cases()))
def test_queue_and_priority_labels_for_both_schedulers(stack: str, workload: str) -> None:
    result = _run(stack)
    settings, team = _settings(result, workload)
    labels = _object(result, workload).inputs["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == team.local_queue
    assert labels["kai.scheduler/queue"] == team.name
    assert labels["kueue.x-k8s.io/priority-class"] == settings.priority
    assert labels["priorityClassName"] == settings.priority
    assert _object(result, workload).inputs["metadata"]["namespace"] == team.namespace


def test_the_variant_tells_queue_labels_and_priorities_apart() -> None:
    labels = _object(_variant_run(), "vllm-batch").inputs["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "team-a-queue"
    assert labels["kai.scheduler/queue"] == "team-a"
    assert labels["priorityClassName"] == labels["kueue.x-k8s.io/priority-class"] == "build"
    serve = _object(planned("prod+run"), "llm-serve").inputs["metadata"]
    assert serve["labels"]["priorityClassName"] == "inference"
    assert serve["namespace"] == "llm-serving"


@pytest.mark.parametrize(("stack", "workload"), list(_cases()))
def test_created_suspended_and_kueue_owns_the_field(stack: str, workload: str) -> None:
    resource = _object(_run(stack), workload)
    spec = resource.inputs["spec"]
    if WORKLOADS[workload].kind == "RayJob":
        assert spec["suspend"] is True
        assert resource.ignore_changes == ("spec.suspend",)
    else:
        # Kueue's RayService integration suspends through the cluster config, not spec.suspend.
        assert spec["rayClusterConfig"]["suspend"] is True
        assert "suspend" not in spec
        assert resource.ignore_changes == ("spec.rayClusterConfig.suspend",)


@pytest.mark.parametrize(("stack", "workload"), list(_cases()))
def test_ray_job_lifecycle_fields(stack: str, workload: str) -> None:
    spec = WORKLOADS[workload]
    resource = _object(_run(stack), workload)
    if spec.kind != "RayJob":
        # A long-running endpoint keeps its name: its Serve config is updated in place, but a
        # change to its Ray cluster or its queue labels replaces it, deleting it first, so
        # Kueue admits the new cluster (KubeRay's upgrade would start a second, unadmitted one).
        assert resource.inputs["metadata"]["name"] == workload
        assert resource.replace_on_changes == ("spec.rayClusterConfig", "metadata.labels")
        assert resource.delete_before_replace is True
        return
    job = resource.inputs["spec"]
    assert job["shutdownAfterJobFinishes"] is True
    assert job["ttlSecondsAfterFinished"] == spec.ttl_seconds_after_finished > 0
    # KAI rejects the default K8sJobMode; HTTPMode adds no submitter pod to the gang.
    assert job["submissionMode"] == "HTTPMode"
    assert "deletionStrategy" not in job  # the RayJob object stays: it is a stack resource
    assert resource.replace_on_changes == ("spec",)
    assert resource.delete_before_replace is True


def _fixed_cases() -> Iterator[tuple[str, str]]:
    """The fixed gangs (elastic workloads: tests/manifests/test_autoscaling.py)."""
    for stack, workload in _cases():
        if not _settings(_run(stack), workload)[0].elastic:
            yield stack, workload


@pytest.mark.parametrize(("stack", "workload"), list(_fixed_cases()))
def test_fixed_size_gang_without_autoscaling(stack: str, workload: str) -> None:
    result = _run(stack)
    settings, _team = _settings(result, workload)
    manifest = _object(result, workload).inputs
    cluster = _cluster(manifest)
    assert cluster["enableInTreeAutoscaling"] is False
    assert "kueue.x-k8s.io/elastic-job" not in (manifest["metadata"].get("annotations") or {})
    assert cluster["rayVersion"] == RAY_VERSION
    groups = cluster.get("workerGroupSpecs", [])
    for group in groups:
        assert group["minReplicas"] == group["maxReplicas"] == group["replicas"]
        assert group["numOfHosts"] == 1
    # The pod sets the planner reads describe exactly these pods.
    sets = ray_pods.pod_sets(WORKLOADS[workload], settings)
    assert [(s.name, s.count) for s in sets] == [("head", 1)] + [
        (g["groupName"], g["replicas"]) for g in groups
    ]
    gpus = [
        int(t["spec"]["containers"][0]["resources"]["limits"].get("nvidia.com/gpu", 0))
        for t in _templates(manifest)
    ]
    assert gpus == [s.gpus for s in sets]


def test_gang_sizes() -> None:
    def gang(result: RunResult, workload: str) -> tuple[int, int]:
        settings, _ = _settings(result, workload)
        sets = ray_pods.pod_sets(WORKLOADS[workload], settings)
        return sum(s.count for s in sets), sum(s.total_gpus for s in sets)

    assert gang(planned("dev+run"), "qwen-lora") == (5, 4)  # head + 4 one-GPU workers
    assert gang(_variant_run(), "qwen-lora") == (3, 2)  # workers: 2
    assert gang(planned("dev+run"), "aurora-finetune") == (2, 1)
    assert gang(planned("prod+run"), "llm-serve") == (3, 2)  # minReplicas: 2
    head = ray_pods.pod_sets(WORKLOADS["qwen-lora"], _settings(planned("dev+run"), "qwen-lora")[0])[
        0
    ]
    assert (head.cpu_millis, head.memory_bytes, head.gpus) == (2000, 8 * 2**30, 0)


@pytest.mark.parametrize(("stack", "workload"), list(_cases()))
def test_pods_identity_image_and_placement(stack: str, workload: str) -> None:
    manifest = _object(_run(stack), workload).inputs
    head = _templates(manifest)[0]
    # The head selects the CPU pool by the `cpu` flavor's own node labels, so Kueue can only
    # give it that flavor; no toleration, since the CPU pool has no taint.
    assert head["spec"]["nodeSelector"] == {"kubernetes.azure.com/agentpool": "cpu"}
    for template in _templates(manifest):
        assert template["metadata"]["labels"]["azure.workload.identity/use"] == "true"
        pod = template["spec"]
        # An elastic head has an account of its own (tests/manifests/access/test_autoscaler.py).
        elastic_head = template is head and _settings(_run(stack), workload)[0].elastic
        assert pod["serviceAccountName"] == (
            ELASTIC_HEAD_SERVICE_ACCOUNT if elastic_head else RAY_SERVICE_ACCOUNT
        )
        # Kueue injects the assigned flavor's nodeSelector and tolerations on admission.
        for field in ("tolerations", "affinity", "nodeName"):
            assert field not in pod
        if template is not head:
            assert "nodeSelector" not in pod
        (container,) = pod["containers"]
        # prod pulls through its image cache registry (tests/components/test_image_cache.py).
        registry = "aksrayprodxxxxxxxx.azurecr.io/" if stack.startswith("prod") else ""
        assert container["image"] == registry + RAY_IMAGE
        resources = container["resources"]
        assert resources["requests"].get("nvidia.com/gpu") == resources["limits"].get(
            "nvidia.com/gpu"
        )
        text = json.dumps(container)
        for forbidden in ("AccountKey", "SharedAccessSignature", "AZURE_STORAGE_KEY", "sig="):
            assert forbidden not in text


@pytest.mark.parametrize("stack", STACKS)
def test_nothing_makes_pulumi_wait_for_a_workload_but_the_copy_others_stream(stack: str) -> None:
    for resource in _ray_objects(_run(stack)):
        annotations = resource.inputs["metadata"].get("annotations") or {}
        # No readiness await (waitFor) and no skipAwait either: deletes must still wait for
        # KubeRay's finalizers before the operators go. model-stage's success is awaited when
        # a workload of the same run streams its copy (tests/manifests/test_stage_order.py).
        pulumi_keys = {key for key in annotations if key.startswith("pulumi.com/")}
        if resource.name == "aksray-workloads-model-stage" and pulumi_keys:
            assert pulumi_keys == {"pulumi.com/waitFor", "pulumi.com/timeoutSeconds"}
        else:
            assert not pulumi_keys, (resource.name, annotations)


# --------------------------------------------------------------------------------------------
# Payload code, names and replacement
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_payload_code_reaches_every_ray_container_from_the_repository(stack: str) -> None:
    result = _run(stack)
    for job in result.by_type(RAY_JOB):
        workload = job.inputs["metadata"]["labels"]["aksray.io/workload"]
        spec = WORKLOADS[workload]
        code = one(result, CONFIG_MAP, f"aksray-workloads-{workload}-code")
        files = payload_files(spec)
        assert code.inputs["immutable"] is True
        assert sorted(code.inputs["data"].values()) == sorted(files.values())
        assert code.urn in job.depends_on
        for template in _templates(job.inputs):
            (volume,) = [v for v in template["spec"]["volumes"] if v["name"] == "payload"]
            assert volume["configMap"]["name"] == code.inputs["metadata"]["name"]
            assert sorted(i["path"] for i in volume["configMap"]["items"]) == sorted(files)
            (container,) = template["spec"]["containers"]
            assert container["volumeMounts"] == [
                {"name": "payload", "mountPath": ray_pods.PAYLOAD_MOUNT, "readOnly": True}
            ]
            assert {"name": "PYTHONPATH", "value": ray_pods.PAYLOAD_MOUNT} in container["env"]
        runtime_env = yaml.safe_load(job.inputs["spec"]["runtimeEnvYAML"])
        assert runtime_env["pip"]["packages"] == list(requirements(spec))
        assert all("==" in line for line in requirements(spec))
        command = shlex.split(job.inputs["spec"]["entrypoint"])
        assert command[:3] == ["python", "-m", spec.entrypoint_module]
        run_id = job.inputs["metadata"]["labels"]["aksray.io/run"]
        assert command[3:5] == ["--run-id", run_id]
        assert job.inputs["metadata"]["name"] == f"{workload}-{run_id}"


def test_the_serve_app_is_rays_build_openai_app_with_the_adapter_from_blob() -> None:
    result = planned("dev+run")
    manifest = _object(result, "llm-serve").inputs
    serve = yaml.safe_load(manifest["spec"]["serveConfigV2"])
    (app,) = serve["applications"]
    assert app["import_path"] == "ray.serve.llm:build_openai_app"
    assert serve["http_options"]["port"] == 8000
    (llm,) = app["args"]["llm_configs"]
    # The base model streams from model-stage's copy (tests/manifests/test_model_streaming.py).
    assert llm["model_loading_config"]["model_source"] == (
        "az://models/hf/Qwen/Qwen2.5-7B-Instruct/main"
    )
    account = _env(_templates(manifest)[1])["AZURE_STORAGE_ACCOUNT"]
    # The adapter qwen-lora (team-a) wrote to team-a's own container.
    assert llm["lora_config"]["dynamic_lora_loading_path"] == (
        f"azure://team-a-data@{account}.blob.core.windows.net/adapters/qwen-lora"
    )
    assert llm["engine_kwargs"]["enable_lora"] is True
    assert app["runtime_env"]["pip"]["packages"] == list(requirements(WORKLOADS["llm-serve"]))
    ports = {
        p["name"]: p["containerPort"]
        for t in _templates(manifest)
        for p in t["spec"]["containers"][0].get("ports", [])
    }
    assert ports["serve"] == 8000
    # Ray's own application: no payload ConfigMap for the endpoint.
    assert [r.name for r in result.by_type(CONFIG_MAP) if "llm-serve" in r.name] == []


def _env(template: dict[str, Any]) -> dict[str, Any]:
    return {
        e["name"]: e.get("value", e.get("valueFrom"))
        for e in template["spec"]["containers"][0]["env"]
    }


def test_without_the_adapter_the_endpoint_needs_no_blob() -> None:
    result = planned("local")
    assert result.settings.storage.enabled is False
    manifest = _object(result, "llm-serve").inputs
    llm = yaml.safe_load(manifest["spec"]["serveConfigV2"])["applications"][0]["args"]
    assert "lora_config" not in llm["llm_configs"][0]
    assert "enable_lora" not in llm["llm_configs"][0]["engine_kwargs"]
    for template in _templates(manifest):
        assert "AZURE_STORAGE_ACCOUNT" not in _env(template)


def test_vllm_batch_without_the_adapter_is_told_so() -> None:
    def no_lora(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["vllm-batch"]["loraAdapter"] = False

    stack = write_stack(Path(tempfile.mkdtemp()), with_runs(mutated("dev", no_lora)))
    job = _object(run_program(stack), "vllm-batch").inputs
    assert "--no-lora" in shlex.split(job["spec"]["entrypoint"])


def test_names_are_stable_and_change_with_the_payload() -> None:
    spec = WORKLOADS["aurora-finetune"]
    settings, team = _settings(planned("dev+run"), "aurora-finetune")
    files = payload_files(spec)

    def build(files: dict[str, str], **changes: Any) -> dict[str, Any]:
        workload = settings if not changes else type(settings)(**{**settings.__dict__, **changes})
        return ray.ray_job(
            spec,
            workload,
            team,
            files=files,
            requirements=requirements(spec),
            hf_token=False,
            storage_account="acct",
        )

    first = build(files)
    assert build(files)["metadata"]["name"] == first["metadata"]["name"]
    changed = {
        **files,
        "workloads/aurora_finetune/train.py": files["workloads/aurora_finetune/train.py"]
        + "\n# changed\n",
    }
    other = build(changed)
    assert other["metadata"]["name"] != first["metadata"]["name"]
    assert ray.payload_config_map_name(spec, changed) != ray.payload_config_map_name(spec, files)
    assert build(files, priority="build")["metadata"]["name"] != first["metadata"]["name"]
    # The storage account is a deploy-time value: it is not part of the name.
    again = ray.ray_job(
        spec,
        settings,
        team,
        files=files,
        requirements=requirements(spec),
        hf_token=False,
        storage_account="other",
    )
    assert again["metadata"]["name"] == first["metadata"]["name"]
    # A second run of the same stack registers the same names: no spurious replacement.
    rerun = run_program(
        write_stack(Path(tempfile.mkdtemp()), with_runs(stack_document("dev"))), stack="dev"
    )
    assert sorted(r.inputs["metadata"]["name"] for r in _ray_objects(rerun)) == sorted(
        r.inputs["metadata"]["name"] for r in _ray_objects(planned("dev+run"))
    )


def test_workloads_wait_for_what_the_platform_says_they_need(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`ready` (queues, Kueue, KubeRay once wired) becomes a dependency of every Ray object."""
    import components.platform
    from components.workloads import RayWorkloads

    class WithReady(RayWorkloads):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            namespaces = kwargs["namespaces"]
            kwargs["ready"] = [namespaces.namespaces["team-a"]]
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(components.platform, "RayWorkloads", WithReady)
    result = run_program(aksray.offline.runner.stack_file("dev"), stack="dev")
    namespace = one(result, "kubernetes:core/v1:Namespace", "aksray-teams-team-a")
    for resource in _ray_objects(result):
        assert namespace.urn in resource.depends_on, resource.name


def test_every_job_waits_for_its_team_service_account() -> None:
    result = planned("prod+run")
    for workload in WORKLOADS:
        _, team = _settings(result, workload)
        account = one(result, SERVICE_ACCOUNT, f"aksray-teams-{team.name}-ray")
        resource = _object(result, workload)
        assert account.urn in resource.depends_on
        assert (
            resource.provider_urn
            == one(result, "pulumi:providers:kubernetes", "aksray-cluster-k8s").urn
        )


# --------------------------------------------------------------------------------------------
# The Hugging Face token
# --------------------------------------------------------------------------------------------


def test_the_token_goes_through_a_secret_and_never_appears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _variant_run()
    secret = one(result, SECRET, "aksray-workloads-team-a-hf-token")
    assert secret.inputs["metadata"] == {
        "name": "huggingface-token",
        "namespace": "team-a",
        "labels": {"app.kubernetes.io/managed-by": "aks-ray-platform"},
    }
    assert secret.inputs["stringData"] == "[secret]"  # the whole map is a secret
    for resource in _ray_objects(result):
        assert secret.urn in resource.depends_on
        for template in _templates(resource.inputs):
            assert _env(template)["HF_TOKEN"] == {
                "secretKeyRef": {"name": "huggingface-token", "key": "token"}
            }

    # Nowhere in what the tools print or write: the recorded inputs, render, plan JSON.
    assert TOKEN not in json.dumps([r.to_json() for r in result.resources])
    assert TOKEN not in json.dumps(result.outputs)
    write_render(result, tmp_path / "render")
    for path in (tmp_path / "render").rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(), path
    stack = write_stack(tmp_path, mutated("dev", _variant), "Pulumi.variant.yaml")
    monkeypatch.setattr(
        aksray.offline.runner,
        "run_program",
        partial(run_program, secret_values={"huggingfaceToken": TOKEN}),
    )
    plan = cli("plan", "--config", stack, "--json")
    assert plan.code == 0, plan.output
    assert TOKEN not in plan.output
    assert json.loads(plan.stdout)["resources"]
    render = cli("render", "--config", stack, "--out", tmp_path / "cli")
    assert render.code == 0, render.output
    for path in (tmp_path / "cli").rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(), path


def test_without_a_token_there_is_no_secret_and_no_reference() -> None:
    result = planned("dev+run")
    assert result.by_type(SECRET) == []
    for resource in _ray_objects(result):
        assert "HF_TOKEN" not in json.dumps(resource.inputs)


# --------------------------------------------------------------------------------------------
# Settings of the workloads
# --------------------------------------------------------------------------------------------


def test_lora_adapter_must_be_a_boolean(tmp_path: Path) -> None:
    def bad(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"]["loraAdapter"] = "yes"

    assert_rejected(tmp_path, mutated("dev", bad), "workloads.llm-serve.loraAdapter")


def test_lora_adapter_is_not_an_option_of_the_training_jobs(tmp_path: Path) -> None:
    def bad(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["aurora-finetune"]["loraAdapter"] = False

    assert_rejected(tmp_path, mutated("dev", bad), "workloads.aurora-finetune.loraAdapter")


def test_the_adapter_needs_storage_and_says_how_to_do_without(tmp_path: Path) -> None:
    def serve(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"] = {"enabled": True, "team": "team-a"}

    run = assert_rejected(tmp_path, mutated("local", serve), "workloads.llm-serve.enabled")
    assert "loraAdapter: false" in run.stderr


def test_qwen_workers_must_be_positive(tmp_path: Path) -> None:
    def bad(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["qwen-lora"]["workers"] = 0

    assert_rejected(tmp_path, mutated("dev", bad), "workloads.qwen-lora.workers")


def test_shipped_stacks_stage_their_jobs_until_a_run_is_set() -> None:
    """dev and prod create their Blob storage in the same `pulumi up`: a job submitted then
    would scale GPU nodes only to fail on empty inputs. Enabled RayJobs are planned but not
    submitted until `workloads.<name>.run` is set; the endpoint is deployed."""
    # dev ships the endpoint off; prod deploys it, with model-stage (CPU only, no input) started
    # to copy the model it streams.
    started = {"dev": [], "prod": ["aksray-workloads-model-stage", "aksray-workloads-llm-serve"]}
    staged = {"dev": ["model-stage"], "prod": []}
    for stack in ("dev", "prod"):
        result = planned(stack)
        assert sorted(r.name for r in _ray_objects(result)) == sorted(started[stack])
        assert [r.name for r in result.by_type(CONFIG_MAP)] == [
            f"aksray-workloads-{n.removeprefix('aksray-workloads-')}-code"
            for n in started[stack]
            if "model-stage" in n
        ]
        assert result.outputs["stagedJobs"] == [
            "aurora-finetune",
            "qwen-lora",
            "vllm-batch",
            *staged[stack],
        ]


def test_a_new_run_label_submits_a_new_job(tmp_path: Path) -> None:
    first = _object(planned("dev+run"), "qwen-lora").inputs["metadata"]["name"]
    again = run_program(write_stack(tmp_path, with_runs(stack_document("dev"), run="2")))
    second = _object(again, "qwen-lora").inputs["metadata"]["name"]
    assert first.startswith("qwen-lora-") and second.startswith("qwen-lora-")
    assert first != second


def test_run_labels_are_validated(tmp_path: Path) -> None:
    def bad_run(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["qwen-lora"]["run"] = "first run!"

    assert_rejected(tmp_path, mutated("dev", bad_run), "workloads.qwen-lora.run")

    def run_on_service(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"]["run"] = "1"

    assert_rejected(tmp_path, mutated("dev", run_on_service), "workloads.llm-serve.run")

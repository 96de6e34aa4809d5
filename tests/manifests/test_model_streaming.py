"""Weights in Blob, loaded by streaming: model-stage copies the base model once, vllm-batch and
llm-serve stream it with the Run:ai Model Streamer through workload identity."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path
from typing import Any

import yaml

from aksray.offline.runner import RunResult, run_program
from manifests import ray_pods
from manifests.namespaces import RAY_SERVICE_ACCOUNT
from tests.support.harness import assert_rejected, mutated, one, planned, with_runs, write_stack
from workloads.catalog import WORKLOADS, requirements

RAY_JOB = "kubernetes:ray.io/v1:RayJob"
RAY_SERVICE = "kubernetes:ray.io/v1:RayService"
P = "aks-ray-platform:"
STAGED = "hf/Qwen/Qwen2.5-7B-Instruct/main"
STREAMER = {"load_format": "runai_streamer", "model_loader_extra_config": {"memory_limit": 2**33}}
KEY_VARIABLES = (
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_CLIENT_SECRET",
)


def _manifest(result: RunResult, workload: str) -> dict[str, Any]:
    kind = RAY_JOB if WORKLOADS[workload].kind == "RayJob" else RAY_SERVICE
    inputs: dict[str, Any] = one(result, kind, f"aksray-workloads-{workload}").inputs
    return inputs


def _templates(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    key = "rayClusterSpec" if manifest["kind"] == "RayJob" else "rayClusterConfig"
    cluster = manifest["spec"][key]
    return [cluster["headGroupSpec"]["template"]] + [
        g["template"] for g in cluster.get("workerGroupSpecs", [])
    ]


def _env(template: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in template["spec"]["containers"][0]["env"]}


def _llm(manifest: dict[str, Any]) -> dict[str, Any]:
    serve = yaml.safe_load(manifest["spec"]["serveConfigV2"])
    llm: dict[str, Any] = serve["applications"][0]["args"]["llm_configs"][0]
    return llm


def _args(manifest: dict[str, Any]) -> list[str]:
    return shlex.split(manifest["spec"]["entrypoint"])


def _run(mutate: Any) -> RunResult:
    folder = Path(tempfile.mkdtemp(prefix="aksray-stream-"))
    return run_program(write_stack(folder, with_runs(mutated("dev", mutate))))


def test_model_stage_is_a_head_only_cpu_job_keyed_by_model_and_revision() -> None:
    result = planned("dev+run")
    job = _manifest(result, "model-stage")
    cluster = job["spec"]["rayClusterSpec"]
    assert "workerGroupSpecs" not in cluster  # head only: no list (the API drops an empty one)
    assert cluster["headGroupSpec"]["template"]["spec"]["nodeSelector"] == {
        "kubernetes.azure.com/agentpool": "cpu"
    }
    args = _args(job)
    assert args[:3] == ["python", "-m", "workloads.model_stage.main"]
    assert args[args.index("--revision") + 1] == "main"
    sets = ray_pods.pod_sets(WORKLOADS["model-stage"], _settings(result, "model-stage"))
    assert [(s.name, s.count, s.gpus) for s in sets] == [("head", 1, 0)]
    # It writes Blob with the team's identity: the account, never a key.
    (template,) = _templates(job)
    env = _env(template)
    assert env["AZURE_STORAGE_ACCOUNT"] == result.outputs["storageAccountName"]
    assert template["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    assert template["spec"]["serviceAccountName"] == RAY_SERVICE_ACCOUNT


def _settings(result: RunResult, name: str) -> Any:
    return next(w for w in result.settings.workloads if w.name == name)


def test_the_endpoint_streams_the_staged_model_from_blob() -> None:
    result = planned("dev+run")
    manifest = _manifest(result, "llm-serve")
    llm = _llm(manifest)
    assert llm["model_loading_config"] == {
        "model_id": "qwen2.5-7b-instruct",
        "model_source": f"az://models/{STAGED}",
    }
    assert llm["engine_kwargs"] == {
        "max_model_len": 8192,
        "tensor_parallel_size": 1,
        **STREAMER,
        "enable_lora": True,
        "max_lora_rank": 64,
        "max_loras": 4,
    }
    account = result.outputs["storageAccountName"]
    for template in _templates(manifest):
        env = _env(template)
        assert env["AZURE_STORAGE_ACCOUNT_NAME"] == env["AZURE_STORAGE_ACCOUNT"] == account
        assert template["metadata"]["labels"]["azure.workload.identity/use"] == "true"
        assert template["spec"]["serviceAccountName"] == RAY_SERVICE_ACCOUNT
    packages = yaml.safe_load(manifest["spec"]["serveConfigV2"])["applications"][0]["runtime_env"][
        "pip"
    ]["packages"]
    assert "runai-model-streamer==0.17.0" in packages
    assert "runai-model-streamer-azure==0.17.0" in packages


def test_batch_inference_streams_the_staged_model() -> None:
    job = _manifest(planned("dev+run"), "vllm-batch")
    args = _args(job)
    assert args[args.index("--model-blob-path") + 1] == STAGED
    for template in _templates(job):
        assert "AZURE_STORAGE_ACCOUNT_NAME" in _env(template)
    assert "runai-model-streamer-azure==0.17.0" in requirements(WORKLOADS["vllm-batch"])


def test_no_key_or_secret_anywhere_in_a_streaming_workload() -> None:
    result = planned("prod+run")
    for name in ("llm-serve", "vllm-batch", "model-stage"):
        text = yaml.safe_dump(_manifest(result, name))
        for variable in KEY_VARIABLES:
            assert variable not in text, (name, variable)


def test_huggingface_source_downloads_as_before() -> None:
    def from_hub(config: dict[str, Any]) -> None:
        for name in ("llm-serve", "vllm-batch"):
            config[f"{P}workloads"][name]["modelSource"] = "huggingface"

    result = _run(from_hub)
    llm = _llm(_manifest(result, "llm-serve"))
    assert llm["model_loading_config"]["model_source"] == "Qwen/Qwen2.5-7B-Instruct"
    assert "load_format" not in llm["engine_kwargs"]
    job = _manifest(result, "vllm-batch")
    assert "--model-blob-path" not in _args(job)
    for manifest in (_manifest(result, "llm-serve"), job):
        for template in _templates(manifest):
            assert "AZURE_STORAGE_ACCOUNT_NAME" not in _env(template)


def test_one_revision_for_the_copy_and_every_reader() -> None:
    def pinned(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["model-stage"]["revision"] = "a09a354"

    result = _run(pinned)
    stage = _args(_manifest(result, "model-stage"))
    assert stage[stage.index("--revision") + 1] == "a09a354"
    source = _llm(_manifest(result, "llm-serve"))["model_loading_config"]["model_source"]
    assert source == "az://models/hf/Qwen/Qwen2.5-7B-Instruct/a09a354"
    batch = _args(_manifest(result, "vllm-batch"))
    assert batch[batch.index("--model-blob-path") + 1] == "hf/Qwen/Qwen2.5-7B-Instruct/a09a354"


def test_without_storage_the_model_comes_from_the_hub() -> None:
    result = planned("local")
    assert result.settings.storage.enabled is False
    for name in ("llm-serve", "vllm-batch"):
        assert _settings(result, name).model_source == "huggingface"


def test_model_source_and_revision_are_validated(tmp_path: Path) -> None:
    def bad_source(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"]["modelSource"] = "s3"

    run = assert_rejected(tmp_path, mutated("dev", bad_source), "workloads.llm-serve.modelSource")
    assert "must be one of huggingface, blob" in run.output

    def bad_revision(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["model-stage"]["revision"] = "../main"

    assert_rejected(tmp_path, mutated("dev", bad_revision), "workloads.model-stage.revision")

    def no_models_container(config: dict[str, Any]) -> None:
        config[f"{P}storage"]["containers"] = ["datasets", "checkpoints"]
        config[f"{P}workloads"]["llm-serve"].update(enabled=True, loraAdapter=False)

    run = assert_rejected(
        tmp_path, mutated("dev", no_models_container), "workloads.llm-serve.enabled"
    )
    assert "set modelSource: huggingface" in run.output


def _warnings(result: RunResult) -> list[str]:
    from aksray.plan.checks.run import run_checks
    from aksray.plan.model.plan import plan

    return [f"{p.path}: {p.message}" for p in run_checks(plan(result)).warnings]


def test_plan_warns_when_the_stack_streams_a_model_it_never_stages() -> None:
    def unstarted(config: dict[str, Any]) -> None:
        del config[f"{P}workloads"]["model-stage"]["run"]

    # prod deploys its endpoint with the platform, and model-stage with it.
    assert not [w for w in _warnings(planned("prod")) if "model-stage" in w]
    folder = Path(tempfile.mkdtemp(prefix="aksray-stream-"))
    result = run_program(write_stack(folder, mutated("prod", unstarted)))
    (warning,) = [w for w in _warnings(result) if "model-stage" in w]
    assert warning.startswith("workloads.llm-serve.modelSource: llm-serve streams the base model")
    assert "Set workloads.model-stage.run" in warning
    # dev starts nothing yet: nothing streams, nothing to warn about.
    assert not [w for w in _warnings(planned("dev")) if "model-stage" in w]

"""Payloads against the libraries they run with, on CPU: LLaMA-Factory's own argument parser,
Ray LLM's own config models, and one Aurora LoRA training step on a tiny random model.

Run with `make test-payloads` (virtualenv .venv-payloads from workloads/requirements-test.txt);
the default `make test` deselects the `payload` marker. This module imports only the payloads
and the pure manifest builders, never the Pulumi program, so it runs in that environment.
"""

from __future__ import annotations

import dataclasses
import io
import json
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import pytest

from manifests import serve_config as serve
from workloads.aurora_finetune import main as aurora
from workloads.aurora_finetune.options import Options as AuroraOptions
from workloads.common.layout import ADAPTER_NAME
from workloads.qwen_lora import main as qwen
from workloads.vllm_batch import main as vllm

# The containers the program names on every payload's command line (manifests/ray.py).
AURORA_BLOB = ["--checkpoint-container", "team-a-data"]
QWEN_BLOB = ["--adapter-container", "team-a-data"]
VLLM_BLOB = ["--output-container", "team-b-data", "--adapter-container", "team-a-data"]

pytestmark = pytest.mark.payload

_AURORA_SURF = ("2t", "10u", "10v", "msl")
_AURORA_STATIC = ("lsm", "z", "slt")
_AURORA_ATMOS = ("z", "u", "v", "t", "q")


class _Download:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def readall(self) -> bytes:
        return self.data


@dataclasses.dataclass
class _Item:
    name: str


class FakeContainer:
    def __init__(self, blobs: dict[str, bytes] | None = None) -> None:
        self.blobs = dict(blobs or {})

    def list_blobs(self, name_starts_with: str | None = None) -> list[_Item]:
        return [_Item(n) for n in self.blobs if n.startswith(name_starts_with or "")]

    def download_blob(self, blob: str) -> _Download:
        return _Download(self.blobs[blob])

    def upload_blob(self, name: str, data: bytes | IO[bytes], overwrite: bool = False) -> None:
        self.blobs[name] = data if isinstance(data, bytes) else data.read()


@dataclasses.dataclass
class _SizedItem:
    name: str
    size: int


class SizedContainer(FakeContainer):
    """Listing with sizes, as Azure's BlobProperties have them."""

    def list_blobs(self, name_starts_with: str | None = None) -> list[_SizedItem]:  # type: ignore[override]
        prefix = name_starts_with or ""
        return [_SizedItem(n, len(d)) for n, d in self.blobs.items() if n.startswith(prefix)]


# --------------------------------------------------------------------------------------------
# LLaMA-Factory
# --------------------------------------------------------------------------------------------


def test_llamafactory_parses_the_training_config_without_extra_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from llamafactory.hparams import (
        DataArguments,
        FinetuningArguments,
        GeneratingArguments,
        ModelArguments,
        TrainingArguments,
    )
    from llamafactory.hparams.parser import _parse_train_args

    options = qwen.parse_args(
        [*QWEN_BLOB, "--run-id", "r1", "--workers", "4", "--max-samples", "10"]
    )
    args = qwen.llamafactory_args(options)
    known = {
        f.name
        for cls in (
            ModelArguments,
            DataArguments,
            TrainingArguments,
            FinetuningArguments,
            GeneratingArguments,
        )
        for f in dataclasses.fields(cls)
    }
    assert set(args) <= known, sorted(set(args) - known)
    # LLaMA-Factory's own parser (HfArgumentParser, extra keys refused) builds every dataclass.
    # bf16 is checked against a GPU, which a CPU-only test run lacks: pretend it is there.
    import transformers.training_args

    monkeypatch.setattr(transformers.training_args, "is_torch_bf16_gpu_available", lambda: True)
    monkeypatch.delenv("ALLOW_EXTRA_ARGS", raising=False)
    model_args, data_args, training_args, finetuning_args, _generating = _parse_train_args(args)
    assert model_args.model_name_or_path == "Qwen/Qwen2.5-7B-Instruct"
    assert data_args.dataset == [qwen.DATASET_NAME] or data_args.dataset == qwen.DATASET_NAME
    assert finetuning_args.finetuning_type == "lora"
    assert finetuning_args.lora_rank == 16
    # The payload starts the Ray workers itself (launch.py): LLaMA-Factory's launcher is off.
    assert training_args.use_ray is False
    assert training_args.bf16 is True
    with pytest.raises((ValueError, SystemExit)):
        _parse_train_args({**args, "ray_workers": 4})  # a misspelt key is refused


def test_llamafactory_reads_the_staged_dataset_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llamafactory.data.parser import get_dataset_list

    from workloads.common import blob

    monkeypatch.setattr(qwen, "LOCAL_ROOT", tmp_path)
    container = FakeContainer(
        {"qwen-lora/sft/a.jsonl": json.dumps({"instruction": "q", "output": "a"}).encode()}
    )
    monkeypatch.setattr(blob, "container_client", lambda account, name: container)
    options = qwen.parse_args([*QWEN_BLOB, "--run-id", "r1", "--workers", "1"])
    assert qwen.stage_dataset(options.__dict__, "acct") == 1
    (attr,) = get_dataset_list([qwen.DATASET_NAME], str(options.dataset_dir))
    assert (attr.load_from, attr.dataset_name, attr.formatting) == ("file", "sft", "alpaca")


# --------------------------------------------------------------------------------------------
# Ray LLM config models (Ray 2.58.0, as in the Ray image)
# --------------------------------------------------------------------------------------------


def test_ray_version_matches_the_image() -> None:
    import ray as ray_lib

    from catalog.versions import RAY_IMAGE, RAY_VERSION

    assert ray_lib.__version__ == RAY_VERSION
    assert f":{RAY_VERSION}-" in RAY_IMAGE


STAGED = "hf/Qwen/Qwen2.5-7B-Instruct/main"


@pytest.mark.parametrize(
    ("lora", "blob", "replicas"),
    [(True, True, (2, 8)), (False, False, (1, 1)), (True, False, (3, 3)), (False, True, (1, 4))],
)
def test_serve_llm_configs_validate_with_rays_llm_config(
    lora: bool, blob: bool, replicas: tuple[int, int]
) -> None:
    # The public `ray.serve.llm.LLMConfig` is this class; its module path avoids importing
    # vLLM, which the config model does not need.
    from ray.llm._internal.common.utils.cloud_utils import is_remote_path
    from ray.llm._internal.common.utils.download_utils import STREAMING_LOAD_FORMATS
    from ray.llm._internal.serve.core.configs.llm_config import LLMConfig
    from ray.serve.schema import ServeDeploySchema

    config = serve.serve_config(
        lora_adapter=lora,
        adapter_container="team-a-data",
        storage_account="acct",
        requirements=["x==1"],
        model_blob_path=STAGED if blob else None,
        replicas=replicas,
    )
    ServeDeploySchema.model_validate(config)  # Serve's own schema of the whole config
    (app,) = config["applications"]
    (raw,) = app["args"]["llm_configs"]
    parsed = LLMConfig.model_validate(raw)  # its validator checks deployment_config too
    assert parsed.model_id == serve.SERVE_MODEL_ID
    if lora:
        assert parsed.lora_config is not None
        assert parsed.lora_config.dynamic_lora_loading_path == serve.adapter_uri(
            "acct", "team-a-data"
        )
    else:
        assert parsed.lora_config is None
    source = parsed.model_loading_config.model_source
    if blob:
        # Ray hands an az:// source to vLLM unchanged (not a mirror it downloads), and loads
        # nothing itself for a streaming format.
        assert source == f"az://models/{STAGED}"
        assert not is_remote_path(source)
        assert parsed.engine_kwargs["load_format"] in STREAMING_LOAD_FORMATS
    else:
        assert source == "Qwen/Qwen2.5-7B-Instruct"
    scaling = parsed.deployment_config.get("autoscaling_config")
    if replicas[1] > replicas[0]:
        from ray.serve.config import AutoscalingConfig

        parsed_scaling = AutoscalingConfig.model_validate(scaling)
        assert (parsed_scaling.min_replicas, parsed_scaling.max_replicas) == replicas
        assert parsed_scaling.target_ongoing_requests == serve.TARGET_ONGOING_REQUESTS
    else:
        assert scaling is None
        assert parsed.deployment_config["num_replicas"] == replicas[0]


def test_batch_processor_config_validates_with_ray_data_llm() -> None:
    from ray.data.llm import vLLMEngineProcessorConfig

    for argv in ([*VLLM_BLOB, "--run-id", "r"], [*VLLM_BLOB, "--run-id", "r", "--no-lora"]):
        options = vllm.parse_args(argv)
        config = vLLMEngineProcessorConfig(**vllm.processor_config(options, "acct"))
        assert config.model_source == options.model
        assert config.batch_size == options.batch_size
        expected = serve.adapter_uri("acct", "team-a-data") if options.lora else None
        assert config.dynamic_lora_loading_path == expected
    row = vllm.preprocess({"prompt": "x"}, adapter=ADAPTER_NAME, max_tokens=4, temperature=0)
    assert row["model"] == ADAPTER_NAME


def test_the_vllm_engine_check_reserves_what_ray_datas_engine_stage_asks_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`engine_bundles` is the first engine replica of Ray Data's own vLLM stage: its actor
    pool's minimum size times the GPUs of one replica."""
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig
    from ray.llm._internal.batch.processor import vllm_engine_proc

    class _NoTelemetry:
        def push_telemetry_report(self, report: Any) -> None:
            del report

    # Building the processor starts Ray, fetches the tokenizer and reports telemetry: none of
    # it here.
    monkeypatch.setattr(vllm_engine_proc.ray, "init", lambda **_: None)
    monkeypatch.setattr(vllm_engine_proc, "download_model_files", lambda **_: str(tmp_path))
    monkeypatch.setattr(vllm_engine_proc, "get_or_create_telemetry_agent", _NoTelemetry)
    for low, high in ((1, 1), (1, 3)):
        options = vllm.parse_args(
            [*VLLM_BLOB, "--run-id", "r", "--min-workers", str(low), "--max-workers", str(high)]
        )
        config = vLLMEngineProcessorConfig(**vllm.processor_config(options, "acct"))
        stage = build_processor(config).get_stage_by_name("vLLMEngineStage")
        kwargs = stage.map_batches_kwargs
        (bundle,) = vllm.engine_bundles(options)
        assert kwargs["compute"].min_size == len(vllm.engine_bundles(options)) == 1
        assert kwargs["compute"].max_size == high
        assert kwargs["num_gpus"] == bundle["GPU"] == 1
        assert "num_cpus" not in kwargs and "CPU" not in bundle


def test_streaming_elastic_batch_config_validates_with_ray_data_llm() -> None:
    from ray.data.llm import vLLMEngineProcessorConfig
    from ray.llm._internal.batch.stages.configs import (
        ChatTemplateStageConfig,
        TokenizerStageConfig,
        resolve_stage_config,
    )

    argv = [*VLLM_BLOB, "--run-id", "r", "--model-blob-path", STAGED, "--min-workers", "1"]
    options = vllm.parse_args([*argv, "--max-workers", "4"])
    config = vLLMEngineProcessorConfig(**vllm.processor_config(options, "acct"))
    assert config.model_source == f"az://models/{STAGED}"
    assert tuple(config.concurrency) == (1, 4)  # an autoscaling engine pool
    assert config.engine_kwargs["load_format"] == "runai_streamer"
    tokenizer = f"azure://models@acct.blob.core.windows.net/{STAGED}"
    for stage, kind in (
        (config.chat_template_stage, ChatTemplateStageConfig),
        (config.tokenize_stage, TokenizerStageConfig),
    ):
        resolved = resolve_stage_config(stage, kind, {"model_source": config.model_source})
        assert resolved.enabled is True
        assert resolved.model_source == tokenizer  # Ray's own azure:// reader, on CPU


# --------------------------------------------------------------------------------------------
# model-stage on a small local model: real safetensors files, no network
# --------------------------------------------------------------------------------------------


def test_model_stage_copies_a_small_safetensors_model_that_reads_back_whole(
    tmp_path: Path,
) -> None:
    import numpy as np
    from safetensors.numpy import load, save_file

    from workloads.model_stage import main as model_stage

    weights = {"embed.weight": np.arange(24, dtype=np.float32).reshape(4, 6)}
    save_file(weights, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["TinyForCausalLM"]}))
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "README.md").write_text("# tiny")
    client = SizedContainer()
    prefix = "hf/org/tiny/main"
    result = model_stage.stage(
        lambda: model_stage.DirectorySource(tmp_path, commit="c0ffee"),
        client,
        model="org/tiny",
        revision="main",
        prefix=prefix,
    )
    assert result.copied == ("config.json", "model.safetensors", "tokenizer.json")
    copied = load(client.blobs[f"{prefix}/model.safetensors"])
    assert np.array_equal(copied["embed.weight"], weights["embed.weight"])
    again = model_stage.stage(
        lambda: pytest.fail("a complete copy must not ask the source"),
        client,
        model="org/tiny",
        revision="main",
        prefix=prefix,
    )
    assert again.skipped is True


# --------------------------------------------------------------------------------------------
# Aurora: one LoRA step on a tiny random model, on CPU
# --------------------------------------------------------------------------------------------


def _sample_bytes(h: int = 17, w: int = 32, levels: int = 4) -> bytes:
    import numpy as np

    rng = np.random.default_rng(0)
    arrays: dict[str, Any] = {
        "lat": np.linspace(90, -90, h),
        "lon": np.linspace(0, 360, w + 1)[:-1],
        "atmos_levels": np.array([100, 250, 500, 850][:levels]),
        "time": np.array([int(datetime(2024, 6, 1, 12).timestamp())]),
    }
    for var in _AURORA_SURF:
        arrays[f"input.surf.{var}"] = rng.standard_normal((1, 2, h, w))
        arrays[f"target.surf.{var}"] = rng.standard_normal((1, 1, h, w))
    for var in _AURORA_STATIC:
        arrays[f"input.static.{var}"] = rng.standard_normal((h, w))
    for var in _AURORA_ATMOS:
        arrays[f"input.atmos.{var}"] = rng.standard_normal((1, 2, levels, h, w))
        arrays[f"target.atmos.{var}"] = rng.standard_normal((1, 1, levels, h, w))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _tiny_aurora(options: AuroraOptions) -> Any:
    import torch
    from aurora import Aurora

    torch.manual_seed(0)
    return Aurora(
        encoder_depths=(1, 1, 1),
        decoder_depths=(1, 1, 1),
        encoder_num_heads=(2, 4, 8),
        decoder_num_heads=(8, 4, 2),
        embed_dim=32,
        num_heads=2,
        latent_levels=2,
        use_lora=True,
        lora_mode=options.lora_mode,
        lora_steps=options.lora_steps,
        autocast=True,  # as the job builds its model (train.build_model)
    )


def test_one_aurora_lora_step_trains_only_lora_and_writes_the_checkpoint() -> None:
    import torch

    from workloads.aurora_finetune import train

    containers = {
        "datasets": FakeContainer({"aurora/train/s0.npz": _sample_bytes()}),
        "team-a-data": FakeContainer(),
    }
    models: list[Any] = []

    def factory(options: AuroraOptions) -> Any:
        model = _tiny_aurora(options)
        models.append((model, {k: v.clone() for k, v in model.state_dict().items()}))
        return model

    options = aurora.parse_args(
        [*AURORA_BLOB, "--run-id", "r1", "--steps", "1", "--learning-rate", "0.01"]
    )
    result = train.run(
        options, account="acct", client=lambda a, c: containers[c], model_factory=factory
    )
    assert (result["samples"], result["steps"]) == (1, 1)
    assert result["first_loss"] > 0
    ((model, before),) = models
    after = model.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all("lora" in k for k in changed)
    stored = containers["team-a-data"].blobs
    lora = stored["checkpoints/aurora-finetune/r1/lora.pt"]
    weights = torch.load(io.BytesIO(lora), weights_only=True)
    assert set(weights) == {k for k in after if "lora" in k}
    metrics = json.loads(stored["checkpoints/aurora-finetune/r1/metrics.json"])
    assert metrics["options"]["run_id"] == "r1"


def test_the_model_the_job_trains_has_autocast_and_activation_checkpointing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Aurora's fine-tuning guide: `autocast=True` and `configure_activation_checkpointing()`,
    or the pretrained model's gradients do not fit on an 80 GB A100. The job's own model
    factory (the small pretrained model, its checkpoint download skipped), one step."""
    import inspect

    import torch
    from aurora import Aurora, AuroraSmallPretrained
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointWrapper

    from workloads.aurora_finetune import train

    monkeypatch.setattr(AuroraSmallPretrained, "load_checkpoint", lambda self, strict=True: None)
    trained: list[Any] = []

    def job_model(options: AuroraOptions) -> Any:
        trained.append(train.build_model(options))
        return trained[-1]

    containers = {
        "datasets": FakeContainer({"aurora/train/s0.npz": _sample_bytes()}),
        "team-a-data": FakeContainer(),
    }
    options = aurora.parse_args(
        [*AURORA_BLOB, "--run-id", "r1", "--model", "small-pretrained", "--steps", "1"]
    )
    result = train.run(
        options, account="acct", client=lambda a, c: containers[c], model_factory=job_model
    )
    ((model,),) = (trained,)
    assert result["steps"] == 1 and result["first_loss"] > 0
    assert (model.autocast, model.autocast_backbone) == (True, True)
    checkpointed = {
        type(module._checkpoint_wrapped_module).__name__
        for module in model.modules()
        if isinstance(module, CheckpointWrapper)
    }
    guide = inspect.signature(Aurora.configure_activation_checkpointing).parameters
    assert checkpointed == set(guide["module_names"].default)
    # The LoRA weights keep their plain names: they load into an unwrapped model.
    stored = containers["team-a-data"].blobs["checkpoints/aurora-finetune/r1/lora.pt"]
    weights = torch.load(io.BytesIO(stored), weights_only=True)
    assert weights and all("lora" in k and "_checkpoint_wrapped" not in k for k in weights)

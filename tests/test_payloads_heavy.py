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

from manifests import ray
from workloads.aurora_finetune import main as aurora
from workloads.common.layout import ADAPTER_NAME
from workloads.qwen_lora import main as qwen
from workloads.vllm_batch import main as vllm

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

    options = qwen.parse_args(["--run-id", "r1", "--workers", "4", "--max-samples", "10"])
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
    monkeypatch.setenv("USE_RAY", "1")
    monkeypatch.delenv("ALLOW_EXTRA_ARGS", raising=False)
    model_args, data_args, training_args, finetuning_args, _generating = _parse_train_args(args)
    assert model_args.model_name_or_path == "Qwen/Qwen2.5-7B-Instruct"
    assert data_args.dataset == [qwen.DATASET_NAME] or data_args.dataset == qwen.DATASET_NAME
    assert finetuning_args.finetuning_type == "lora"
    assert finetuning_args.lora_rank == 16
    assert training_args.ray_num_workers == 4
    assert training_args.use_ray is True
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
    options = qwen.parse_args(["--run-id", "r1", "--workers", "1"])
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


@pytest.mark.parametrize("lora", [True, False])
def test_serve_llm_configs_validate_with_rays_llm_config(lora: bool) -> None:
    # The public `ray.serve.llm.LLMConfig` is this class; its module path avoids importing
    # vLLM, which the config model does not need.
    from ray.llm._internal.serve.core.configs.llm_config import LLMConfig

    config = ray.serve_config(lora_adapter=lora, storage_account="acct", requirements=["x==1"])
    (app,) = config["applications"]
    (raw,) = app["args"]["llm_configs"]
    parsed = LLMConfig.model_validate(raw)
    assert parsed.model_id == ray.SERVE_MODEL_ID
    if lora:
        assert parsed.lora_config is not None
        assert parsed.lora_config.dynamic_lora_loading_path == ray.adapter_uri("acct")
    else:
        assert parsed.lora_config is None


def test_batch_processor_config_validates_with_ray_data_llm() -> None:
    from ray.data.llm import vLLMEngineProcessorConfig

    for argv in (["--run-id", "r"], ["--run-id", "r", "--no-lora"]):
        options = vllm.parse_args(argv)
        config = vLLMEngineProcessorConfig(**vllm.processor_config(options, "acct"))
        assert config.model_source == options.model
        assert config.batch_size == options.batch_size
        expected = ray.adapter_uri("acct") if options.lora else None
        assert config.dynamic_lora_loading_path == expected
    row = vllm.preprocess({"prompt": "x"}, adapter=ADAPTER_NAME, max_tokens=4, temperature=0)
    assert row["model"] == ADAPTER_NAME


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


def _tiny_aurora(options: aurora.Options) -> Any:
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
    )


def test_one_aurora_lora_step_trains_only_lora_and_writes_the_checkpoint() -> None:
    import torch

    from workloads.aurora_finetune import train

    containers = {
        "datasets": FakeContainer({"aurora/train/s0.npz": _sample_bytes()}),
        "checkpoints": FakeContainer(),
    }
    models: list[Any] = []

    def factory(options: aurora.Options) -> Any:
        model = _tiny_aurora(options)
        models.append((model, {k: v.clone() for k, v in model.state_dict().items()}))
        return model

    options = aurora.parse_args(["--run-id", "r1", "--steps", "1", "--learning-rate", "0.01"])
    result = train.run(
        options, account="acct", client=lambda a, c: containers[c], model_factory=factory
    )
    assert (result["samples"], result["steps"]) == (1, 1)
    assert result["first_loss"] > 0
    ((model, before),) = models
    after = model.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all("lora" in k for k in changed)
    stored = containers["checkpoints"].blobs
    weights = torch.load(io.BytesIO(stored["aurora-finetune/r1/lora.pt"]), weights_only=True)
    assert set(weights) == {k for k in after if "lora" in k}
    metrics = json.loads(stored["aurora-finetune/r1/metrics.json"])
    assert metrics["options"]["run_id"] == "r1"

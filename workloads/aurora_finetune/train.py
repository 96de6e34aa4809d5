"""Aurora LoRA training on the GPU worker (imports torch and `aurora`; runs inside Ray).

A training sample is one `.npz` file (NumPy, no pickles) with these arrays:
    lat (h,), lon (w,), atmos_levels (c,), time (b,) as POSIX seconds,
    input.surf.<var> (b, 2, h, w)       two history steps, per surface variable
    input.static.<var> (h, w)           per static variable
    input.atmos.<var> (b, 2, c, h, w)   per atmospheric variable
    target.surf.<var> (b, 1, h, w), target.atmos.<var> (b, 1, c, h, w)   the next step
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from aurora import Aurora, AuroraPretrained, AuroraSmallPretrained, Batch, Metadata

from workloads.common import blob

if TYPE_CHECKING:
    from workloads.aurora_finetune.options import Options

SAMPLE_SUFFIX = ".npz"


def load_sample(path: Path) -> tuple[Batch, Batch]:
    """An (input, target) pair of Aurora batches from one sample file."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}

    def group(prefix: str) -> dict[str, torch.Tensor]:
        return {
            key[len(prefix) :]: torch.from_numpy(value.astype(np.float32))
            for key, value in arrays.items()
            if key.startswith(prefix)
        }

    times = tuple(
        datetime.fromtimestamp(int(t), tz=UTC).replace(tzinfo=None) for t in arrays["time"]
    )
    metadata = Metadata(
        lat=torch.from_numpy(arrays["lat"].astype(np.float32)),
        lon=torch.from_numpy(arrays["lon"].astype(np.float32)),
        time=times,
        atmos_levels=tuple(int(level) for level in arrays["atmos_levels"]),
    )
    static = group("input.static.")
    inputs = Batch(group("input.surf."), static, group("input.atmos."), metadata)
    target = Batch(group("target.surf."), static, group("target.atmos."), metadata)
    return inputs, target


def prepare_lora(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Freeze everything but the LoRA parameters; return those."""
    trainable = []
    for name, parameter in model.named_parameters():
        parameter.requires_grad = "lora" in name
        if parameter.requires_grad:
            trainable.append(parameter)
    if not trainable:
        raise RuntimeError("the model has no LoRA parameters: construct it with use_lora=True")
    return trainable


def lora_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu() for k, v in model.state_dict().items() if "lora" in k}


def _crop(tensor: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    # Aurora predicts on the grid without the last latitude row: compare on the same grid.
    return tensor[..., : like.shape[-2], : like.shape[-1]]


def loss_fn(model: Aurora, prediction: Batch, target: Batch) -> torch.Tensor:
    """Mean absolute error over every variable, on normalised values."""
    pred = prediction.normalise(surf_stats=model.surf_stats)
    true = target.normalise(surf_stats=model.surf_stats)
    losses = [
        (pred.surf_vars[k] - _crop(true.surf_vars[k], pred.surf_vars[k])).abs().mean()
        for k in pred.surf_vars
    ] + [
        (pred.atmos_vars[k] - _crop(true.atmos_vars[k], pred.atmos_vars[k])).abs().mean()
        for k in pred.atmos_vars
    ]
    return torch.stack(losses).mean()


def train_step(
    model: Aurora, optimizer: torch.optim.Optimizer, inputs: Batch, target: Batch
) -> float:
    model.train()
    optimizer.zero_grad()
    loss = loss_fn(model, model(inputs), target)
    loss.backward()
    optimizer.step()
    return float(loss.item())


def build_model(options: Options) -> Aurora:
    """The pretrained Aurora with fresh LoRA layers, checkpoint loaded from Hugging Face.

    `autocast=True` runs the backbone in bfloat16: Aurora's fine-tuning guide requires it, with
    activation checkpointing (`prepare_for_training`), for gradients to fit on an 80 GB A100."""
    kind = AuroraSmallPretrained if options.model == "small-pretrained" else AuroraPretrained
    model = kind(
        use_lora=True,
        lora_mode=options.lora_mode,
        lora_steps=options.lora_steps,
        autocast=True,
    )
    # The pretrained checkpoint has no LoRA weights: load everything else, strictly otherwise.
    model.load_checkpoint(strict=False)
    return model


def prepare_for_training(model: Aurora) -> list[torch.nn.Parameter]:
    """Activation checkpointing on, only LoRA trainable; returns the LoRA parameters.

    Refuses a model built without autocast: it would run out of GPU memory in the first
    backward pass, after the checkpoint download and the data staging."""
    if not getattr(model, "autocast", False):
        raise RuntimeError("construct the model with autocast=True: without it, it does not fit")
    model.configure_activation_checkpointing()
    return prepare_lora(model)


def _samples(files: list[Path]) -> Iterator[tuple[Batch, Batch]]:
    while True:
        for path in files:
            yield load_sample(path)


def fit(
    model: Aurora,
    files: list[Path],
    *,
    steps: int,
    learning_rate: float,
    device: torch.device,
) -> list[float]:
    if not files:
        raise RuntimeError("no training samples found")
    model.to(device)
    optimizer = torch.optim.AdamW(prepare_for_training(model), lr=learning_rate)
    losses = []
    for _, (inputs, target) in zip(range(steps), _samples(files), strict=False):
        losses.append(train_step(model, optimizer, inputs.to(device), target.to(device)))
    return losses


def run(
    options: Options,
    *,
    account: str,
    client: Callable[[str, str], blob.ContainerClient] = blob.container_client,
    model_factory: Callable[[Options], Aurora] = build_model,
) -> dict[str, Any]:
    datasets = client(account, options.dataset_container)
    checkpoints = client(account, options.checkpoint_container)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with tempfile.TemporaryDirectory(prefix="aurora-") as tmp:
        files = blob.download_prefix(
            datasets, options.dataset_prefix, Path(tmp) / "samples", SAMPLE_SUFFIX
        )
        if options.max_samples:
            files = files[: options.max_samples]
        model = model_factory(options)
        losses = fit(
            model, files, steps=options.steps, learning_rate=options.learning_rate, device=device
        )
        weights = Path(tmp) / "lora.pt"
        torch.save(lora_state_dict(model), weights)
        blob.upload_bytes(checkpoints, options.lora_blob, weights.read_bytes())
    metrics = {
        "samples": len(files),
        "steps": len(losses),
        "first_loss": losses[0],
        "last_loss": losses[-1],
        "options": asdict(options),
    }
    blob.upload_bytes(checkpoints, options.metrics_blob, json.dumps(metrics, indent=2).encode())
    return {"lora": f"{options.checkpoint_container}/{options.lora_blob}", **metrics}

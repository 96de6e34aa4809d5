"""Aurora LoRA fine-tune: the RayJob entrypoint (`python -m workloads.aurora_finetune.main`).

The driver runs on the Ray head (no GPU) and starts one training task that needs one GPU, so
Ray places it on the GPU worker. The task loads the pretrained Aurora checkpoint (Hugging Face
`microsoft/aurora`, downloaded in the cluster), reads training samples from the `datasets`
container, trains only the LoRA parameters, and writes the LoRA weights to `checkpoints`.

Blob layout (container/path):
    datasets/<dataset-prefix>/*.npz              one training sample per file (see train.py)
    checkpoints/<checkpoint-prefix>/<run-id>/lora.pt       LoRA parameters only
    checkpoints/<checkpoint-prefix>/<run-id>/metrics.json  steps, losses, options

This module imports no heavy library at import time: argument handling and the layout are
tested without torch or Ray.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from workloads.common import blob, cli_types

LORA_MODES = ("single", "from_second", "all")
MODELS = ("pretrained", "small-pretrained")


@dataclass(frozen=True)
class Options:
    run_id: str
    dataset_container: str = "datasets"
    dataset_prefix: str = "aurora/train"
    checkpoint_container: str = "checkpoints"
    checkpoint_prefix: str = "aurora-finetune"
    model: str = "pretrained"
    lora_mode: str = "single"
    lora_steps: int = 40
    steps: int = 100
    learning_rate: float = 3e-5
    max_samples: int = 0  # 0: every sample under the prefix

    @property
    def lora_blob(self) -> str:
        return blob.blob_path(self.checkpoint_prefix, self.run_id, "lora.pt")

    @property
    def metrics_blob(self) -> str:
        return blob.blob_path(self.checkpoint_prefix, self.run_id, "metrics.json")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aurora-finetune", description=__doc__.splitlines()[0])
    p.add_argument(
        "--run-id", type=cli_types.path_segment, required=True, help="this run's checkpoint folder"
    )
    p.add_argument("--dataset-container", default=Options.dataset_container)
    p.add_argument("--dataset-prefix", default=Options.dataset_prefix)
    p.add_argument("--checkpoint-container", default=Options.checkpoint_container)
    p.add_argument("--checkpoint-prefix", default=Options.checkpoint_prefix)
    p.add_argument("--model", choices=MODELS, default=Options.model)
    p.add_argument("--lora-mode", choices=LORA_MODES, default=Options.lora_mode)
    p.add_argument("--lora-steps", type=cli_types.positive_int, default=Options.lora_steps)
    p.add_argument("--steps", type=cli_types.positive_int, default=Options.steps)
    p.add_argument("--learning-rate", type=cli_types.fraction, default=Options.learning_rate)
    p.add_argument("--max-samples", type=cli_types.non_negative_int, default=Options.max_samples)
    return p


def parse_args(argv: Sequence[str] | None = None) -> Options:
    args = parser().parse_args(argv)
    return Options(
        run_id=args.run_id,
        dataset_container=args.dataset_container,
        dataset_prefix=blob.blob_path(args.dataset_prefix),
        checkpoint_container=args.checkpoint_container,
        checkpoint_prefix=blob.blob_path(args.checkpoint_prefix),
        model=args.model,
        lora_mode=args.lora_mode,
        lora_steps=args.lora_steps,
        steps=args.steps,
        learning_rate=args.learning_rate,
        max_samples=args.max_samples,
    )


def train_on_worker(options: dict[str, Any]) -> dict[str, Any]:
    """Runs inside the GPU task: everything heavy is imported here."""
    from workloads.aurora_finetune import train

    return train.run(Options(**options), account=blob.storage_account())


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    import ray

    ray.init()
    task = ray.remote(num_gpus=1, num_cpus=4, max_retries=0)(train_on_worker)
    result = ray.get(task.remote(asdict(options)))
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

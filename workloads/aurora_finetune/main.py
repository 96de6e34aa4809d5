"""Aurora LoRA fine-tune: the RayJob entrypoint (`python -m workloads.aurora_finetune.main`).

The driver runs on the Ray head (no GPU). It reserves the GPU worker's GPU first (failing with
what the cluster offers if it cannot within a few minutes), then starts one training task in
that reservation. The task loads the pretrained Aurora checkpoint (Hugging Face
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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from workloads.common import blob, cli_types
from workloads.common.cluster import RESERVE_TIMEOUT_S, gpu_worker_cpus, reserve
from workloads.common.layout import CHECKPOINTS_CONTAINER, DATASETS_CONTAINER
from workloads.common.options import build_parser, option, parse_options

LORA_MODES = ("single", "from_second", "all")
MODELS = ("pretrained", "small-pretrained")


@dataclass(frozen=True)
class Options:
    run_id: str = option(type=cli_types.path_segment, help="this run's checkpoint folder")
    dataset_container: str = option(DATASETS_CONTAINER)
    dataset_prefix: str = option("aurora/train", blob_path=True)
    checkpoint_container: str = option(CHECKPOINTS_CONTAINER)
    checkpoint_prefix: str = option("aurora-finetune", blob_path=True)
    model: str = option("pretrained", choices=MODELS)
    lora_mode: str = option("single", choices=LORA_MODES)
    lora_steps: int = option(40, type=cli_types.positive_int)
    steps: int = option(100, type=cli_types.positive_int)
    learning_rate: float = option(3e-5, type=cli_types.fraction)
    max_samples: int = option(0, type=cli_types.non_negative_int)  # 0: every sample

    @property
    def lora_blob(self) -> str:
        return blob.blob_path(self.checkpoint_prefix, self.run_id, "lora.pt")

    @property
    def metrics_blob(self) -> str:
        return blob.blob_path(self.checkpoint_prefix, self.run_id, "metrics.json")


def parser() -> argparse.ArgumentParser:
    return build_parser(Options, prog="aurora-finetune", description=__doc__.splitlines()[0])


def parse_args(argv: Sequence[str] | None = None) -> Options:
    return parse_options(Options, parser(), argv)


# CPUs of the GPU pod kept for Ray and the Blob reads; the training task takes the rest (4 of the
# pod's minimum 8, spec.py; more when the stack gives the pod more).
SIDE_TASK_CPUS = 4
# The training task's resources.
TRAIN_BUNDLE = {"CPU": gpu_worker_cpus(8) - SIDE_TASK_CPUS, "GPU": 1}


def train_on_worker(options: dict[str, Any]) -> dict[str, Any]:
    """Runs inside the GPU task: everything heavy is imported here."""
    from workloads.aurora_finetune import train

    return train.run(Options(**options), account=blob.storage_account())


def launch(
    options: Options,
    *,
    function: Callable[[dict[str, Any]], Any] = train_on_worker,
    timeout_s: float = RESERVE_TIMEOUT_S,
    result_timeout_s: float | None = None,
) -> Any:
    """Reserve the GPU (or fail with ClusterTooSmallError), then run `function` there and
    wait for its result (for ever by default: training takes as long as it takes)."""
    import ray
    from ray.util.placement_group import remove_placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    group = reserve([TRAIN_BUNDLE], purpose="aurora-finetune's training task", timeout_s=timeout_s)
    try:
        task = ray.remote(
            num_cpus=TRAIN_BUNDLE["CPU"], num_gpus=TRAIN_BUNDLE["GPU"], max_retries=0
        )(function)
        strategy = PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=0)
        run = task.options(scheduling_strategy=strategy).remote(asdict(options))
        return ray.get(run, timeout=result_timeout_s)
    finally:
        remove_placement_group(group)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    import ray

    ray.init()
    result = launch(options)
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

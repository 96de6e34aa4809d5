"""Aurora LoRA fine-tune: the RayJob entrypoint (`python -m workloads.aurora_finetune.main`).

The driver runs on the Ray head (no GPU). It reserves the GPU worker's GPU first (failing with
what the cluster offers if it cannot within a few minutes), then starts one training task in
that reservation. The task loads the pretrained Aurora checkpoint (Hugging Face
`microsoft/aurora`, downloaded in the cluster), reads training samples from the `datasets`
container (shared, read-only), trains only the LoRA parameters, and writes the LoRA weights
to the team's own container (`--checkpoint-container`, which the program sets).

Blob layout (container/path; the default checkpoint prefix is checkpoints/aurora-finetune):
    datasets/<dataset-prefix>/*.npz                     one training sample per file (train.py)
    <team>-data/<checkpoint-prefix>/<run-id>/lora.pt       LoRA parameters only
    <team>-data/<checkpoint-prefix>/<run-id>/metrics.json  steps, losses, options

This module imports no heavy library at import time: argument handling and the layout are
tested without torch or Ray.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from workloads.aurora_finetune.options import Options
from workloads.common import blob
from workloads.common.cluster import RESERVE_TIMEOUT_S, gpu_worker_cpus, reserve
from workloads.common.options import build_parser, parse_options


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

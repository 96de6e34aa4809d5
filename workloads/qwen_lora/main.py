"""Qwen2.5-7B-Instruct LoRA SFT with LLaMA-Factory on Ray workers: the RayJob entrypoint.

The driver runs on the Ray head (no GPU):
1. it reserves one {CPU: 10, GPU: 1} bundle per training worker (`--workers`, one per GPU
   pod), failing with what the cluster offers if it cannot within a few minutes (launch.py);
2. every node downloads the SFT dataset from the `datasets` container into the same local
   folder (LLaMA-Factory reads datasets from local files on each training worker);
3. one LLaMA-Factory training worker per bundle trains with LoRA (DDP, rank 0's pod is the
   rendezvous);
4. the node that holds the saved adapter (rank 0) uploads it to the team's own container
   (`--adapter-container`, which the program sets).

Blob layout (container/path; the default adapter prefix is adapters/qwen-lora):
    datasets/<dataset-prefix>/*.json|*.jsonl           alpaca or sharegpt records (shared)
    <team>-data/<adapter-prefix>/<adapter-name>/adapter_config.json, adapter_model.safetensors
The folder `<adapter-prefix>` is what vllm-batch and llm-serve load adapters from.

No heavy import at module level: arguments, the LLaMA-Factory config and the layout are
tested without torch, Ray or LLaMA-Factory.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from workloads.common import blob, cli_types
from workloads.common.adapter import AdapterLocation
from workloads.common.layout import (
    BASE_MODEL,
    DATASETS_CONTAINER,
)
from workloads.common.options import build_parser, option, parse_options

DATASET_NAME = "aksray_sft"
DATASET_FORMATS = ("alpaca", "sharegpt")
DATASET_SUFFIXES = (".json", ".jsonl")
LOCAL_ROOT = Path("/tmp/aksray/qwen-lora")  # noqa: S108 - per-pod scratch, never shared


@dataclass(frozen=True, kw_only=True)
class Options(AdapterLocation):
    run_id: str = option(type=cli_types.path_segment)
    workers: int = option(type=cli_types.positive_int, help="GPU training workers")
    model: str = option(BASE_MODEL)
    template: str = option("qwen")
    dataset_container: str = option(DATASETS_CONTAINER)
    dataset_prefix: str = option("qwen-lora/sft", blob_path=True)
    dataset_format: str = option("alpaca", choices=DATASET_FORMATS)
    epochs: float = option(3.0, type=cli_types.positive_float)
    learning_rate: float = option(1e-4, type=cli_types.fraction)
    lora_rank: int = option(16, type=cli_types.positive_int)
    cutoff_len: int = option(2048, type=cli_types.positive_int)
    batch_size: int = option(1, type=cli_types.positive_int)
    gradient_accumulation: int = option(8, type=cli_types.positive_int)
    max_samples: int = option(0, type=cli_types.non_negative_int)  # 0: every record

    @property
    def local_root(self) -> Path:
        return LOCAL_ROOT / self.run_id

    @property
    def dataset_dir(self) -> Path:
        return self.local_root / "data"

    @property
    def output_dir(self) -> Path:
        return self.local_root / "output"

    @property
    def adapter_blob_prefix(self) -> str:
        return blob.blob_path(self.adapter_prefix, self.adapter_name)


def parser() -> argparse.ArgumentParser:
    return build_parser(Options, prog="qwen-lora", description=__doc__.splitlines()[0])


def parse_args(argv: Sequence[str] | None = None) -> Options:
    return parse_options(Options, parser(), argv)


def dataset_info(options: Options) -> dict[str, Any]:
    """LLaMA-Factory's `dataset_info.json`: one dataset, the folder the records were put in."""
    entry: dict[str, Any] = {"file_name": "sft", "formatting": options.dataset_format}
    if options.dataset_format == "sharegpt":
        entry["columns"] = {"messages": "conversations"}
    return {DATASET_NAME: entry}


def llamafactory_args(options: Options) -> dict[str, Any]:
    """The LLaMA-Factory training arguments (the keys of its argument dataclasses)."""
    args: dict[str, Any] = {
        # model
        "model_name_or_path": options.model,
        "trust_remote_code": False,
        # method
        "stage": "sft",
        "do_train": True,
        "finetuning_type": "lora",
        "lora_rank": options.lora_rank,
        "lora_target": "all",
        # dataset
        "dataset": DATASET_NAME,
        "dataset_dir": str(options.dataset_dir),
        "template": options.template,
        "cutoff_len": options.cutoff_len,
        "overwrite_cache": True,
        "preprocessing_num_workers": 4,
        # output
        "output_dir": str(options.output_dir),
        "overwrite_output_dir": True,
        "save_only_model": True,
        "logging_steps": 10,
        "save_steps": 500,
        "report_to": "none",
        # training
        "per_device_train_batch_size": options.batch_size,
        "gradient_accumulation_steps": options.gradient_accumulation,
        "learning_rate": options.learning_rate,
        "num_train_epochs": options.epochs,
        "lr_scheduler_type": "cosine",
        "warmup_ratio": 0.1,
        "bf16": True,
        "ddp_timeout": 180000000,
    }
    if options.max_samples:
        args["max_samples"] = options.max_samples
    return args


def stage_dataset(options: dict[str, Any], account: str | None = None) -> int:
    """On one node: download the records and write dataset_info.json. Returns the file count."""
    opts = Options(**options)
    client = blob.container_client(account or blob.storage_account(), opts.dataset_container)
    files = [
        path
        for suffix in DATASET_SUFFIXES
        for path in blob.download_prefix(
            client, opts.dataset_prefix, opts.dataset_dir / "sft", suffix
        )
    ]
    (opts.dataset_dir / "dataset_info.json").write_text(json.dumps(dataset_info(opts), indent=2))
    return len(files)


def adapter_files(output_dir: Path) -> bool:
    return (output_dir / "adapter_config.json").is_file()


def upload_adapter(options: dict[str, Any], account: str | None = None) -> list[str]:
    """On one node: upload the saved adapter if this node holds it (rank 0 saves it)."""
    opts = Options(**options)
    if not adapter_files(opts.output_dir):
        return []
    client = blob.container_client(account or blob.storage_account(), opts.adapter_container)
    adapter = opts.output_dir
    names = [
        blob.upload_bytes(
            client, blob.blob_path(opts.adapter_blob_prefix, path.name), path.read_bytes()
        )
        for path in sorted(adapter.iterdir())
        if path.is_file() and (path.name.startswith("adapter_") or path.name in _TOKENIZER_FILES)
    ]
    return names


# Saved next to the adapter by LLaMA-Factory; vLLM loads the adapter with the base tokenizer,
# these keep the folder self-describing.
_TOKENIZER_FILES = frozenset({"tokenizer_config.json", "special_tokens_map.json"})


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    import ray
    from ray.util.placement_group import remove_placement_group

    from workloads.common.cluster import on_every_node
    from workloads.qwen_lora import launch

    ray.init()
    group = launch.reserve_workers(options.workers)  # before any download: fail fast
    try:
        staged = on_every_node(stage_dataset, asdict(options))
        if not any(staged):
            raise RuntimeError(
                f"no {'/'.join(DATASET_SUFFIXES)} files under "
                f"{options.dataset_container}/{options.dataset_prefix}/"
            )
        launch.start_training(group, llamafactory_args(options))
    finally:
        remove_placement_group(group)
    uploaded = [name for names in on_every_node(upload_adapter, asdict(options)) for name in names]
    if not uploaded:
        raise RuntimeError(f"no node holds a saved adapter in {options.output_dir}")
    print(
        json.dumps(
            {
                "adapter": f"{options.adapter_container}/{options.adapter_blob_prefix}",
                "files": uploaded,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

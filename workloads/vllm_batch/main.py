"""vLLM batch inference with `ray.data.llm` and the LoRA adapter from Blob: the RayJob entrypoint.

Checks first that the GPU worker's GPU can be had (failing with what the cluster offers if it
cannot within a few minutes), then reads a JSONL prompt set from the `datasets` container, runs
it through a vLLM engine on the GPU worker (`build_processor` with
`vLLMEngineProcessorConfig`), each request aimed at the LoRA adapter that qwen-lora trained
(loaded by Ray LLM from `<adapter-prefix>/<adapter-name>` in the container of the team that
runs qwen-lora, through `dynamic_lora_loading_path`), and writes the answers as JSONL to its
own team's container (`--output-container`).

With `--model-blob-path` the base model streams from the copy model-stage made in Blob (the
Run:ai Model Streamer, workloads/common/streaming.py) instead of downloading from Hugging Face.
With `--max-workers` above `--min-workers` the engine pool autoscales: it starts on the minimum
of GPU workers Kueue admitted and grows as the Ray autoscaler gets (and Kueue admits) more.

Blob layout (container/path):
    datasets/<input-prefix>/*.jsonl              {"id", "prompt"} or {"id", "messages"} per line
    <team>-data/<output-prefix>/<run-id>/*.json  {"id", "prompt", "response", "model"} per line
    <qwen-lora's team>-data/<adapter-prefix>/<adapter-name>/  the adapter (written by qwen-lora)
    models/hf/<model>/<revision>/                the base model (written by model-stage)

No heavy import at module level: arguments, the processor config and the row functions are
tested without Ray, vLLM or the Azure SDK.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workloads.common import blob, cli_types, streaming
from workloads.common.adapter import AdapterLocation
from workloads.common.cluster import RESERVE_TIMEOUT_S, reserve
from workloads.common.layout import BASE_MODEL, DATASETS_CONTAINER, RESULTS_FOLDER
from workloads.common.options import build_parser, option, parse_options

_TEMPERATURE = cli_types.float_between(0, 2)


@dataclass(frozen=True, kw_only=True)
class Options(AdapterLocation):
    run_id: str = option(type=cli_types.path_segment)
    model: str = option(BASE_MODEL)
    # The staged model's folder in the models container; empty: the model comes from the Hub.
    model_blob_path: str = option("", blob_path=True)
    lora: bool = option(True, negative_help="base model only")
    container: str = option(DATASETS_CONTAINER)
    input_prefix: str = option("vllm-batch/prompts", blob_path=True)
    output_container: str = option(help="the team's own container (<team>-data)")
    output_prefix: str = option(f"{RESULTS_FOLDER}/vllm-batch", blob_path=True)
    max_lora_rank: int = option(64, type=cli_types.positive_int)
    max_model_len: int = option(8192, type=cli_types.positive_int)
    max_tokens: int = option(512, type=cli_types.positive_int)
    temperature: float = option(0.2, type=_TEMPERATURE)
    batch_size: int = option(32, type=cli_types.positive_int)
    # vLLM engines, one per GPU worker: from the minimum Kueue admits first up to the maximum.
    min_workers: int = option(1, type=cli_types.positive_int)
    max_workers: int = option(1, type=cli_types.positive_int)

    def __post_init__(self) -> None:
        if self.max_workers < self.min_workers:
            raise ValueError(
                f"--max-workers {self.max_workers} is below --min-workers {self.min_workers}"
            )

    @property
    def concurrency(self) -> int | tuple[int, int]:
        """Ray Data's engine pool: fixed, or autoscaling between the two (min, max)."""
        if self.max_workers == self.min_workers:
            return self.min_workers
        return (self.min_workers, self.max_workers)

    @property
    def output_path(self) -> str:
        return blob.blob_path(self.output_prefix, self.run_id)


def parser() -> argparse.ArgumentParser:
    return build_parser(Options, prog="vllm-batch", description=__doc__.splitlines()[0])


def parse_args(argv: Sequence[str] | None = None) -> Options:
    return parse_options(Options, parser(), argv)


def processor_config(options: Options, account: str) -> dict[str, Any]:
    """Keyword arguments of `ray.data.llm.vLLMEngineProcessorConfig`."""
    engine_kwargs: dict[str, Any] = {"max_model_len": options.max_model_len}
    config: dict[str, Any] = {
        "model_source": options.model,
        "engine_kwargs": engine_kwargs,
        "batch_size": options.batch_size,
        "concurrency": options.concurrency,
    }
    if options.model_blob_path:
        config["model_source"] = streaming.model_uri(options.model_blob_path)
        engine_kwargs.update(streaming.engine_kwargs())
        # The CPU stages load the tokenizer with transformers, from Ray LLM's `azure://` reader.
        tokenizer = {"model_source": streaming.tokenizer_uri(account, options.model_blob_path)}
        for stage in ("chat_template_stage", "tokenize_stage", "detokenize_stage"):
            config[stage] = dict(tokenizer)
    if options.lora:
        engine_kwargs.update(enable_lora=True, max_lora_rank=options.max_lora_rank, max_loras=1)
        config["dynamic_lora_loading_path"] = blob.blob_uri(
            account, options.adapter_container, options.adapter_prefix
        )
    return config


def engine_bundles(options: Options) -> list[dict[str, float]]:
    """What Ray Data's vLLM stage needs before it can start: its engine pool starts with one
    replica (`concurrency` n is a pool of 1 to n), of one GPU (no tensor or pipeline
    parallelism)."""
    del options  # every option gives the same minimum; more replicas come as GPUs allow
    return [{"GPU": 1}]


def check_engine_fits(options: Options, *, timeout_s: float = RESERVE_TIMEOUT_S) -> None:
    """Fail with ClusterTooSmallError unless the first engine replica can be placed.

    Ray Data would otherwise wait for a GPU for ever. The probe is released at once, before
    Ray Data starts its actors: nothing else in the RayJob's own cluster takes the GPU."""
    from ray.util.placement_group import remove_placement_group

    probe = reserve(
        engine_bundles(options), purpose="vllm-batch's vLLM engine", timeout_s=timeout_s
    )
    remove_placement_group(probe)


def preprocess(
    row: dict[str, Any], *, adapter: str | None, max_tokens: int, temperature: float
) -> dict[str, Any]:
    """One input record -> one engine request (chat messages, sampling, adapter)."""
    if "messages" in row:
        messages = list(row["messages"])
    elif "prompt" in row:
        messages = [{"role": "user", "content": str(row["prompt"])}]
    else:
        raise ValueError(f"a record needs `prompt` or `messages`, got keys {sorted(row)}")
    request: dict[str, Any] = {
        "id": row.get("id"),
        "prompt_text": messages[-1]["content"],
        "messages": messages,
        "sampling_params": {"max_tokens": max_tokens, "temperature": temperature},
    }
    if adapter:
        request["model"] = adapter  # Ray LLM: the subfolder of dynamic_lora_loading_path
    return request


def postprocess(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row.get("id"),
        "prompt": row.get("prompt_text"),
        "response": row["generated_text"],
        "model": row.get("model"),
    }


def filesystem(account: str) -> Any:
    """Azure Blob as a pyarrow filesystem (adlfs, workload identity) for Ray Data I/O."""
    from adlfs import AzureBlobFileSystem
    from azure.identity import DefaultAzureCredential
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    blob_fs = AzureBlobFileSystem(account_name=account, credential=DefaultAzureCredential())
    return PyFileSystem(FSSpecHandler(blob_fs))


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    account = blob.storage_account()
    import ray
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    ray.init()
    check_engine_fits(options)
    fs = filesystem(account)
    prompts = ray.data.read_json(
        blob.blob_path(options.container, options.input_prefix),
        filesystem=fs,
        file_extensions=["jsonl"],
        lines=True,
    )
    processor = build_processor(
        vLLMEngineProcessorConfig(**processor_config(options, account)),
        preprocess=functools.partial(
            preprocess,
            adapter=options.adapter_name if options.lora else None,
            max_tokens=options.max_tokens,
            temperature=options.temperature,
        ),
        postprocess=postprocess,
    )
    processor(prompts).write_json(
        blob.blob_path(options.output_container, options.output_path), filesystem=fs
    )
    print(f"results: {options.output_container}/{options.output_path}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Payload logic that needs no heavy library: argument handling, Blob layout and transfers (with a
fake container client in place of the Azure SDK), the LLaMA-Factory and vLLM configs, the rows.

The libraries themselves (LLaMA-Factory, Ray LLM's config models, Aurora on torch) are exercised
by tests/workloads/test_payloads_heavy.py (`make test-payloads`)."""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from manifests import serve_config as serve
from tests.support.harness import planned
from workloads.aurora_finetune import main as aurora
from workloads.common import blob
from workloads.common.layout import ADAPTER_NAME, ADAPTER_PREFIX, BASE_MODEL
from workloads.model_stage import main as model_stage
from workloads.qwen_lora import launch
from workloads.qwen_lora import main as qwen
from workloads.vllm_batch import main as vllm

# The containers the program names on every payload's command line (manifests/ray.py).
AURORA_BLOB = ["--checkpoint-container", "team-a-data"]
QWEN_BLOB = ["--adapter-container", "team-a-data"]
VLLM_BLOB = ["--output-container", "team-b-data", "--adapter-container", "team-a-data"]


@dataclass
class _Item:
    name: str


class _Download:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def readall(self) -> bytes:
        return self.data


class FakeContainer:
    """The three ContainerClient methods the payloads use, over a dict."""

    def __init__(self, blobs: dict[str, bytes] | None = None) -> None:
        self.blobs = dict(blobs or {})
        self.listed: list[str | None] = []

    def list_blobs(self, name_starts_with: str | None = None) -> Iterable[_Item]:
        self.listed.append(name_starts_with)
        return [_Item(n) for n in self.blobs if n.startswith(name_starts_with or "")]

    def download_blob(self, blob: str) -> _Download:
        return _Download(self.blobs[blob])

    def upload_blob(self, name: str, data: bytes | IO[bytes], overwrite: bool = False) -> None:
        assert overwrite
        self.blobs[name] = data if isinstance(data, bytes) else data.read()


# --------------------------------------------------------------------------------------------
# Every RayJob's command line is one its payload accepts
# --------------------------------------------------------------------------------------------

PARSERS = {
    "workloads.aurora_finetune.main": aurora.parse_args,
    "workloads.qwen_lora.main": qwen.parse_args,
    "workloads.vllm_batch.main": vllm.parse_args,
    "workloads.model_stage.main": model_stage.parse_args,
}


@pytest.mark.parametrize("stack", ["dev+run", "prod+run"])
def test_every_entrypoint_parses_with_its_payload(stack: str) -> None:
    jobs = planned(stack).by_type("kubernetes:ray.io/v1:RayJob")
    assert len(jobs) == 4
    for job in jobs:
        command = shlex.split(job.inputs["spec"]["entrypoint"])
        options: Any = PARSERS[command[2]](command[3:])
        assert options.run_id == job.inputs["metadata"]["labels"]["aksray.io/run"]
    qwen_job = next(j for j in jobs if "qwen" in j.name)
    workers = qwen_job.inputs["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"]
    options = qwen.parse_args(shlex.split(qwen_job.inputs["spec"]["entrypoint"])[3:])
    assert options.workers == workers == len(launch.worker_bundles(options.workers))
    # vllm-batch's engine pool spans exactly the GPU workers the Ray autoscaler may run.
    batch_job = next(j for j in jobs if "vllm-batch" in j.name)
    group = batch_job.inputs["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    batch = vllm.parse_args(shlex.split(batch_job.inputs["spec"]["entrypoint"])[3:])
    assert (batch.min_workers, batch.max_workers) == (group["minReplicas"], group["maxReplicas"])


@pytest.mark.parametrize(
    ("payload", "required"),
    [
        (aurora, [*AURORA_BLOB, "--run-id", "r"]),
        (qwen, [*QWEN_BLOB, "--run-id", "r", "--workers", "1"]),
        (vllm, [*VLLM_BLOB, "--run-id", "r"]),
    ],
    ids=["aurora-finetune", "qwen-lora", "vllm-batch"],
)
def test_each_payload_option_is_declared_once_in_its_options(
    payload: Any, required: list[str]
) -> None:
    """The command line is the Options dataclass: one option per field, its default the
    field's; only the fields without a default are required."""
    fields = dataclasses.fields(payload.Options)
    assert set(vars(payload.parser().parse_args(required))) == {f.name for f in fields}
    options = payload.parse_args(required)
    for field in fields:
        if field.default is not dataclasses.MISSING:
            assert getattr(options, field.name) == field.default, field.name
    with pytest.raises(SystemExit):
        payload.parse_args(required[:-2])


def test_the_payloads_default_to_the_shared_blob_layout() -> None:
    qwen_options = qwen.parse_args([*QWEN_BLOB, "--run-id", "r", "--workers", "1"])
    vllm_options = vllm.parse_args([*VLLM_BLOB, "--run-id", "r"])
    for options in (qwen_options, vllm_options):
        assert (options.model, options.adapter_container) == (BASE_MODEL, "team-a-data")
        assert (options.adapter_prefix, options.adapter_name) == (ADAPTER_PREFIX, ADAPTER_NAME)
    assert serve.adapter_uri("acct", "team-a-data").endswith(f"/{ADAPTER_PREFIX}")


# --------------------------------------------------------------------------------------------
# Blob helpers
# --------------------------------------------------------------------------------------------


def test_blob_paths() -> None:
    assert blob.blob_path("/a/", "b", "", "c/") == "a/b/c"
    assert blob.blob_path() == ""
    assert blob.blob_uri("acct", "models", "/qwen-lora/") == (
        "azure://models@acct.blob.core.windows.net/qwen-lora"
    )
    assert blob.blob_uri("acct", "models") == "azure://models@acct.blob.core.windows.net"
    with pytest.raises(ValueError, match="invalid blob path"):
        blob.blob_path("a/../b")


def test_storage_account_comes_from_the_pod_environment() -> None:
    assert blob.storage_account({"AZURE_STORAGE_ACCOUNT": "acct"}) == "acct"
    with pytest.raises(RuntimeError, match="AZURE_STORAGE_ACCOUNT is not set"):
        blob.storage_account({})


def test_download_keeps_relative_paths_and_upload_mirrors_them(tmp_path: Path) -> None:
    source = FakeContainer(
        {
            "aurora/train/a.npz": b"A",
            "aurora/train/sub/b.npz": b"B",
            "aurora/train/readme.txt": b"-",
            "aurora/trainer/c.npz": b"not under the prefix",
        }
    )
    files = blob.download_prefix(source, "aurora/train", tmp_path / "in", ".npz")
    assert [p.relative_to(tmp_path / "in").as_posix() for p in files] == ["a.npz", "sub/b.npz"]
    assert source.listed == ["aurora/train/"]
    target = FakeContainer()
    names = blob.upload_directory(target, tmp_path / "in", "copy/run-1")
    assert names == ["copy/run-1/a.npz", "copy/run-1/sub/b.npz"]
    assert target.blobs["copy/run-1/sub/b.npz"] == b"B"


def test_download_refuses_a_blob_that_escapes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="escapes"):
        blob.download_prefix(FakeContainer({"p/../../x": b"x"}), "p", tmp_path)


# --------------------------------------------------------------------------------------------
# Aurora
# --------------------------------------------------------------------------------------------


def test_aurora_arguments_and_layout() -> None:
    options = aurora.parse_args(
        [*AURORA_BLOB, "--run-id", "r1", "--steps", "5", "--lora-mode", "all"]
    )
    assert (options.steps, options.lora_mode, options.model) == (5, "all", "pretrained")
    # In the team's own container, under checkpoints/ (workloads/common/layout.py).
    assert options.lora_blob == "checkpoints/aurora-finetune/r1/lora.pt"
    assert options.metrics_blob == "checkpoints/aurora-finetune/r1/metrics.json"
    assert (options.dataset_container, options.checkpoint_container) == ("datasets", "team-a-data")


@pytest.mark.parametrize(
    "argv",
    [
        [],
        [*AURORA_BLOB, "--run-id", "../x"],
        [*AURORA_BLOB, "--run-id", "r", "--steps", "0"],
        [*AURORA_BLOB, "--run-id", "r", "--lora-mode", "some"],
        [*AURORA_BLOB, "--run-id", "r", "--learning-rate", "2"],
        [*AURORA_BLOB, "--run-id", "r", "--max-samples", "-1"],
        ["--run-id", "r"],  # no team container: the program always names it
    ],
)
def test_aurora_rejects_bad_arguments(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        aurora.parse_args(argv)
    assert exit_info.value.code == 2


# --------------------------------------------------------------------------------------------
# Qwen / LLaMA-Factory
# --------------------------------------------------------------------------------------------


def test_llamafactory_config() -> None:
    options = qwen.parse_args(
        [*QWEN_BLOB, "--run-id", "r1", "--workers", "4", "--max-samples", "100"]
    )
    args = qwen.llamafactory_args(options)
    assert args["model_name_or_path"] == BASE_MODEL
    assert (args["stage"], args["finetuning_type"], args["do_train"]) == ("sft", "lora", True)
    assert "ray_num_workers" not in args  # the payload starts the workers (launch.py)
    assert args["dataset"] == qwen.DATASET_NAME
    assert args["dataset_dir"] == "/tmp/aksray/qwen-lora/r1/data"
    assert args["output_dir"] == "/tmp/aksray/qwen-lora/r1/output"
    assert args["template"] == "qwen"
    assert args["max_samples"] == 100
    assert "max_samples" not in qwen.llamafactory_args(
        qwen.parse_args([*QWEN_BLOB, "--run-id", "r", "--workers", "1"])
    )
    # The adapter lands where vllm-batch and llm-serve load it from.
    assert (options.adapter_container, options.adapter_blob_prefix) == (
        "team-a-data",
        f"{ADAPTER_PREFIX}/{ADAPTER_NAME}",
    )


@pytest.mark.parametrize(
    "argv",
    [
        [*QWEN_BLOB, "--run-id", "r"],
        [*QWEN_BLOB, "--run-id", "r", "--workers", "0"],
        [*QWEN_BLOB, "--workers", "2"],
        ["--run-id", "r", "--workers", "2"],  # no adapter container
    ],
)
def test_qwen_rejects_bad_arguments(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        qwen.parse_args(argv)


def test_every_node_stages_the_dataset_for_llamafactory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(qwen, "LOCAL_ROOT", tmp_path)
    records = [{"instruction": "2+2?", "input": "", "output": "4"}]
    container = FakeContainer(
        {
            "qwen-lora/sft/part-1.jsonl": b"\n".join(json.dumps(r).encode() for r in records),
            "qwen-lora/sft/part-2.json": json.dumps(records).encode(),
            "qwen-lora/sft/notes.md": b"ignored",
        }
    )
    made: list[tuple[str, str]] = []

    def client(account: str, name: str) -> FakeContainer:
        made.append((account, name))
        return container

    monkeypatch.setattr(blob, "container_client", client)
    options = qwen.parse_args([*QWEN_BLOB, "--run-id", "r1", "--workers", "2"])
    assert qwen.stage_dataset(options.__dict__, "acct") == 2
    assert made == [("acct", "datasets")]
    info = json.loads((tmp_path / "r1" / "data" / "dataset_info.json").read_text())
    assert info == {qwen.DATASET_NAME: {"file_name": "sft", "formatting": "alpaca"}}
    assert sorted(p.name for p in (tmp_path / "r1" / "data" / "sft").iterdir()) == [
        "part-1.jsonl",
        "part-2.json",
    ]


def test_sharegpt_datasets_name_their_messages_column() -> None:
    options = qwen.parse_args(
        [*QWEN_BLOB, "--run-id", "r", "--workers", "1", "--dataset-format", "sharegpt"]
    )
    assert qwen.dataset_info(options)[qwen.DATASET_NAME]["columns"] == {"messages": "conversations"}


def test_only_the_node_with_the_adapter_uploads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(qwen, "LOCAL_ROOT", tmp_path)
    container = FakeContainer()
    monkeypatch.setattr(blob, "container_client", lambda account, name: container)
    options = qwen.parse_args([*QWEN_BLOB, "--run-id", "r1", "--workers", "2"])
    assert qwen.upload_adapter(options.__dict__, "acct") == []  # a node without it
    output = tmp_path / "r1" / "output"
    (output / "checkpoint-500").mkdir(parents=True)
    for name in ("adapter_config.json", "adapter_model.safetensors", "tokenizer_config.json"):
        (output / name).write_text(name)
    (output / "trainer_log.jsonl").write_text("{}")
    uploaded = qwen.upload_adapter(options.__dict__, "acct")
    prefix = f"{ADAPTER_PREFIX}/{ADAPTER_NAME}"
    assert uploaded == [
        f"{prefix}/adapter_config.json",
        f"{prefix}/adapter_model.safetensors",
        f"{prefix}/tokenizer_config.json",
    ]
    assert container.blobs[f"{prefix}/adapter_config.json"] == b"adapter_config.json"


# --------------------------------------------------------------------------------------------
# vLLM batch
# --------------------------------------------------------------------------------------------


def test_vllm_processor_config_with_and_without_the_adapter() -> None:
    with_lora = vllm.processor_config(vllm.parse_args([*VLLM_BLOB, "--run-id", "r"]), "acct")
    assert with_lora["model_source"] == BASE_MODEL
    # The adapter in qwen-lora's team's container, where vllm-batch's team may only read.
    assert with_lora["dynamic_lora_loading_path"] == (
        "azure://team-a-data@acct.blob.core.windows.net/adapters/qwen-lora"
    )
    assert with_lora["engine_kwargs"]["enable_lora"] is True
    base = vllm.processor_config(
        vllm.parse_args([*VLLM_BLOB, "--run-id", "r", "--no-lora"]), "acct"
    )
    assert "dynamic_lora_loading_path" not in base
    assert "enable_lora" not in base["engine_kwargs"]
    # The batch job and the endpoint read the adapter from the same place.
    assert with_lora["dynamic_lora_loading_path"] == serve.adapter_uri("acct", "team-a-data")


def test_vllm_rows() -> None:
    request = vllm.preprocess(
        {"id": 7, "prompt": "hi"}, adapter=ADAPTER_NAME, max_tokens=16, temperature=0.0
    )
    assert request["messages"] == [{"role": "user", "content": "hi"}]
    assert request["model"] == ADAPTER_NAME
    assert request["sampling_params"] == {"max_tokens": 16, "temperature": 0.0}
    chat = vllm.preprocess(
        {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]},
        adapter=None,
        max_tokens=1,
        temperature=1.0,
    )
    assert "model" not in chat and chat["prompt_text"] == "u"
    with pytest.raises(ValueError, match="`prompt` or `messages`"):
        vllm.preprocess({"text": "x"}, adapter=None, max_tokens=1, temperature=1.0)
    out = vllm.postprocess({**request, "generated_text": "hello"})
    assert out == {"id": 7, "prompt": "hi", "response": "hello", "model": ADAPTER_NAME}


def test_vllm_layout_and_bad_arguments() -> None:
    options = vllm.parse_args([*VLLM_BLOB, "--run-id", "r9", "--output-prefix", "/out/"])
    assert options.output_path == "out/r9"
    with pytest.raises(SystemExit):
        vllm.parse_args([*VLLM_BLOB, "--run-id", "r", "--temperature", "3"])
    with pytest.raises(SystemExit):
        vllm.parse_args([*VLLM_BLOB, "--run-id", "r", "--lora", "--no-lora"])


# --------------------------------------------------------------------------------------------
# llm-serve
# --------------------------------------------------------------------------------------------


def test_llm_config_needs_an_account_only_for_the_adapter() -> None:
    base: dict[str, Any] = serve.llm_config(lora_adapter=False, storage_account=None)
    assert "lora_config" not in base
    with pytest.raises(ValueError, match="storage account"):
        serve.llm_config(lora_adapter=True, storage_account=None)


def test_batch_streams_the_staged_model_and_reads_its_tokenizer_from_blob() -> None:
    options = vllm.parse_args([*VLLM_BLOB, "--run-id", "r", "--model-blob-path", "/hf/org/m/main/"])
    config = vllm.processor_config(options, "acct")
    assert config["model_source"] == "az://models/hf/org/m/main"
    assert config["engine_kwargs"]["load_format"] == "runai_streamer"
    assert config["engine_kwargs"]["model_loader_extra_config"] == {"memory_limit": 8 * 2**30}
    tokenizer = "azure://models@acct.blob.core.windows.net/hf/org/m/main"
    for stage in ("chat_template_stage", "tokenize_stage", "detokenize_stage"):
        assert config[stage] == {"model_source": tokenizer}
    hub = vllm.processor_config(vllm.parse_args([*VLLM_BLOB, "--run-id", "r"]), "acct")
    assert hub["model_source"] == BASE_MODEL
    assert "load_format" not in hub["engine_kwargs"]
    assert "tokenize_stage" not in hub


def test_batch_engine_pool_autoscales_between_min_and_max_workers() -> None:
    fixed = vllm.parse_args(
        [*VLLM_BLOB, "--run-id", "r", "--min-workers", "2", "--max-workers", "2"]
    )
    assert vllm.processor_config(fixed, "a")["concurrency"] == 2
    elastic = vllm.parse_args(
        [*VLLM_BLOB, "--run-id", "r", "--min-workers", "1", "--max-workers", "4"]
    )
    assert vllm.processor_config(elastic, "a")["concurrency"] == (1, 4)
    with pytest.raises(ValueError, match="below --min-workers"):
        vllm.parse_args([*VLLM_BLOB, "--run-id", "r", "--min-workers", "3", "--max-workers", "2"])

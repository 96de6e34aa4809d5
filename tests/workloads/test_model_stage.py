"""model-stage's copy logic on a small local model folder and a fake container: once per model
and revision, resumable, never the Hub when the copy is complete. No network, no Azure SDK."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from workloads.common.layout import staged_model_path
from workloads.model_stage import main as stage

PREFIX = staged_model_path("org/tiny", "main")


@dataclass
class _Blob:
    name: str
    size: int


class _Download:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def readall(self) -> bytes:
        return self.data


class SizedContainer:
    """A container client over a dict whose listing has sizes, as Azure's BlobProperties do."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.uploads: list[str] = []

    def list_blobs(self, name_starts_with: str | None = None) -> Iterable[_Blob]:
        prefix = name_starts_with or ""
        return [_Blob(n, len(d)) for n, d in sorted(self.blobs.items()) if n.startswith(prefix)]

    def download_blob(self, blob: str) -> _Download:
        return _Download(self.blobs[blob])

    def upload_blob(self, name: str, data: bytes | IO[bytes], overwrite: bool = False) -> None:
        assert overwrite
        self.blobs[name] = data if isinstance(data, bytes) else data.read()
        self.uploads.append(name)


def tiny_model(root: Path) -> Path:
    """What a model snapshot holds: weights, config, tokenizer, and files nobody loads."""
    files = {
        "model-00001-of-00002.safetensors": b"\x01" * 64,
        "model-00002-of-00002.safetensors": b"\x02" * 32,
        "model.safetensors.index.json": b'{"weight_map": {}}',
        "config.json": b'{"architectures": ["Qwen2ForCausalLM"]}',
        "tokenizer.json": b"{}",
        "merges.txt": b"a b",
        "README.md": b"# tiny",
        "pytorch_model.bin": b"\x00" * 16,
        ".git/HEAD": b"ref",
    }
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _stage(source: stage.ModelSource | None, client: SizedContainer) -> stage.Staged:
    def origin() -> stage.ModelSource:
        if source is None:
            raise AssertionError("the source must not be asked when the copy is complete")
        return source

    return stage.stage(origin, client, model="org/tiny", revision="main", prefix=PREFIX)


def test_first_run_copies_weights_config_and_tokenizer_then_the_marker(tmp_path: Path) -> None:
    source = stage.DirectorySource(tiny_model(tmp_path), commit="abc123")
    client = SizedContainer()
    result = _stage(source, client)
    assert result.skipped is False
    assert result.copied == (
        "config.json",
        "merges.txt",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
        "tokenizer.json",
    )
    assert client.uploads[-1] == f"{PREFIX}/{stage.MARKER}"  # the marker comes last
    assert client.blobs[f"{PREFIX}/model-00001-of-00002.safetensors"] == b"\x01" * 64
    marker = json.loads(client.blobs[f"{PREFIX}/{stage.MARKER}"])
    assert marker["commit"] == "abc123"
    assert marker["files"]["model-00002-of-00002.safetensors"] == 32
    assert not any(n.endswith(("README.md", ".bin", "HEAD")) for n in client.blobs)


def test_a_complete_copy_is_skipped_without_asking_the_source(tmp_path: Path) -> None:
    client = SizedContainer()
    _stage(stage.DirectorySource(tiny_model(tmp_path)), client)
    client.uploads.clear()
    again = _stage(None, client)
    assert again == stage.Staged(PREFIX, (), skipped=True)
    assert client.uploads == []


def test_an_interrupted_copy_resumes_with_what_is_missing_or_short(tmp_path: Path) -> None:
    client = SizedContainer()
    source = stage.DirectorySource(tiny_model(tmp_path))
    _stage(source, client)
    del client.blobs[f"{PREFIX}/{stage.MARKER}"]
    del client.blobs[f"{PREFIX}/config.json"]
    client.blobs[f"{PREFIX}/model-00001-of-00002.safetensors"] = b"\x01" * 10  # cut short
    client.uploads.clear()
    result = _stage(source, client)
    assert result.copied == ("config.json", "model-00001-of-00002.safetensors")
    assert client.blobs[f"{PREFIX}/model-00001-of-00002.safetensors"] == b"\x01" * 64


def test_a_marker_whose_files_are_gone_is_not_complete(tmp_path: Path) -> None:
    client = SizedContainer()
    source = stage.DirectorySource(tiny_model(tmp_path))
    _stage(source, client)
    del client.blobs[f"{PREFIX}/tokenizer.json"]
    assert _stage(source, client).copied == ("tokenizer.json",)


def test_a_model_without_safetensors_cannot_be_streamed(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x00")
    with pytest.raises(RuntimeError, match="safetensors"):
        _stage(stage.DirectorySource(tmp_path), SizedContainer())


def test_the_command_line_names_the_blob_folder() -> None:
    options = stage.parse_args(["--run-id", "r1", "--revision", "v2.0", "--model", "org/tiny"])
    assert options.prefix == "hf/org/tiny/v2.0"
    with pytest.raises(SystemExit):
        stage.parse_args(["--run-id", "r1", "--revision", "../x"])


def test_wanted_keeps_only_what_vllm_loads() -> None:
    files: dict[str, Any] = {
        "a.safetensors": 1,
        "sub/tokenizer.model": 2,
        "chat_template.jinja": 3,
        "weights.pt": 4,
        ".cache/x.json": 5,
    }
    assert stage.wanted(files) == {
        "a.safetensors": 1,
        "chat_template.jinja": 3,
        "sub/tokenizer.model": 2,
    }

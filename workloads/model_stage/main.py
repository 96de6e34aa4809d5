"""Stage a Hugging Face model in Blob once, for streaming: the RayJob entrypoint of model-stage.

Copies the model's weights (`*.safetensors`) and the files vLLM and its tokenizer read (config,
tokenizer, chat template) to `models/hf/<model id>/<revision>/`, one file at a time (downloaded
to the head's disk, streamed to Blob, deleted), and writes `.aksray-staged.json` last. The copy is
keyed by model id and revision: a run that finds the marker, with every file it lists at its
size, copies nothing and never calls the Hub. A run that stopped half way copies only what is
missing or short. vllm-batch and llm-serve then stream the weights from there with the Run:ai
Model Streamer (`modelSource: blob`).

Blob access is the pod's workload identity (`DefaultAzureCredential`); the Hub token, when the
stack has one, is `HF_TOKEN`. No heavy import at module level: the staging logic is tested with a
local model folder and a fake container.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from workloads.common import blob, cli_types
from workloads.common.layout import BASE_MODEL, MODELS_CONTAINER, staged_model_path
from workloads.common.options import build_parser, option, parse_options

MARKER = ".aksray-staged.json"
# What vLLM (and the Run:ai Model Streamer) load: safetensors weights, config and tokenizer files.
FILE_PATTERNS = ("*.safetensors", "*.json", "*.model", "*.txt", "*.tiktoken", "*.jinja")
WEIGHTS_PATTERN = "*.safetensors"


@dataclass(frozen=True, kw_only=True)
class Options:
    run_id: str = option(type=cli_types.path_segment)
    model: str = option(BASE_MODEL)
    # A branch, tag or commit of the model repository; the Blob folder is named after it.
    revision: str = option("main", type=cli_types.path_segment)
    container: str = option(MODELS_CONTAINER)

    @property
    def prefix(self) -> str:
        return staged_model_path(self.model, self.revision)


def parser() -> argparse.ArgumentParser:
    return build_parser(Options, prog="model-stage", description=__doc__.splitlines()[0])


def parse_args(argv: Sequence[str] | None = None) -> Options:
    return parse_options(Options, parser(), argv)


class ModelSource(Protocol):
    """Where the model's files come from: the Hub, or a local model folder."""

    @property
    def commit(self) -> str: ...

    def files(self) -> Mapping[str, int]: ...  # relative name -> size in bytes

    def fetch(self, name: str) -> Path: ...  # a local copy of the file

    def release(self, path: Path) -> None: ...  # done with the local copy


@dataclass(frozen=True)
class DirectorySource:
    """A model folder on local disk (a snapshot already downloaded, or a test's tiny model)."""

    root: Path
    commit: str = "local"

    def files(self) -> dict[str, int]:
        return {
            p.relative_to(self.root).as_posix(): p.stat().st_size
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        }

    def fetch(self, name: str) -> Path:
        return self.root / name

    def release(self, path: Path) -> None:
        pass  # the folder is the caller's


class HubSource:
    """One revision of a Hugging Face model repository, resolved to its commit once."""

    def __init__(self, model: str, revision: str, workdir: Path, token: str | None) -> None:
        from huggingface_hub import HfApi

        info = HfApi(token=token).model_info(model, revision=revision, files_metadata=True)
        self.model, self.workdir, self.token = model, workdir, token
        self.commit = str(info.sha)
        self._files = {s.rfilename: int(s.size or 0) for s in info.siblings or []}

    def files(self) -> dict[str, int]:
        return dict(self._files)

    def fetch(self, name: str) -> Path:
        from huggingface_hub import hf_hub_download

        return Path(
            hf_hub_download(
                repo_id=self.model,
                filename=name,
                revision=self.commit,
                local_dir=self.workdir,
                token=self.token,
            )
        )

    def release(self, path: Path) -> None:
        path.unlink(missing_ok=True)


@dataclass(frozen=True)
class Staged:
    prefix: str
    copied: tuple[str, ...]
    skipped: bool  # the marker was there: nothing copied, the Hub not called


def wanted(files: Mapping[str, int]) -> dict[str, int]:
    """The files worth staging: weights, config and tokenizer files, no hidden folders."""
    keep = {}
    for name, size in files.items():
        path = PurePosixPath(name)
        if any(part.startswith(".") for part in path.parts) or ".." in path.parts:
            continue
        if any(fnmatch.fnmatch(path.name, pattern) for pattern in FILE_PATTERNS):
            keep[name] = size
    return dict(sorted(keep.items()))


def present(client: blob.ContainerClient, prefix: str) -> dict[str, int | None]:
    """What is already under `prefix/`: relative name -> size (None where the listing has none)."""
    base = blob.blob_path(prefix) + "/"
    found: dict[str, int | None] = {}
    for item in client.list_blobs(name_starts_with=base):
        name = str(getattr(item, "name", item))
        size = getattr(item, "size", None)
        found[name[len(base) :]] = None if size is None else int(size)
    return found


def read_marker(client: blob.ContainerClient, prefix: str) -> dict[str, Any] | None:
    if MARKER not in present(client, prefix):
        return None
    data = client.download_blob(blob.blob_path(prefix, MARKER)).readall()
    marker = json.loads(data)
    return marker if isinstance(marker, dict) else None


def is_complete(marker: Mapping[str, Any] | None, there: Mapping[str, int | None]) -> bool:
    """The marker lists files and every one of them is there at its size."""
    files = (marker or {}).get("files")
    if not isinstance(files, dict) or not files:
        return False
    return all(name in there and there[name] in (size, None) for name, size in files.items())


def stage(
    source: Callable[[], ModelSource],
    client: blob.ContainerClient,
    *,
    model: str,
    revision: str,
    prefix: str,
) -> Staged:
    """Copy what is missing; `source` is called only when something must be copied."""
    if is_complete(read_marker(client, prefix), present(client, prefix)):
        return Staged(prefix, (), skipped=True)
    origin = source()
    files = wanted(origin.files())
    if not any(fnmatch.fnmatch(PurePosixPath(n).name, WEIGHTS_PATTERN) for n in files):
        raise RuntimeError(
            f"{model}@{revision} has no {WEIGHTS_PATTERN} weights: the model streamer loads "
            "only safetensors"
        )
    there = present(client, prefix)
    copied = []
    for name, size in files.items():
        if there.get(name) == size:
            continue
        local = origin.fetch(name)
        with local.open("rb") as data:
            client.upload_blob(blob.blob_path(prefix, name), data, overwrite=True)
        origin.release(local)
        copied.append(name)
    marker = {"model": model, "revision": revision, "commit": origin.commit, "files": files}
    blob.upload_bytes(client, blob.blob_path(prefix, MARKER), json.dumps(marker).encode())
    return Staged(prefix, tuple(copied), skipped=False)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    account = blob.storage_account()
    client = blob.container_client(account, options.container)
    token = os.environ.get("HF_TOKEN") or None
    with tempfile.TemporaryDirectory(prefix="model-stage-") as workdir:
        result = stage(
            lambda: HubSource(options.model, options.revision, Path(workdir), token),
            client,
            model=options.model,
            revision=options.revision,
            prefix=options.prefix,
        )
    where = f"{options.container}/{result.prefix}/"
    if result.skipped:
        print(f"already staged: {where} (nothing copied)")
    else:
        print(f"staged {len(result.copied)} file(s) to {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Blob Storage for the payloads: path layout and transfers, authenticated by workload identity.

Pods get the storage account name in `AZURE_STORAGE_ACCOUNT`; the identity comes from the pod's
service account (`azure.workload.identity/use: "true"`), which `DefaultAzureCredential` picks up
through the token file the workload identity webhook mounts. There is no key or connection
string anywhere.

Path helpers are pure. Transfers take a container client (anything with the three methods of
`azure.storage.blob.ContainerClient` used here), so tests pass a fake; the Azure SDK is imported
only when a real client is made.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import IO, Any, Protocol

ACCOUNT_ENV = "AZURE_STORAGE_ACCOUNT"


class ContainerClient(Protocol):
    def list_blobs(self, name_starts_with: str | None = None) -> Iterable[Any]: ...

    def download_blob(self, blob: str) -> Any: ...

    def upload_blob(self, name: str, data: bytes | IO[bytes], overwrite: bool = ...) -> Any: ...


def storage_account(env: Mapping[str, str] | None = None) -> str:
    """The storage account the platform gave this pod."""
    value = (os.environ if env is None else env).get(ACCOUNT_ENV, "")
    if not value:
        raise RuntimeError(
            f"{ACCOUNT_ENV} is not set: the pod has no Blob storage account "
            "(is storage enabled in the stack?)"
        )
    return value


def account_url(account: str) -> str:
    return f"https://{account}.blob.core.windows.net"


def blob_path(*parts: str) -> str:
    """Join path parts into a blob name: no leading, trailing or doubled slashes."""
    cleaned = [p.strip("/") for p in parts if p and p.strip("/")]
    path = "/".join(cleaned)
    if any(segment in ("", ".", "..") for segment in path.split("/")) and path:
        raise ValueError(f"invalid blob path {path!r}")
    return path


def blob_uri(account: str, container: str, path: str = "") -> str:
    """`azure://<container>@<account>.blob.core.windows.net/<path>`, as Ray LLM reads it."""
    suffix = f"/{blob_path(path)}" if blob_path(path) else ""
    return f"azure://{container}@{account}.blob.core.windows.net{suffix}"


def streamer_uri(container: str, path: str = "") -> str:
    """`az://<container>/<path>`, as the Run:ai Model Streamer (and vLLM) read Blob Storage.

    The account is not in the URI: the streamer reads it from `AZURE_STORAGE_ACCOUNT_NAME`."""
    suffix = f"/{blob_path(path)}" if blob_path(path) else ""
    return f"az://{container}{suffix}"


def container_client(account: str, container: str) -> ContainerClient:
    """A real container client with `DefaultAzureCredential` (workload identity in the pod)."""
    from azure.identity import DefaultAzureCredential
    from azure.storage.blob import ContainerClient as AzureContainerClient

    client: ContainerClient = AzureContainerClient(
        account_url(account), container, credential=DefaultAzureCredential()
    )
    return client


def list_names(client: ContainerClient, prefix: str, suffix: str = "") -> list[str]:
    """Blob names under `prefix/` ending with `suffix`, sorted."""
    start = blob_path(prefix) + "/" if blob_path(prefix) else None
    names = (getattr(item, "name", item) for item in client.list_blobs(name_starts_with=start))
    return sorted(str(name) for name in names if str(name).endswith(suffix))


def download_prefix(
    client: ContainerClient, prefix: str, destination: Path, suffix: str = ""
) -> list[Path]:
    """Download every blob under `prefix/` into `destination`, keeping relative paths."""
    base = blob_path(prefix)
    files: list[Path] = []
    for name in list_names(client, prefix, suffix):
        relative = PurePosixPath(name[len(base) :].lstrip("/") if base else name)
        if ".." in relative.parts:
            raise ValueError(f"blob {name!r} escapes {destination}")
        target = destination.joinpath(*relative.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(client.download_blob(name).readall())
        files.append(target)
    return files


def upload_directory(client: ContainerClient, source: Path, prefix: str) -> list[str]:
    """Upload every file below `source` to `prefix/<relative path>`; returns the blob names."""
    names: list[str] = []
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        name = blob_path(prefix, path.relative_to(source).as_posix())
        client.upload_blob(name, path.read_bytes(), overwrite=True)
        names.append(name)
    return names


def upload_bytes(client: ContainerClient, name: str, data: bytes) -> str:
    name = blob_path(name)
    client.upload_blob(name, data, overwrite=True)
    return name

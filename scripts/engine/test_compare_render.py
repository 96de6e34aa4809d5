"""Tests for compare_render.py (run: python -m pytest scripts/engine/test_compare_render.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, os.path.dirname(__file__))
import compare_render

CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cfg", "namespace": "team-a", "labels": {"team": "a"}},
    "data": {"url": "https://acct.blob.core.windows.net/x", "n": "1"},
}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}


def write(path: Path, *docs: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs))


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = compare_render.main(["--pulumi", str(tmp_path / "p"), "--aksray", str(tmp_path / "a")])
    out = capsys.readouterr()
    return rc, out.out + out.err


def provider_side(tmp_path: Path, configmap: dict[str, Any] = CONFIGMAP) -> None:
    # The provider's layout: 1-manifest/<apiVersion>-<kind>-<namespace>-<name>.yaml, and it may add
    # pulumi.com/* metadata.
    cm = yaml.safe_load(yaml.safe_dump(configmap))
    cm["metadata"].setdefault("annotations", {})["pulumi.com/patchForce"] = "true"
    cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "pulumi"
    write(tmp_path / "p/1-manifest/v1-configmap-team-a-cfg.yaml", cm)
    write(tmp_path / "p/1-manifest/v1-namespace-default-team-a.yaml", NAMESPACE)


def test_identical_after_normalising_engine_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider_side(tmp_path)
    write(tmp_path / "a/kubernetes/ConfigMap-team-a-cfg.yaml", CONFIGMAP)
    write(tmp_path / "a/kubernetes/Namespace-team-a.yaml", NAMESPACE)
    rc, out = run(tmp_path, capsys)
    assert rc == 0, out
    assert "2 object(s) identical" in out


def test_placeholder_matches_the_deployed_value_only_with_the_same_text_around_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider_side(tmp_path)
    cm = yaml.safe_load(yaml.safe_dump(CONFIGMAP))
    cm["data"]["url"] = "https://<unknown until deploy: storage account>.blob.core.windows.net/x"
    write(tmp_path / "a/kubernetes/ConfigMap-team-a-cfg.yaml", cm)
    write(tmp_path / "a/kubernetes/Namespace-team-a.yaml", NAMESPACE)
    rc, out = run(tmp_path, capsys)
    assert rc == 0, out
    assert "1 placeholder value(s) matched" in out

    cm["data"]["url"] = "http://<unknown until deploy: storage account>.blob.core.windows.net/x"
    write(tmp_path / "a/kubernetes/ConfigMap-team-a-cfg.yaml", cm)
    rc, out = run(tmp_path, capsys)
    assert rc == 1
    assert "ConfigMap team-a/cfg (v1): data.url:" in out


def test_reports_each_difference_with_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider_side(tmp_path)
    cm = yaml.safe_load(yaml.safe_dump(CONFIGMAP))
    cm["data"]["n"] = "2"
    cm["metadata"]["labels"]["extra"] = "x"
    write(tmp_path / "a/kubernetes/ConfigMap-team-a-cfg.yaml", cm)
    write(
        tmp_path / "a/kubernetes/Queue-q.yaml",
        {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "q"}},
    )
    rc, out = run(tmp_path, capsys)
    assert rc == 1
    assert "ConfigMap team-a/cfg (v1): data.n: aksray '2' != provider '1'" in out
    assert "ConfigMap team-a/cfg (v1): metadata.labels.extra: only in aksray render: x" in out
    assert "Queue q (scheduling.run.ai/v2): only in aksray render (Queue-q.yaml)" in out
    assert "Namespace team-a (v1): only in provider render" in out


def test_aksray_file_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    provider_side(tmp_path)
    write(tmp_path / "a/kubernetes/ConfigMap-team-a-cfg.yaml", CONFIGMAP, NAMESPACE)
    rc, out = run(tmp_path, capsys)
    assert rc == 1
    assert "holds 2 objects, the contract is one per file" in out

    (tmp_path / "a/kubernetes/ConfigMap-team-a-cfg.yaml").unlink()
    write(tmp_path / "a/kubernetes/configmap-cfg.yaml", CONFIGMAP)
    write(tmp_path / "a/kubernetes/Namespace-team-a.yaml", NAMESPACE)
    rc, out = run(tmp_path, capsys)
    assert rc == 1
    assert "the contract names it ConfigMap-team-a-cfg.yaml" in out


def test_empty_sides_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "a/kubernetes").mkdir(parents=True)
    rc, out = run(tmp_path, capsys)
    assert rc == 1
    assert "nothing was compared" in out


def test_missing_directory_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    rc, out = run(tmp_path, capsys)
    assert rc == 2
    assert "--pulumi" in out

#!/usr/bin/env python3
"""Compare what the real Kubernetes provider rendered with what `aksray render` wrote.

    compare_render.py --pulumi DIR --aksray DIR [--placeholder-regex RE] [--ignore-key-prefix P ...]

--pulumi: the provider's `renderYamlToDirectory` folder (any layout; every *.yaml / *.yml below it,
          every YAML document in each file, is one object).
--aksray: the `aksray render --out` folder (its `kubernetes/` subfolder is read when present).
          Contract: one object per file, named `<kind>-<namespace>-<name>.yaml`, cluster-scoped
          objects without the namespace part.

Objects are matched by (apiVersion, kind, namespace, name). Before comparing, both sides are
normalised: metadata labels/annotations whose key starts with an ignored prefix (default
`pulumi.com/`) are dropped, as is the `app.kubernetes.io/managed-by: pulumi` label, and empty
labels/annotations maps disappear. A string on the aksray side that contains a placeholder for a
value unknown until deploy (default: `<unknown until deploy: ...>`) matches any string on the
provider side with the same text around it.

Exit 0 when both sides hold the same objects with the same content, 1 with a precise diff
(one line per difference, each naming the object and the field path) otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

DEFAULT_PLACEHOLDER = r"<unknown until deploy: [^>]*>"
DEFAULT_IGNORED_PREFIXES = ("pulumi.com/",)
MANAGED_BY = ("app.kubernetes.io/managed-by", "pulumi")

Key = tuple[str, str, str, str]  # apiVersion, kind, namespace ("" when cluster-scoped), name


class InputError(Exception):
    pass


@dataclass(frozen=True)
class Loaded:
    path: str
    obj: dict[str, Any]


def key_of(obj: dict[str, Any], where: str) -> Key:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise InputError(f"{where}: object without metadata.name")
    if not obj.get("apiVersion") or not obj.get("kind"):
        raise InputError(f"{where}: object without apiVersion/kind")
    return (
        str(obj["apiVersion"]),
        str(obj["kind"]),
        str(meta.get("namespace") or ""),
        str(meta["name"]),
    )


def show(key: Key) -> str:
    api, kind, ns, name = key
    return f"{kind} {ns}/{name} ({api})" if ns else f"{kind} {name} ({api})"


def yaml_files(root: str) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith((".yaml", ".yml")):
                yield os.path.join(dirpath, fn)


def load_documents(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
    except yaml.YAMLError as e:
        raise InputError(f"{path}: not valid YAML: {e}") from e
    for d in docs:
        if not isinstance(d, dict):
            raise InputError(f"{path}: a document is not a mapping")
    return docs


def load_dir(root: str, side: str) -> dict[Key, Loaded]:
    out: dict[Key, Loaded] = {}
    for path in yaml_files(root):
        for doc in load_documents(path):
            # A List kind (kubectl style) holds its objects in `items`.
            objs = doc.get("items", []) if doc.get("kind") == "List" else [doc]
            for obj in objs:
                k = key_of(obj, path)
                if k in out:
                    raise InputError(f"{side}: {show(k)} appears twice: {out[k].path} and {path}")
                out[k] = Loaded(path, obj)
    return out


def contract_problems(root: str, objects: dict[Key, Loaded]) -> list[str]:
    """The aksray side's file contract: one object per file, `<kind>-<namespace>-<name>.yaml`."""
    problems = []
    per_file: dict[str, list[Key]] = {}
    for k, loaded in objects.items():
        per_file.setdefault(loaded.path, []).append(k)
    for path, keys in sorted(per_file.items()):
        rel = os.path.relpath(path, root)
        if len(keys) != 1:
            problems.append(
                f"aksray: {rel}: holds {len(keys)} objects, the contract is one per file"
            )
            continue
        _, kind, ns, name = keys[0]
        want = f"{kind}-{ns}-{name}" if ns else f"{kind}-{name}"
        stem = os.path.splitext(os.path.basename(path))[0]
        if stem.lower() != want.lower():
            problems.append(
                f"aksray: {rel}: holds {show(keys[0])}; the contract names it {want}.yaml"
            )
    return problems


def normalise(obj: Any, ignored_prefixes: tuple[str, ...]) -> Any:
    """A copy of a Kubernetes object without the metadata the engine adds."""
    if not isinstance(obj, dict):
        return obj
    obj = dict(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta = dict(meta)
        for field in ("labels", "annotations"):
            values = meta.get(field)
            if isinstance(values, dict):
                kept = {
                    k: v
                    for k, v in values.items()
                    if not str(k).startswith(ignored_prefixes)
                    and not (field == "labels" and (k, v) == MANAGED_BY)
                }
                if kept:
                    meta[field] = kept
                else:
                    meta.pop(field)
            elif values is None and field in meta:
                meta.pop(field)
        obj["metadata"] = meta
    return obj


class Differ:
    def __init__(self, placeholder: re.Pattern[str]):
        self.placeholder = placeholder
        self.lines: list[str] = []
        self.placeholders_matched = 0

    def leaf_matches(self, want: Any, got: Any) -> bool:
        if isinstance(want, str) and self.placeholder.search(want):
            if not isinstance(got, str):
                return False
            parts = self.placeholder.split(want)
            pattern = "(?s:.*)".join(re.escape(p) for p in parts)
            if re.fullmatch(pattern, got):
                self.placeholders_matched += 1
                return True
            return False
        return bool(want == got)

    def diff(self, where: str, path: str, want: Any, got: Any) -> None:
        """want: aksray side; got: provider side."""
        if isinstance(want, dict) and isinstance(got, dict):
            for k in sorted(set(want) | set(got), key=str):
                sub = f"{path}.{k}" if path else str(k)
                if k not in got:
                    self.lines.append(f"{where}: {sub}: only in aksray render: {brief(want[k])}")
                elif k not in want:
                    self.lines.append(f"{where}: {sub}: only in provider render: {brief(got[k])}")
                else:
                    self.diff(where, sub, want[k], got[k])
            return
        if isinstance(want, list) and isinstance(got, list):
            if len(want) != len(got):
                self.lines.append(
                    f"{where}: {path}: list length differs: aksray {len(want)}, provider {len(got)}"
                    f" (aksray {brief(want)}; provider {brief(got)})"
                )
                return
            for i, (w, g) in enumerate(zip(want, got, strict=True)):
                self.diff(where, f"{path}[{i}]", w, g)
            return
        if not self.leaf_matches(want, got):
            self.lines.append(
                f"{where}: {path or '(object)'}: aksray {brief(want)} != provider {brief(got)}"
            )


def brief(value: Any, limit: int = 160) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    if text.endswith("\n..."):
        text = text[: -len("\n...")]
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pulumi", required=True, help="the provider's renderYamlToDirectory folder")
    ap.add_argument(
        "--aksray", required=True, help="the `aksray render --out` folder (or its kubernetes/)"
    )
    ap.add_argument(
        "--placeholder-regex",
        default=DEFAULT_PLACEHOLDER,
        help=f"a value unknown until deploy, on the aksray side (default {DEFAULT_PLACEHOLDER!r})",
    )
    ap.add_argument(
        "--ignore-key-prefix",
        action="append",
        default=None,
        help="label/annotation key prefix the engine adds (repeatable; default pulumi.com/)",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    prefixes = tuple(args.ignore_key_prefix or DEFAULT_IGNORED_PREFIXES)
    aksray_dir = args.aksray
    if os.path.isdir(os.path.join(aksray_dir, "kubernetes")):
        aksray_dir = os.path.join(aksray_dir, "kubernetes")
    try:
        for d, what in ((args.pulumi, "--pulumi"), (aksray_dir, "--aksray")):
            if not os.path.isdir(d):
                raise InputError(f"{what}: {d} is not a directory")
        got = load_dir(args.pulumi, "provider")
        want = load_dir(aksray_dir, "aksray")
    except InputError as e:
        print(f"compare_render: error: {e}", file=sys.stderr)
        return 2

    differ = Differ(re.compile(args.placeholder_regex))
    problems = contract_problems(aksray_dir, want)
    for k in sorted(set(want) - set(got)):
        problems.append(
            f"{show(k)}: only in aksray render ({os.path.relpath(want[k].path, aksray_dir)})"
        )
    for k in sorted(set(got) - set(want)):
        problems.append(
            f"{show(k)}: only in provider render ({os.path.relpath(got[k].path, args.pulumi)})"
        )
    for k in sorted(set(want) & set(got)):
        differ.diff(show(k), "", normalise(want[k].obj, prefixes), normalise(got[k].obj, prefixes))
    problems += differ.lines

    return _report(problems, want, got, differ)


def _report(problems: list[str], want: dict[Any, Any], got: dict[Any, Any], differ: Differ) -> int:
    common = len(set(want) & set(got))
    if problems:
        for line in problems:
            print(line)
        print(
            f"compare_render: {len(problems)} difference(s); {common} object(s) on both sides, "
            f"{len(want)} in aksray render, {len(got)} in provider render"
        )
        return 1
    if not want:
        print("compare_render: both sides are empty: nothing was compared", file=sys.stderr)
        return 1
    print(
        f"compare_render: {common} object(s) identical "
        f"({differ.placeholders_matched} placeholder value(s) matched deployed values)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

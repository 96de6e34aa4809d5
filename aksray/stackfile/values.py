"""The values of a composed stack-file YAML graph, as the Pulumi CLI reads them.

The CLI's YAML library (Go's gopkg.in/yaml.v3) reads YAML 1.2 with a few habits of its own,
and `pulumi up` must see the same stack as `aksray plan`:

- merge keys (`<<: *shared`, or a list of them) copy in the keys a map does not set itself
  (of a list, the first map that has a key gives it);
- a tag changes a scalar only as far as the core schema goes (`!!str 10` is text, `!!int "12"`
  a number, `!!binary` the text it encodes); a map or list keeps its shape whatever its tag (a
  `!!set` is a map of nulls, an `!!omap` a list of maps); any other tag (`!thing x`) leaves the
  text;
- keys of maps inside a setting arrive as text (`1` as "1", `~` as "<nil>").

The graph was checked by aksray/stackfile/bounded_yaml.py (bounded, no cycles, no duplicate keys)
first.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any, Final

import yaml

from aksray.stackfile.scalars import (
    INT64_MAX,
    ScalarError,
    Timestamp,
    as_passed,
    number_text,
    plain_scalar,
    timestamp,
)
from catalog.project import PROJECT
from settings.errors import shown

# What the composer is told a node's tag is when the file gives none
# (aksray/stackfile/bounded_yaml.py):
# a plain scalar, a quoted or block one, one tagged only `!`, and a map or list.
PLAIN: Final = "tag:aksray:plain"
QUOTED: Final = "tag:aksray:quoted"
BANG: Final = "tag:aksray:bang"
COLLECTION: Final = "tag:aksray:collection"
MERGE_KEY: Final = "<<"
_CORE: Final = "tag:yaml.org,2002:"


class NodeError(Exception):
    """A value the CLI refuses to read, at `node`."""

    def __init__(self, node: yaml.Node, message: str, path: str = "") -> None:
        super().__init__(message)
        self.node = node
        self.message = message
        self.path = path  # the config path, once known


def is_merge_key(node: yaml.Node) -> bool:
    """`<<`, plain or quoted, untagged (the CLI merges both)."""
    return (
        isinstance(node, yaml.ScalarNode)
        and node.value == MERGE_KEY
        and node.tag in (PLAIN, QUOTED, BANG, _CORE + "merge")
    )


# The document, its `config:` map, and a setting's own value are not inside a setting.
_SETTING_DEPTH: Final = 2


def document_value(root: yaml.Node) -> Any:
    """The whole document, built once per node (an alias shares its value).

    Raises NodeError, with the config path of the value at fault, for what the CLI refuses."""
    return _Builder().value(root, 0, "")


class _Builder:
    def __init__(self) -> None:
        self.built: dict[tuple[int, bool], Any] = {}

    def value(self, node: yaml.Node, depth: int, path: str) -> Any:
        key = (id(node), depth > _SETTING_DEPTH)
        if key not in self.built:
            self.built[key] = self._build(node, depth, path)
        return self.built[key]

    def _build(self, node: yaml.Node, depth: int, path: str) -> Any:
        if isinstance(node, yaml.SequenceNode):
            return [
                self.value(child, depth + 1, f"{path}[{index}]")
                for index, child in enumerate(node.value)
            ]
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, depth, path)
        assert isinstance(node, yaml.ScalarNode)
        try:
            return scalar_value(node, nested=depth > _SETTING_DEPTH)
        except NodeError as exc:
            exc.path = path
            raise

    def _mapping(self, node: yaml.MappingNode, depth: int, path: str) -> dict[Any, Any]:
        own: dict[Any, Any] = {}
        merged: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if is_merge_key(key_node):
                merged = self._merged(value_node, depth, path)
                continue
            key = self.value(key_node, depth + 1, path)
            if depth >= _SETTING_DEPTH:
                key = key_text(key)
            own[key] = self.value(value_node, depth + 1, _child_path(path, depth, key))
        return {**merged, **own} if merged else own

    def _merged(self, node: yaml.Node, depth: int, path: str) -> dict[Any, Any]:
        sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
        merged: dict[Any, Any] = {}
        for source in reversed(sources):  # the first map listed wins
            if not isinstance(source, yaml.MappingNode):
                raise NodeError(
                    source, "a merge key (<<) takes a map or a list of maps (`<<: *name`)", path
                )
            merged.update(self.value(source, depth, path))
        return merged


def _child_path(path: str, depth: int, key: Any) -> str:
    """The config path of a map's entry: a setting is named without the project prefix."""
    if depth == 0:
        return ""  # `config:` (or another top-level key of the file)
    if depth == 1:
        return str(key).removeprefix(f"{PROJECT}:")
    return f"{path}.{key}"


def key_text(key: Any) -> str:
    """A key inside a setting as the program receives it (Go prints the value)."""
    if isinstance(key, str):
        return key
    if key is None:
        return "<nil>"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        return number_text(key) if isinstance(key, int) else _float_key(key)
    return str(key)


def _float_key(value: float) -> str:
    if value.is_integer() and abs(value) < 1e21:
        return number_text(value)
    text = repr(value)
    return text.replace("e-0", "e-").replace("e+0", "e+") if "e" in text else text


def scalar_value(node: yaml.ScalarNode, *, nested: bool) -> Any:
    """A scalar as the program receives it; `nested`: inside a map or list of a setting."""
    tag, text = node.tag, node.value
    if tag == PLAIN or (tag == BANG and node.style is None):
        return _passed(node, plain_scalar(text), nested)
    if tag in (QUOTED, BANG, _CORE + "str"):
        return text
    if tag == _CORE + "binary":
        return _binary_text(node)
    check = _CORE_TAGS.get(tag)
    if check is None:
        return text  # a tag the CLI does not know: the text stays
    read = plain_scalar(text) if text else None
    if isinstance(read, Timestamp) and tag != _CORE + "timestamp":
        read = text  # only an untagged or !!timestamp value is read as a time
    if tag == _CORE + "timestamp" and not isinstance(read, Timestamp):
        read = timestamp(text) or read
    if tag == _CORE + "float" and isinstance(read, int) and not isinstance(read, bool):
        read = float(read)
    if not check(read):
        name = tag.removeprefix(_CORE)
        raise NodeError(
            node,
            f"{shown(text)!r} cannot be read as !!{name}, so the Pulumi CLI refuses the file; "
            "remove the tag or fix the value",
        )
    return _passed(node, read, nested)


_CORE_TAGS: Final[dict[str, Callable[[Any], bool]]] = {
    _CORE + "null": lambda v: v is None,
    _CORE + "bool": lambda v: isinstance(v, bool),
    _CORE + "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    _CORE + "float": lambda v: isinstance(v, float),
    _CORE + "timestamp": lambda v: isinstance(v, Timestamp),
}


def _passed(node: yaml.Node, value: Any, nested: bool) -> Any:
    if isinstance(value, Timestamp):
        return value.text
    if isinstance(value, int) and not isinstance(value, bool) and value > INT64_MAX and nested:
        value = float(value)  # beyond int64 inside a setting: a float on the way through JSON
    if isinstance(value, float):
        try:
            return as_passed(value)
        except ScalarError as exc:
            raise NodeError(node, str(exc)) from None
    return value


def _binary_text(node: yaml.Node) -> str:
    encoded = "".join(node.value.split())
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise NodeError(
            node, "a !!binary value that is not base64; write the setting as plain text"
        ) from None
    # The CLI hands the bytes over as text; bytes that are not UTF-8 arrive as U+FFFD.
    return data.decode("utf-8", errors="replace")

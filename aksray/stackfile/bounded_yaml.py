"""The YAML of a stack file, read with bounds: size, encoding, nesting and alias expansion.

A stack file is a few kilobytes of plain text; even one with thousands of teams is a few
megabytes. Whatever else arrives (binary data, UTF-16, an alias bomb that a few hundred bytes
expand to billions of values, nesting that exhausts the interpreter's stack) is refused with one
line before anything is built from it, so reading takes time and memory in proportion to the
file's size.
"""

from __future__ import annotations

import codecs
from typing import Any, Final

import yaml

from aksray.stackfile.values import BANG, COLLECTION, PLAIN, QUOTED, NodeError, document_value
from settings.errors import bounded, shown

# A stack file never needs more: the largest legitimate one we plan (thousands of teams) is
# about 5 MB.
MAX_STACK_FILE_BYTES: Final = 8 * 1024 * 1024
# The deepest a stack file goes is about nine levels (config, scheduling, departments, teams,
# quota, flavor, resource); anything far deeper is a mistake or an attack.
MAX_NESTING: Final = 32
# Aliases may repeat a value, but the document they expand to may hold at most one value per
# byte of the file plus this many: without aliases every value takes at least a byte.
ALIAS_ALLOWANCE: Final = 10_000

_UNICODE_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
_FIX_ENCODING: Final = "save it as UTF-8 (the Pulumi CLI reads only UTF-8)"

# libyaml's parser and composer when PyYAML has them (about ten times faster on large stack
# files), the pure-Python ones otherwise. Only the composed node graph is used: the values are
# built by aksray/stackfile/values.py, the way the Pulumi CLI reads them.
_BASE_LOADER: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


class StackFileError(Exception):
    """The stack file cannot be read as Pulumi configuration. `path` names the culprit."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(bounded(f"{path}: {message}"))
        self.path = path
        self.message = message


class _UntaggedResolver:
    """Marks each untagged node with what the CLI's reading depends on: plain, quoted or
    `!`-tagged scalar, or a map or list (whose tag never matters)."""

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is not yaml.ScalarNode:
            return COLLECTION
        if implicit[0]:
            return PLAIN
        return QUOTED if implicit[1] else BANG


class _StackComposer(_UntaggedResolver, _BASE_LOADER):  # type: ignore[misc]
    pass


class _RedefiningComposer(_UntaggedResolver, yaml.BaseLoader):
    """The pure-Python composer, letting an anchor be defined again (YAML 1.2 and the CLI do:
    an alias refers to the latest definition before it). libyaml's refuses, so a file that
    redefines an anchor is composed again by this one."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if not isinstance(event, yaml.AliasEvent) and event.anchor is not None:
            self.anchors.pop(event.anchor, None)
        return super().compose_node(parent, index)


def decode_stack_text(data: bytes, name: str) -> str:
    """The file's text: UTF-8 (a UTF-8 byte order mark is allowed), nothing else."""
    if len(data) > MAX_STACK_FILE_BYTES:
        raise StackFileError(
            name,
            f"is {len(data):,} bytes, more than a stack file needs (at most "
            f"{MAX_STACK_FILE_BYTES:,}); is this the right file?",
        )
    for bom, encoding in _UNICODE_BOMS:
        if data.startswith(bom):
            raise StackFileError(name, f"is {encoding} text; {_FIX_ENCODING}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise StackFileError(
            name,
            f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}); {_FIX_ENCODING}",
        ) from None


def _check_graph(root: yaml.Node, name: str, budget: int) -> None:
    """Refuse deep nesting, an alias that contains itself, an expansion beyond `budget`, and
    the keys the CLI refuses (a key given twice, a map or list as a key).

    Walks the composed graph once per distinct node (an alias is the same node object), without
    recursion, counting the values each node expands to.
    """
    expanded: dict[int, int] = {}  # id(node) -> values it expands to, once finished
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            expanded[key] = 1 + sum(expanded[id(child)] for child in _children(node))
            if expanded[key] > budget:
                raise StackFileError(
                    name,
                    f"its aliases (*name) expand to more than {budget:,} values, far more than "
                    "the file holds; write the repeated values out",
                )
            continue
        if key in expanded:
            continue
        if key in open_nodes:
            raise StackFileError(
                name, _at(node, "an alias (*name) refers to a value containing it")
            )
        if depth > MAX_NESTING:
            raise StackFileError(
                name, _at(node, f"nests deeper than {MAX_NESTING} levels; flatten it")
            )
        if isinstance(node, yaml.MappingNode):
            _check_keys(node, name)
        open_nodes.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))


def _check_keys(node: yaml.MappingNode, name: str) -> None:
    """A key given twice (as written: `1` and `01` are two keys to the CLI too), or a key that
    is a map or list."""
    seen: dict[str, yaml.Node] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise StackFileError(
                name, _at(key_node, "a key must be a plain value, not a map or list")
            )
        first = seen.setdefault(key_node.value, key_node)
        if first is not key_node:
            raise StackFileError(
                name,
                _at(
                    key_node,
                    f"the key {shown(key_node.value)!r} is given twice (first at line "
                    f"{first.start_mark.line + 1}); keep one",
                ),
            )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _at(node: yaml.Node, message: str) -> str:
    mark = node.start_mark
    return f"at line {mark.line + 1}, column {mark.column + 1}: {message}"


def load_stack_yaml(data: bytes, name: str) -> Any:
    """The YAML document of a stack file, read within the bounds above, as the CLI reads it."""
    text = decode_stack_text(data, name)
    root = _compose(text, name)
    if root is None:
        return None
    _check_graph(root, name, len(data) + ALIAS_ALLOWANCE)
    try:
        return document_value(root)
    except NodeError as exc:
        mark = exc.node.start_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})"
        if exc.path:
            raise StackFileError(exc.path, f"{exc.message}{where}") from None
        raise StackFileError(name, _at(exc.node, exc.message)) from None


def _compose(text: str, name: str) -> yaml.Node | None:
    try:
        try:
            return _compose_with(_StackComposer, text)
        except yaml.composer.ComposerError as exc:
            if not str(exc.context).startswith("found duplicate anchor"):
                raise
            return _compose_with(_RedefiningComposer, text)
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise StackFileError(
            name,
            f"holds a control character (0x{exc.character:02x}) at line {line}, which YAML does "
            "not allow; delete it (write \\t, \\n in a double-quoted string)",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise StackFileError(
            name, f"is not valid YAML{where}: {shown(problem)}; fix the syntax"
        ) from None


def _compose_with(composer: Any, text: str) -> yaml.Node | None:
    loader = composer(text)
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()

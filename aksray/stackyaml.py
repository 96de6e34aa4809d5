"""The YAML of a stack file, read with bounds: size, encoding, nesting and alias expansion.

A stack file is a few kilobytes of plain text; even one with thousands of teams is a few
megabytes. Whatever else arrives (binary data, UTF-16, an alias bomb that a few hundred bytes
expand to billions of values, nesting that exhausts the interpreter's stack) is refused with one
line before anything is built from it, so reading takes time and memory in proportion to the
file's size.
"""

from __future__ import annotations

import codecs
import re
from typing import Any, Final

import yaml

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

# libyaml's safe loader when PyYAML has it (about ten times faster on large stack files), the
# pure-Python one otherwise: both build plain data only.
_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StackFileError(Exception):
    """The stack file cannot be read as Pulumi configuration. `path` names the culprit."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class StackYamlLoader(_BASE_LOADER):  # type: ignore[misc]
    """Reads a stack file the way the Pulumi CLI does: YAML 1.2's core schema, not PyYAML's 1.1.

    Only true/false are booleans (`yes`, `on` stay strings), numbers have no base-60 forms
    (`22:30` stays a string), a date stays text, and a key given twice is an error.
    """

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool | None):
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    "a key must be a plain value, not a map or list",
                    key_node.start_mark,
                )
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping

    def construct_decimal_int(self, node: Any) -> int | str:
        # YAML 1.2: a leading zero is still decimal (1.1 read `010` as octal 8).
        text = str(self.construct_scalar(node)).replace("_", "")
        if len(text) > 100:  # no setting is that large; Python refuses to read such ints fast
            return text
        return int(text, 16) if text.lower().startswith("0x") else int(text, 10)

    def construct_timestamp_text(self, node: Any) -> str:
        # The Pulumi CLI hands an unquoted date over as Go prints it.
        text = str(self.construct_scalar(node))
        return f"{text} 00:00:00 +0000 UTC" if _DATE.match(text) else text


_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
StackYamlLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("timestamp", r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?$", "0123456789"),
):
    StackYamlLoader.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first)
    )
StackYamlLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", StackYamlLoader.construct_timestamp_text
)
StackYamlLoader.add_constructor("tag:yaml.org,2002:int", StackYamlLoader.construct_decimal_int)


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


def _check_bounds(root: yaml.Node, name: str, budget: int) -> None:
    """Refuse deep nesting, an alias that contains itself, and an expansion beyond `budget`.

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
        open_nodes.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))


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
    """The YAML document of a stack file, read within the bounds above."""
    text = decode_stack_text(data, name)
    loader = StackYamlLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_bounds(root, name, len(data) + ALIAS_ALLOWANCE)
        return loader.construct_document(root)
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
        raise StackFileError(name, f"is not valid YAML{where}: {problem}; fix the syntax") from None
    finally:
        loader.dispose()

"""A payload's command line, built from its `Options` dataclass: every option is written once.

A field `foo_bar` is the option `--foo-bar` with the field's default; a field without a default
is required. `option(...)` adds what argparse needs besides: a `type=` check (cli_types.py),
choices, help, and whether the value is a Blob path (then normalised with `blob.blob_path`).
A bool field is the pair `--foo` / `--no-foo`.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from workloads.common import blob

T = TypeVar("T")


def option(
    default: Any = dataclasses.MISSING,
    *,
    type: Callable[[str], Any] | None = None,
    choices: Sequence[str] | None = None,
    help: str | None = None,
    negative_help: str | None = None,
    blob_path: bool = False,
) -> Any:
    """A dataclass field that also says how its command-line option reads."""
    metadata = {
        "type": type,
        "choices": choices,
        "help": help,
        "negative_help": negative_help,
        "blob_path": blob_path,
    }
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_switch(parser: argparse.ArgumentParser, field: dataclasses.Field[Any]) -> None:
    switch = parser.add_mutually_exclusive_group()
    switch.add_argument(
        _flag(field.name),
        dest=field.name,
        action="store_true",
        default=field.default,
        help=field.metadata.get("help"),
    )
    switch.add_argument(
        _flag(f"no_{field.name}"),
        dest=field.name,
        action="store_false",
        help=field.metadata.get("negative_help"),
    )


def build_parser(options: type, *, prog: str, description: str) -> argparse.ArgumentParser:
    """One option per field of the `options` dataclass, in field order."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    for field in dataclasses.fields(options):
        if isinstance(field.default, bool):
            _add_switch(parser, field)
            continue
        settings: dict[str, Any] = {
            key: field.metadata[key]
            for key in ("type", "choices", "help")
            if field.metadata.get(key) is not None
        }
        if field.default is dataclasses.MISSING:
            settings["required"] = True
        else:
            settings["default"] = field.default
        parser.add_argument(_flag(field.name), **settings)
    return parser


def parse_options(
    options: type[T], parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> T:
    """The parsed command line as `options`, its Blob paths normalised."""
    values = vars(parser.parse_args(argv))
    for field in dataclasses.fields(options):  # type: ignore[arg-type]
        if field.metadata.get("blob_path"):
            values[field.name] = blob.blob_path(values[field.name])
    return options(**values)

"""Run the Pulumi program offline, under Pulumi's mock runtime, and record what it registers.

The very same `__main__.py` that `pulumi up` runs is executed here with a recording resource
monitor: every registration (type, name, parent, inputs, dependencies, provider, protect and
retain flags) is kept. The CLI and the tests both use this runner: there is one program.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import runpy
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pulumi
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_pulumi_func

from aksray.offline import sdk_private
from aksray.offline.mocks import PlatformMocks, placeholder
from aksray.offline.recorded import AliasSpec, RecordedResource, aliases_of
from aksray.stackfile.reader import (
    SECRET_STAND_IN,
    StackConfig,
    hand_over_config,
    load_stack_config,
    restore_environ,
)
from catalog.project import PROJECT
from settings.errors import Problem, SettingsError
from settings.model import Settings

# What a run records (aksray/offline/recorded.py) is read through this module too.
__all__ = [
    "PROGRAM",
    "PROJECT_FILE",
    "PROJECT_ROOT",
    "STACKS_DIR",
    "UNKNOWN_VALUE",
    "AliasSpec",
    "RecordedResource",
    "RecordingMonitor",
    "RunResult",
    "run_program",
    "sanitize",
    "stack_file",
    "stack_name_for",
]

PROJECT_ROOT: Final = Path(__file__).resolve().parents[2]
PROGRAM: Final = PROJECT_ROOT / "__main__.py"
PROJECT_FILE: Final = PROJECT_ROOT / "Pulumi.yaml"
STACKS_DIR: Final = PROJECT_ROOT / "stacks"

UNKNOWN_VALUE: Final = placeholder("computed by the engine")


@dataclass
class RunResult:
    stack: str
    config_file: Path
    resources: list[RecordedResource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()  # when the config is invalid
    warnings: list[str] = field(default_factory=list)
    settings: Any = None  # the Settings a valid run built its resources from, for the planner
    config: StackConfig | None = None  # what the run read from the stack file
    _by_urn: tuple[list[RecordedResource], dict[str, RecordedResource]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def ok(self) -> bool:
        return not self.problems

    def by_type(self, type_token: str) -> list[RecordedResource]:
        return [r for r in self.resources if r.type == type_token]

    def by_urn(self) -> dict[str, RecordedResource]:
        """URN -> resource, built once per `resources` list (callers look it up in loops):
        shared, so read it, never change it."""
        cached = self._by_urn
        if (
            cached is None
            or cached[0] is not self.resources
            or len(cached[1]) != len(self.resources)
        ):
            cached = (self.resources, {r.urn: r for r in self.resources})
            self._by_urn = cached
        return cached[1]


def sanitize(value: Any) -> Any:
    """Wire values to plain data: secrets masked, unknowns and references made visible."""
    if isinstance(value, dict):
        sig = value.get(sdk_private.SIG_KEY)
        if sig == sdk_private.SECRET_SIG:
            return SECRET_STAND_IN
        if sig == sdk_private.RESOURCE_SIG:
            return value.get("urn")
        if sig == sdk_private.OUTPUT_VALUE_SIG:
            if value.get("secret"):
                return SECRET_STAND_IN
            return sanitize(value["value"]) if "value" in value else UNKNOWN_VALUE
        if sig in (sdk_private.ASSET_SIG, sdk_private.ARCHIVE_SIG):
            return {k: sanitize(v) for k, v in value.items() if k != sdk_private.SIG_KEY}
        return {k: sanitize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitize(v) for v in value]
    if value == rpc.UNKNOWN:
        return UNKNOWN_VALUE
    if isinstance(value, float) and value.is_integer():
        return int(value)  # protobuf Struct carries every number as a double
    return value


class RecordingMonitor(pulumi_mocks.MockMonitor):
    def __init__(self, mocks: pulumi_mocks.Mocks) -> None:
        super().__init__(mocks)
        self.records: list[RecordedResource] = []

    def register(self, request: Any) -> Any:
        """`MockMonitor.RegisterResource`, without its serialization round trip.

        The SDK's mock monitor deserializes the inputs, asks the mocks for the outputs and
        serializes all of them back, on an event loop of its own, for every resource. Mocks
        that echo the inputs (PlatformMocks does) give back the very objects they got, whose
        serialized form is the request's own: only what the mocks computed is serialized. The
        response is the same message (tests compare the two for every stack).
        """
        urn = self.make_urn(request.parent, request.type, request.name)
        sdk_private.ensure_event_loop()  # resource references need a loop
        inputs = rpc.deserialize_properties(request.object)
        args = pulumi_mocks.MockResourceArgs(
            typ=request.type,
            name=request.name,
            inputs=inputs,
            provider=request.provider,
            resource_id=request.importId,
            custom=request.custom or False,
            transforms=sdk_private.resolve_callbacks(request.transforms),
        )
        resource_id, state = self.mocks.new_resource(args)
        outputs = struct_pb2.Struct()
        outputs.CopyFrom(request.object)
        computed = {k: v for k, v in state.items() if k not in inputs or v is not inputs[k]}
        dropped = [k for k in inputs if k not in state]
        for key in dropped:
            del outputs.fields[key]
        if computed:
            serialized = sdk_private.run_to_end(rpc.serialize_properties(computed, {}))
            for key in computed:
                if key in serialized.fields:
                    outputs.fields[key].CopyFrom(serialized.fields[key])
                elif key in outputs.fields:  # a value that serializes to nothing
                    del outputs.fields[key]
        self.resources[urn] = sdk_private.resource_registration(urn, resource_id, state)
        return resource_pb2.RegisterResourceResponse(
            urn=urn,
            id=resource_id,  # type: ignore[arg-type]
            object=outputs,
        )

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - the gRPC method name
        if request.type == "pulumi:pulumi:Stack":
            return super().RegisterResource(request)  # type: ignore[no-untyped-call]
        response = self.register(request)
        inputs = sanitize(json_format.MessageToDict(request.object))
        self.records.append(
            RecordedResource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                custom=bool(request.custom),
                parent=request.parent or None,
                inputs=inputs,
                # The SDK collects dependencies in a set: sort them for stable records.
                depends_on=tuple(sorted(set(request.dependencies))),
                property_dependencies={
                    key: tuple(sorted(set(deps.urns)))
                    for key, deps in request.propertyDependencies.items()
                },
                provider=request.provider or None,
                protect=bool(request.protect),
                retain_on_delete=bool(request.retainOnDelete),
                delete_before_replace=bool(request.deleteBeforeReplace),
                ignore_changes=tuple(request.ignoreChanges),
                replace_on_changes=tuple(request.replaceOnChanges),
                remote=bool(request.remote),
                delete_before_replace_defined=bool(request.deleteBeforeReplaceDefined),
                aliases=aliases_of(request),
                delete_timeout=request.customTimeouts.delete or None,
            )
        )
        return response


class _WarningCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def stack_file(stack: str) -> Path:
    return STACKS_DIR / f"Pulumi.{stack}.yaml"


def stack_name_for(config_file: Path) -> str:
    name = config_file.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return name[len("Pulumi.") :].rsplit(".", 1)[0]
    return config_file.stem


async def _resolve_exports() -> dict[str, Any]:
    root = runtime_settings.get_root_resource()
    outputs: dict[str, Any] = {}
    for key, value in (getattr(root, "outputs", None) or {}).items():
        output = pulumi.Output.from_input(value)
        resolved = await output.future()
        secret = await output.is_secret()
        known = await output.is_known()
        if secret:
            outputs[key] = SECRET_STAND_IN
        elif not known:
            outputs[key] = UNKNOWN_VALUE
        else:
            outputs[key] = sanitize(_plain(resolved))
    return outputs


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


@contextlib.contextmanager
def _offline_runtime() -> Iterator[None]:
    """What a short offline run can do without, restored afterwards.

    - The cyclic garbage collector: the SDK allocates tens of thousands of Outputs, futures and
      tasks per hundred resources, and the collector's passes over that growing heap took about
      half of a run (more for large stacks). A run is short; its garbage is collected after it.
    - Source positions (`sdk_private.no_stack_traces`).
    - Alias URNs nothing reads (`sdk_private.deferred_alias_urns`).
    None of them changes what the program registers.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        with sdk_private.no_stack_traces(), sdk_private.deferred_alias_urns():
            yield
    finally:
        if collecting:
            gc.enable()


def _report_unless_out_of_memory(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Out of memory, every pending Output fails alike: one MemoryError reaches the caller, the
    thousands of tasks it leaves are not each logged with a traceback."""
    if isinstance(context.get("exception"), MemoryError):
        return
    loop.default_exception_handler(context)


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    """Outputs left unresolved after a failed run must not outlive their event loop."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def run_program(
    config_file: Path,
    *,
    stack: str | None = None,
    secret_values: Mapping[str, str] | None = None,
    config: StackConfig | None = None,
) -> RunResult:
    """Run `__main__.py` against one stack file under mocks; return what it registered.

    Raises `aksray.stackfile.reader.StackFileError` for a file that is not Pulumi configuration.
    Configuration problems come back in `RunResult.problems` (with no resources registered).
    `config`: the file as already read (aksray/cli/preflight.py), instead of reading it again.
    """
    stack = stack or stack_name_for(config_file)
    if config is None:
        config = load_stack_config(
            config_file, project_file=PROJECT_FILE, secret_values=secret_values
        )
    result = RunResult(stack=stack, config_file=config_file, config=config)

    if str(PROJECT_ROOT) not in sys.path:
        sys.path.insert(0, str(PROJECT_ROOT))

    with _offline_runtime():
        _run(result, config, stack)
    # Registration order depends on how Outputs resolve; sort for stable plans and renders.
    result.resources = sorted(result.resources, key=lambda r: r.urn)
    return result


def _run(result: RunResult, config: StackConfig, stack: str) -> None:
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_report_unless_out_of_memory)
    asyncio.set_event_loop(loop)
    collector = _WarningCollector()
    logger = logging.getLogger(f"aksray.program.{id(collector)}")
    logger.propagate = False
    logger.addHandler(collector)
    mocks = PlatformMocks()
    monitor = RecordingMonitor(mocks)
    program_globals: dict[str, Any] = {}
    handed_over = hand_over_config(config)
    try:
        runtime_settings.reset_options(project=PROJECT, stack=stack, preview=False)
        set_all_config(dict(config.values), list(config.secret_keys))
        pulumi_mocks.set_mocks(
            mocks,
            project=PROJECT,
            stack=stack,
            preview=False,
            logger=logger,
            monitor=monitor,
        )

        def program() -> None:
            program_globals.update(runpy.run_path(str(PROGRAM), run_name="__main__"))

        try:
            loop.run_until_complete(run_pulumi_func(program))
        except SettingsError as exc:
            result.problems = exc.problems
        else:
            result.outputs = loop.run_until_complete(_resolve_exports())
            # The very settings the program built its resources from, for the planner.
            settings = program_globals.get("settings")
            if not isinstance(settings, Settings):
                raise TypeError("__main__.py must bind its validated Settings to `settings`")
            result.settings = settings
    finally:
        set_all_config({}, [])
        restore_environ(handed_over)
        runtime_settings.reset_options()
        _cancel_pending(loop)
        asyncio.set_event_loop(None)
        loop.close()
        logger.removeHandler(collector)
    result.resources = monitor.records
    result.warnings = collector.messages

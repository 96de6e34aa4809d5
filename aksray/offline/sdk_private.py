"""The Pulumi SDK internals the offline runner relies on, in one place.

The runner (aksray/offline/runner.py) records what the program registers by subclassing the SDK's
mock
monitor without its serialization round trip, and skips the source positions the SDK collects
for the engine. For that it needs names the SDK does not publish; each is resolved here, with
what it is for. A missing one fails the import with a message that names it, and
tests/offline/test_sdk_private.py checks each name's shape, so an SDK upgrade that moves or changes
one
fails loudly at one place instead of deep inside a run. Written against the pinned pulumi
(pyproject.toml).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from importlib.metadata import version
from types import ModuleType
from typing import Any, Final, TypeVar

import pulumi.resource
from pulumi.runtime import mocks, resource, rpc, settings, sync_await
from pulumi.runtime.proto import resource_pb2, source_pb2

T = TypeVar("T")


class SdkInternalsError(RuntimeError):
    """The installed Pulumi SDK lacks an internal the runner uses."""


def _private(module: ModuleType | type, name: str, purpose: str) -> Any:
    try:
        return getattr(module, name)
    except AttributeError:
        owner = (
            f"{module.__module__}.{module.__name__}"
            if isinstance(module, type)
            else module.__name__
        )
        raise SdkInternalsError(
            f"pulumi {version('pulumi')} has no {owner}.{name} ({purpose}); "
            "aksray/offline/sdk_private.py must be brought up to date with this SDK"
        ) from None


# Signatures that mark special values in serialized properties: `{SIG_KEY: <sig>, ...}`.
SIG_KEY: Final[str] = _private(rpc, "_special_sig_key", "the key of a special value")
SECRET_SIG: Final[str] = _private(rpc, "_special_secret_sig", "a secret")
RESOURCE_SIG: Final[str] = _private(rpc, "_special_resource_sig", "a resource reference")
OUTPUT_VALUE_SIG: Final[str] = _private(rpc, "_special_output_value_sig", "an output value")
ASSET_SIG: Final[str] = _private(rpc, "_special_asset_sig", "an asset")
ARCHIVE_SIG: Final[str] = _private(rpc, "_special_archive_sig", "an archive")

_ENSURE_EVENT_LOOP: Final[Callable[[], Any]] = _private(
    sync_await, "_ensure_event_loop", "the loop deserializing resource references needs"
)
_SYNC_AWAIT: Final[Callable[[Awaitable[Any]], Any]] = _private(
    sync_await, "_sync_await", "running a coroutine to its end from synchronous code"
)
_RESOLVE_CALLBACKS: Final[Callable[[Any], list[Any]]] = _private(
    mocks, "_resolve_callbacks", "the transforms of a registration, as mocks receive them"
)
_STACK_TRACE_HOOK: Final = "_get_stack_trace"
_private(resource, _STACK_TRACE_HOOK, "the source position the SDK records per resource")
# Resource.__init__ turns every alias into a URN output up front (pulumi/resource.py imports it
# under this name); only an engine without alias specs ever reads those URNs.
_ALIAS_TO_URN: Final = "collapse_alias_to_urn"
_private(pulumi.resource, _ALIAS_TO_URN, "the URN of an alias, computed per resource")
_REGISTRATION: Final[type] = _private(
    mocks.MockMonitor, "ResourceRegistration", "what the mock monitor keeps per resource"
)


def ensure_event_loop() -> None:
    """Make sure the current thread has an event loop (resource references need one)."""
    _ENSURE_EVENT_LOOP()


def run_to_end(awaitable: Awaitable[T]) -> T:
    """The result of an awaitable, from synchronous code inside a running program."""
    result: T = _SYNC_AWAIT(awaitable)
    return result


def resolve_callbacks(callbacks: Any) -> list[Any]:
    """A registration request's transforms, as `MockResourceArgs.transforms` takes them."""
    return _RESOLVE_CALLBACKS(callbacks)


def resource_registration(urn: str, resource_id: str | None, state: dict[str, Any]) -> Any:
    """What `MockMonitor.resources` holds per URN (the SDK's monitor answers reads from it).
    As the SDK's monitor does, a mock may return no id (protobuf then leaves it empty)."""
    return _REGISTRATION(urn, resource_id, state)


def _no_stack_trace() -> source_pb2.StackTrace:
    return source_pb2.StackTrace()


@contextlib.contextmanager
def no_stack_traces() -> Iterator[None]:
    """Registrations without the SDK's source positions, restored afterwards.

    For every resource the SDK walks the Python stack and turns each frame's file name into a
    URI, for the engine's diagnostics (about a millisecond per resource); nothing offline
    records them.
    """
    saved = getattr(resource, _STACK_TRACE_HOOK)
    setattr(resource, _STACK_TRACE_HOOK, _no_stack_trace)
    try:
        yield
    finally:
        setattr(resource, _STACK_TRACE_HOOK, saved)


@contextlib.contextmanager
def deferred_alias_urns() -> Iterator[None]:
    """Aliases kept as written instead of as URN outputs, while the monitor takes alias specs.

    Resource.__init__ computes a URN output for every alias of every resource (the Azure classes
    carry one alias per earlier API version: about a thousand on prod, a third of the plan's run
    time), but the SDK reads them only to send URNs to an engine that cannot take alias specs.
    The mock monitor takes them, as the real engine does, so what is registered is the same.
    """
    original = getattr(pulumi.resource, _ALIAS_TO_URN)

    def keep_alias(alias: Any, name: str, type_: str, parent: Any) -> Any:
        if settings.monitor_supports_feature(resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS):
            return alias
        return original(alias, name, type_, parent)

    setattr(pulumi.resource, _ALIAS_TO_URN, keep_alias)
    try:
        yield
    finally:
        setattr(pulumi.resource, _ALIAS_TO_URN, original)

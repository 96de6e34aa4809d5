"""The Pulumi SDK internals the offline runner and settings/load.py use still exist and behave.

An SDK upgrade that moves or changes one of them fails here, by name, before any plan is wrong.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from google.protobuf import struct_pb2
from pulumi.runtime import config as runtime_config
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime import rpc
from pulumi.runtime.proto import source_pb2

from aksray.offline import sdk_private
from aksray.offline.mocks import PlatformMocks


def test_a_missing_internal_is_reported_by_name() -> None:
    with pytest.raises(sdk_private.SdkInternalsError) as raised:
        sdk_private._private(rpc, "_special_gone_sig", "a test")
    message = str(raised.value)
    assert "pulumi.runtime.rpc._special_gone_sig (a test)" in message
    assert "aksray/offline/sdk_private.py" in message
    with pytest.raises(sdk_private.SdkInternalsError, match=r"mocks\.MockMonitor\.Gone "):
        sdk_private._private(pulumi_mocks.MockMonitor, "Gone", "a test")


def test_the_special_value_signatures_are_those_the_sdk_reads() -> None:
    signatures = [
        sdk_private.SECRET_SIG,
        sdk_private.RESOURCE_SIG,
        sdk_private.OUTPUT_VALUE_SIG,
        sdk_private.ASSET_SIG,
        sdk_private.ARCHIVE_SIG,
    ]
    assert all(isinstance(s, str) and s for s in [sdk_private.SIG_KEY, *signatures])
    assert len(set(signatures)) == len(signatures)
    # A serialized secret is recognised by exactly this key and signature.
    wire = struct_pb2.Struct()
    wire.update({"token": {sdk_private.SIG_KEY: sdk_private.SECRET_SIG, "value": "s"}})
    assert rpc.deserialize_properties(wire, keep_unknowns=True) == {
        "token": {sdk_private.SIG_KEY: sdk_private.SECRET_SIG, "value": "s"}
    }


def test_event_loop_helpers_run_a_coroutine_from_synchronous_code() -> None:
    asyncio.set_event_loop(None)
    try:
        sdk_private.ensure_event_loop()
        loop = asyncio.get_event_loop_policy().get_event_loop()
        assert not loop.is_closed()
        assert sdk_private.run_to_end(asyncio.sleep(0, result=7)) == 7
    finally:
        asyncio.get_event_loop_policy().get_event_loop().close()
        asyncio.set_event_loop(None)


def test_registration_helpers_keep_the_mock_monitor_s_shape() -> None:
    assert sdk_private.resolve_callbacks([]) == []
    registration = sdk_private.resource_registration("urn:x", "id-1", {"a": 1})
    assert (registration.urn, registration.id, registration.state) == ("urn:x", "id-1", {"a": 1})
    # RecordingMonitor keeps what it registers where the SDK's monitor reads it back.
    monitor = pulumi_mocks.MockMonitor(PlatformMocks())
    assert monitor.resources == {}
    assert isinstance(monitor.mocks, PlatformMocks)
    assert list(inspect.signature(monitor.make_urn).parameters) == ["parent", "type_", "name"]


def test_no_stack_traces_replaces_the_sdk_hook_and_restores_it() -> None:
    hook = pulumi_resource._get_stack_trace
    assert list(inspect.signature(hook).parameters) == []
    with sdk_private.no_stack_traces():
        assert pulumi_resource._get_stack_trace is not hook
        assert pulumi_resource._get_stack_trace() == source_pb2.StackTrace()
    assert pulumi_resource._get_stack_trace is hook


def test_the_runtime_config_that_settings_load_reads() -> None:
    """settings/load.py lists every key of the stack's config and asks which are secret."""
    runtime_config.set_all_config({"aks-ray-platform:location": "westeurope"}, ["x:y"])
    try:
        keys: Any = runtime_config.CONFIG.get()
        assert "aks-ray-platform:location" in set(keys) | set(runtime_config.get_config_env())
        assert runtime_config.get_config("aks-ray-platform:location") == "westeurope"
        assert runtime_config.is_config_secret("x:y")
        assert not runtime_config.is_config_secret("aks-ray-platform:location")
    finally:
        runtime_config.set_all_config({}, [])


class _AliasRecorder(pulumi_mocks.MockMonitor):
    def __init__(self, mocks: Any) -> None:
        super().__init__(mocks)
        self.aliases: dict[str, list[str]] = {}

    def RegisterResource(self, request: Any) -> Any:
        self.aliases[request.name] = [str(a) for a in request.aliases]
        return super().RegisterResource(request)  # type: ignore[no-untyped-call]


def _aliases_sent(deferred: bool) -> tuple[list[str], list[Any]]:
    """The alias specs a resource with aliases sends, and what it keeps in `_aliases`."""
    import pulumi
    from pulumi.runtime import settings as runtime_settings

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    runtime_settings.reset_options(project="test", stack="test", preview=False)
    monitor = _AliasRecorder(PlatformMocks())
    pulumi_mocks.set_mocks(PlatformMocks(), project="test", stack="test", monitor=monitor)
    kept: list[Any] = []

    def program() -> None:
        opts = pulumi.ResourceOptions(
            aliases=[pulumi.Alias(type_="test:index/v1:Thing"), pulumi.Alias(name="old")]
        )
        thing = pulumi.CustomResource("test:index/v2:Thing", "thing", {}, opts)
        kept.extend(thing._aliases)

    async def run() -> None:
        await pulumi.runtime.stack.run_pulumi_func(program)

    try:
        if deferred:
            with sdk_private.deferred_alias_urns():
                loop.run_until_complete(run())
        else:
            loop.run_until_complete(run())
    finally:
        runtime_settings.reset_options()
        asyncio.set_event_loop(None)
        loop.close()
    return monitor.aliases["thing"], kept


def test_deferred_alias_urns_send_the_same_alias_specs_and_restore_the_sdk() -> None:
    import pulumi

    original = getattr(pulumi.resource, "collapse_alias_to_urn")  # noqa: B009 - not exported
    sent, kept = _aliases_sent(deferred=True)
    assert getattr(pulumi.resource, "collapse_alias_to_urn") is original  # noqa: B009
    assert sent == _aliases_sent(deferred=False)[0]
    assert len(sent) == 2 and "test:index/v1:Thing" in sent[0] and "old" in sent[1]
    assert all(isinstance(a, pulumi.Alias) for a in kept)  # no URN outputs were built

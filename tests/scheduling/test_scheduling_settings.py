"""The scheduling section's settings rules, and the SchedulingQueues component under mocks:
its children and the orderings they really need."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as runtime_settings
from pulumi.runtime.stack import run_pulumi_func

from aksray.offline.mocks import PlatformMocks
from aksray.offline.runner import RecordedResource, RecordingMonitor
from settings.model import Settings, TeamSettings
from tests.support.harness import P, assert_rejected, mutated, one, planned
from tests.support.scheduling import (
    GPU,
    KAI_QUEUE,
    KUEUE,
    first_team,
    settings_of,
)

# --------------------------------------------------------------------------------------------
# Settings rules of the scheduling section
# --------------------------------------------------------------------------------------------

T = "scheduling.departments[0].teams[0]"


@pytest.mark.parametrize(
    ("mutate", "path", "fix"),
    [
        (
            lambda c: first_team(c).update(borrowingLimit={"a100": {"gpu": "unlimited"}}),
            f"{T}.borrowingLimit.a100.gpu",
            "leave a limit out",
        ),
        (
            lambda c: first_team(c).update(
                quota={"a100": {"gpu": "unlimited"}, "cpu": {"cpu": 8, "memory": "32Gi"}},
                borrowingLimit={"a100": {"gpu": 2}},
            ),
            f"{T}.borrowingLimit.a100.gpu",
            "unlimited",
        ),
        (
            lambda c: first_team(c)["quota"]["a100"].update(gpu="Unlimited"),
            f"{T}.quota.a100.gpu",
            "0",
        ),
        (lambda c: first_team(c)["quota"]["cpu"].pop("memory"), f"{T}.quota.cpu.memory", "32Gi"),
        (
            lambda c: c[P + "scheduling"].update(queueingStrategy="FIFO"),
            "scheduling.queueingStrategy",
            "StrictFIFO",
        ),
        (
            lambda c: first_team(c).update(queueingStrategy="strict"),
            f"{T}.queueingStrategy",
            "BestEffortFIFO",
        ),
    ],
    ids=[
        "unlimited-limit",
        "limit-on-unlimited",
        "unlimited-misspelt",
        "cpu-flavor-needs-memory",
        "bad-strategy",
        "bad-team-strategy",
    ],
)
def test_scheduling_settings_are_validated(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], path: str, fix: str
) -> None:
    run = assert_rejected(tmp_path, mutated("dev", mutate), path)
    line = next(line for line in run.error_lines if line.startswith(f"error: {path}: "))
    assert fix in line


def test_unlimited_parses_to_kais_minus_one() -> None:
    team: TeamSettings = settings_of("kai-demo").scheduling.team("team-a")
    assert team.quota["gpu"].amount(GPU) == -1
    assert (team.quota["cpu"].amount("cpu"), team.quota["cpu"].amount("memory")) == (-1, -1)


# --------------------------------------------------------------------------------------------
# The component, under mocks
# --------------------------------------------------------------------------------------------


def test_scheduling_queues_children_and_their_real_orderings() -> None:
    result = planned("prod")
    by_urn = result.by_urn()
    component = one(result, "aksray:platform:SchedulingQueues", "aksray-queues")
    platform = one(result, "aksray:platform:Platform", "aksray")
    assert component.parent == platform.urn
    provider = one(result, "pulumi:providers:kubernetes", "aksray-cluster-k8s")
    children = [r for r in result.resources if r.parent == component.urn]
    assert len(children) == 4 + 4 + 2 + 4 + 4 + 2 + 4  # flavors, priorities, cohorts, CQs, LQs, KAI
    assert all(child.provider_urn == provider.urn for child in children)

    def urn(type_token: str, name: str) -> str:
        return one(result, type_token, name).urn

    nlp_cq = one(result, f"{KUEUE}:ClusterQueue", "aksray-queues-cq-nlp")
    flavor_deps = {by_urn[u].name for u in nlp_cq.depends_on if u in by_urn}
    assert flavor_deps == {
        "aksray-queues-flavor-cpu",
        "aksray-queues-flavor-a100",
        "aksray-queues-flavor-a100spot",
        "aksray-operators-kueue",  # the release that installs the CRDs and serves the webhook
    }
    release = "kubernetes:helm.sh/v3:Release"
    serving_lq = one(result, f"{KUEUE}:LocalQueue", "aksray-queues-lq-serving")
    assert set(serving_lq.depends_on) == {
        urn(f"{KUEUE}:ClusterQueue", "aksray-queues-cq-serving"),
        urn("kubernetes:core/v1:Namespace", "aksray-teams-serving"),
        urn(release, "aksray-operators-kueue"),
    }
    leaf = one(result, KAI_QUEUE, "aksray-queues-kai-serving")
    assert set(leaf.depends_on) == {
        urn(KAI_QUEUE, "aksray-queues-kai-applied"),
        urn(release, "aksray-operators-kai-scheduler"),
        # completes once KAI's queue webhook answers (tests/scheduling/test_kai_queue_webhook.py)
        urn("kubernetes:batch/v1:Job", "aksray-operators-kai-queue-webhook"),
    }
    assert leaf.inputs["spec"]["parentQueue"] == "applied"


def test_every_child_waits_for_the_operator_releases() -> None:
    """`kueue`/`kai` releases (and opts.depends_on) reach every child, as Platform passes them."""
    from components.namespaces import TeamNamespaces
    from components.queues import SchedulingQueues

    settings = settings_of("dev")
    records = _record(
        lambda: _build_queues(settings, TeamNamespaces, SchedulingQueues),
    )
    urns = {r.name: r.urn for r in records}
    kueue, kai, extra = urns["kueue-release"], urns["kai-release"], urns["cluster-ready"]
    webhook = urns["kai-webhook"]
    children = [r for r in records if r.name.startswith("q-") and r.custom]
    assert len(children) == 2 + 4 + 1 + 1 + 1 + 2
    for child in children:
        needs = {kai, webhook, extra} if child.type == KAI_QUEUE else {kueue, extra}
        assert needs <= set(child.depends_on), child.name
        wrong = {kueue} if child.type == KAI_QUEUE else {kai, webhook}
        assert not wrong & set(child.depends_on), child.name


def _build_queues(settings: Settings, namespaces_cls: Any, queues_cls: Any) -> None:
    provider = k8s.Provider("k8s", kubeconfig="{}")
    at = pulumi.ResourceOptions(provider=provider)
    kueue = k8s.core.v1.ConfigMap("kueue-release", opts=at)
    kai = k8s.core.v1.ConfigMap("kai-release", opts=at)
    webhook = k8s.core.v1.ConfigMap("kai-webhook", opts=at)
    ready = k8s.core.v1.ConfigMap("cluster-ready", opts=at)
    namespaces = namespaces_cls("ns", settings.scheduling.teams, provider=provider)
    queues_cls(
        "q",
        settings,
        provider=provider,
        namespaces=namespaces,
        kueue=kueue,
        kai=kai,
        kai_webhook=webhook,
        opts=pulumi.ResourceOptions(depends_on=[ready]),
    )


def _record(program: Callable[[], None]) -> list[RecordedResource]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    monitor = RecordingMonitor(PlatformMocks())
    try:
        runtime_settings.reset_options(project="aks-ray-platform", stack="test", preview=False)
        pulumi_mocks.set_mocks(
            PlatformMocks(),
            project="aks-ray-platform",
            stack="test",
            preview=False,
            monitor=monitor,
        )
        loop.run_until_complete(run_pulumi_func(program))
    finally:
        runtime_settings.reset_options()
        asyncio.set_event_loop(None)
        loop.close()
    return monitor.records

"""The rig's KAI wiring, the gang invariant, the gang and late-admission scenarios' sizing, and
what `aksray rehearse` says before it starts: pure parts, without a rig (`make rehearse-test`
plays them on the real controllers)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT, run_program
from aksray.rehearse.invariants import SAMPLED as INVARIANTS
from aksray.rehearse.invariants.gang_all_or_nothing import GANG_GRACE_S, split_gangs, watch
from aksray.rehearse.record import Sample, Verdict
from aksray.rehearse.rig import kai_webhooks
from aksray.rehearse.rig.controllers import kai
from aksray.rehearse.rig.prerequisites import controller_versions
from aksray.rehearse.rig.toolchain import RigToolchain, read_env_file
from aksray.rehearse.scenarios.gangs_compete import compete_plan
from aksray.rehearse.scenarios.sizing import NotApplicableError

ROOT = PROJECT_ROOT
NS = "team-a"


def test_the_rig_runs_the_kai_the_proxy_serves_and_names_the_shipped_one() -> None:
    pins = read_env_file(ROOT / "scripts" / "rig" / "versions.env")
    assert (pins["KAI_VERSION"], pins["KAI_SHIPPED_VERSION"]) == ("v0.12.0", "v0.17.0")
    versions = controller_versions(RigToolchain(Path("/nonexistent"), pins))
    assert versions["kai-scheduler"] == "v0.12.0 (the platform ships v0.17.0)"
    off = controller_versions(RigToolchain(Path("/nonexistent"), pins), "kube-scheduler")
    assert off["kai-scheduler"].startswith("not run (--scheduler kube-scheduler")


def test_the_scheduler_runs_the_stacks_actions_with_v012s_binpack_plugins() -> None:
    config = kai.scheduler_config(("allocate",))
    assert config["actions"] == "allocate"
    names = [p["name"] for p in config["tiers"][0]["plugins"]]
    assert names[:3] == ["predicates", "proportion", "priority"]
    assert names[-3:] == ["gpupack", "nodeplacement", "gpusharingorder"]
    assert config["tiers"][0]["plugins"][-2]["arguments"] == {"gpu": "binpack", "cpu": "binpack"}
    with pytest.raises(ValueError, match=r"KAI v0\.12 has no action preemt"):
        kai.scheduler_config(("allocate", "preemt"))


@pytest.mark.parametrize(
    ("stack", "actions", "runtime"),
    [
        ("stacks/Pulumi.dev.yaml", ("allocate",), "nvidia"),
        ("tests/stacks/kai-demo.yaml", ("allocate",), "nvidia"),
    ],
)
def test_kai_on_the_rig_is_the_stacks_kai(
    stack: str, actions: tuple[str, ...], runtime: str
) -> None:
    setup = kai.KaiSetup.of(run_program(ROOT / stack).settings)
    assert (setup.actions, setup.runtime_class, setup.gpu_sharing) == (actions, runtime, False)


def test_kais_webhooks_point_at_loopback_with_the_rigs_ca() -> None:
    mutating, validating = kai_webhooks.admission_webhooks("https://127.0.0.1:4443", b"CA")
    (hook,) = mutating["webhooks"]
    assert hook["clientConfig"] == {
        "url": "https://127.0.0.1:4443/mutate--v1-pod",
        "caBundle": base64.b64encode(b"CA").decode(),
    }
    assert hook["rules"][0]["operations"] == ["CREATE"]
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == [
        "kube-system",
        "kai-scheduler",
    ]
    assert validating["webhooks"][0]["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    queue = kai_webhooks.queue_webhook("https://127.0.0.1:9443", b"CA")
    assert queue["metadata"]["name"] == "kai-queue-validation-v2"
    (hook,) = queue["webhooks"]
    assert hook["clientConfig"]["url"].endswith("/validate-scheduling-run-ai-v2-queue")
    assert hook["rules"][0]["resources"] == ["queues"]


def test_the_rig_creates_what_kais_chart_and_the_gpu_operator_would() -> None:
    setup = kai.KaiSetup(("allocate",), gpu_sharing=False, runtime_class="nvidia")
    objects = {(o["kind"], o["metadata"]["name"]) for _, o in kai.cluster_objects(setup)}
    assert ("RuntimeClass", "nvidia") in objects
    assert ("PriorityClass", "inference") in objects
    assert ("Namespace", "kai-scheduler") in objects


# -- gang-all-or-nothing ----------------------------------------------------------------------
def pod(name: str, cluster: str, *, node: str | None, gated: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "ray"}]}
    if node:
        spec["nodeName"] = node
    if gated:
        spec["schedulingGates"] = [{"name": "kueue.x-k8s.io/elastic-job"}]
    labels = {"ray.io/cluster": cluster, "ray.io/node-type": "worker"}
    return {"metadata": {"name": name, "namespace": NS, "labels": labels}, "spec": spec}


def sample(t: float, pods: list[dict[str, Any]]) -> Sample:
    clusters: dict[tuple[str, str], tuple[str, str] | None] = {
        (NS, c): ("RayJob", "qwen-lora") for c in ("a", "b")
    }
    return Sample(t, [], pods, {}, clusters, {}, {}, {})


def owner(_pod: dict[str, Any]) -> tuple[str, str]:
    return ("RayJob", "qwen-lora")


def test_a_gang_split_between_bound_and_waiting_pods_is_found() -> None:
    pods = [pod("a0", "a", node="n0"), pod("a1", "a", node=None), pod("b0", "b", node="n1")]
    assert split_gangs(pods, owner) == {(NS, "a"): (1, 1)}
    # A pod behind Kueue's elastic-job gate waits for quota, not for capacity.
    gated = [pod("a0", "a", node="n0"), pod("a1", "a", node=None, gated=True)]
    assert split_gangs(gated, owner) == {}


def test_the_gang_invariant_breaks_only_when_a_split_outlasts_the_grace() -> None:
    split = [pod("a0", "a", node="n0"), pod("a1", "a", node=None)]
    gangs, verdict = watch(), Verdict("gang-all-or-nothing")

    def check(t: float, pods: list[dict[str, Any]]) -> None:
        gangs(sample(t, pods), verdict)

    check(0.0, split)
    check(GANG_GRACE_S, split)
    assert verdict.held
    check(GANG_GRACE_S + 1, [pod("a0", "a", node="n0"), pod("a1", "a", node="n1")])
    check(GANG_GRACE_S + 2, split)  # a new split starts its own grace
    assert verdict.held
    check(2 * GANG_GRACE_S + 3, split)
    assert not verdict.held
    assert "qwen-lora: 1 pod(s) of Ray cluster team-a/a bound while 1 wait" in verdict.detail
    assert "gang-all-or-nothing" in INVARIANTS


# -- scenario sizing ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        # One GPU per node: three nodes, two gangs of two.
        ("stacks/Pulumi.dev.yaml", ("team-a", "a100", 3, 2)),
        ("tests/stacks/kueue-team-queues.yaml", ("team-a", "gpu", 3, 2)),
        # Four GPUs per node: one node, two gangs of three.
        ("stacks/Pulumi.prod.yaml", ("nlp", "a100", 1, 3)),
    ],
)
def test_two_gangs_each_more_than_half_the_gpus_kueue_admits_both(
    stack: str, expected: tuple[str, str, int, int]
) -> None:
    plan = compete_plan(run_program(ROOT / stack).settings)
    assert (plan.team, plan.flavor, plan.nodes, plan.gang) == expected
    assert plan.pods == plan.gang + 1


def test_a_pool_of_two_one_gpu_nodes_cannot_show_competing_gangs() -> None:
    settings = run_program(ROOT / "tests" / "stacks" / "kai-demo.yaml").settings
    with pytest.raises(NotApplicableError, match="two gangs bigger than half"):
        compete_plan(settings)


# -- before anything starts --------------------------------------------------------------------
def test_every_missing_prerequisite_is_named_with_its_make_target(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from aksray.rehearse.rig import prerequisites as toolchain

    monkeypatch.setenv("AKSRAY_RIG_CACHE", str(tmp_path / "rig"))
    monkeypatch.setenv("AKSRAY_ENGINE_CACHE", str(tmp_path / "engine"))
    monkeypatch.setenv("AKSRAY_REFERENCE", str(tmp_path / "no-reference"))
    missing = toolchain.missing_prerequisites(rig=True)
    assert [line.split(" (")[0] for line in missing] == [
        "the Pulumi engine",
        "the rehearsal rig",
        "the upstream reference data",
    ]
    assert "run `make engine`" in missing[0]
    assert "run `make rig`" in missing[1]
    assert "run `make reference`" in missing[2]
    # On a cluster of one's own only the engine is needed.
    assert len(toolchain.missing_prerequisites(rig=False)) == 1


def test_rehearse_names_all_it_lacks_and_starts_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from aksray.cli.main import main

    monkeypatch.setenv("AKSRAY_RIG_CACHE", str(tmp_path / "rig"))
    monkeypatch.setenv("AKSRAY_ENGINE_CACHE", str(tmp_path / "engine"))
    monkeypatch.setenv("AKSRAY_REFERENCE", str(tmp_path / "no-reference"))
    code = main(["rehearse", "--config", str(ROOT / "stacks" / "Pulumi.dev.yaml")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: `aksray rehearse` needs 3 thing(s) it does not have; nothing")
    assert err.count("\n  - ") == 3
    assert "make engine" in err and "make rig" in err and "make reference" in err
    assert not list((tmp_path).glob("rig/*/bin"))


# -- progress ----------------------------------------------------------------------------------
def test_on_a_terminal_each_step_and_timeline_event_is_shown_as_it_happens(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from aksray.cli.rehearse import progress_printer
    from aksray.rehearse.observer import Observer

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    show = progress_printer()
    observer = Observer(kube=None, namespaces=())  # type: ignore[arg-type]
    observer.on_event.append(lambda event: show(f"  {event.line()}"))
    show("dev: playing submit-all")
    observer.note("qwen-lora", "admitted", "on a100 (team-a)")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("s] dev: playing submit-all")
    assert "t=+" in lines[1] and lines[1].endswith("qwen-lora admitted on a100 (team-a)")


def test_piped_the_rehearsal_prints_only_its_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from aksray.cli.rehearse import progress_printer

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    progress_printer()("rig up in 20.0s")
    assert capsys.readouterr().err == ""

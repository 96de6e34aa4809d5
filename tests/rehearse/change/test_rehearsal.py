"""Tier T5: day two on the real controllers (`make rehearse-test`; marker `rehearsal`).

Two rehearsals at once, each on a rig of its own:
- the sequence tests/stacks/day2/0..10: each stack a change to the one before, played onto
  running work with `aksray rehearse --since` (every change on one rig, one after the other);
- tests/stacks/day2/upgrade.yaml with `--upgrade-operators`: Kueue 0.17.1 and KubeRay 1.6.1
  upgraded to 0.19.2 and 1.6.2 under running work.
The tests assert what the controllers and the engine did, change by change.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from typing import Any

import pytest

from aksray.offline.runner import PROJECT_ROOT
from aksray.rehearse.invariants import SAMPLED as INVARIANTS

DAY2 = PROJECT_ROOT / "tests" / "stacks" / "day2"
SEQUENCE = sorted(
    (p for p in DAY2.glob("*.yaml") if p.name[0].isdigit()), key=lambda p: int(p.stem.split("-")[0])
)
UPGRADE = DAY2 / "upgrade.yaml"
# What `aksray plan --since` predicts each change does on the rig, and the preview must list.
PREDICTED = {
    1: "6 create, 1 update",  # a team added: its namespace, account, queues, members' binding;
    2: "2 create, 4 update",  # a team moved: a new cohort and KAI parent; its queues updated
    3: "nothing",  # a pool's maxCount: Azure's alone (the rig adds the node)
    4: "2 update",  # a pool's VM size: Azure replaces the pool; the queues' CPU and memory follow
    5: "1 replace",  # the endpoint's replicas: the RayService replaced
    6: "1 update",  # a quota cut: the ClusterQueue updated
    7: "11 delete",  # a team removed, its job and its members' binding with it
    8: "nothing",  # the chart source: the releases alone (none on the rig)
    9: "9 create, 2 update",  # monitoring: scrape objects, a metrics role binding
    10: "1 replace",  # the endpoint's adapter: the RayService replaced
}
pytestmark = [pytest.mark.rehearsal, pytest.mark.reference]
_runs: dict[str, Future[subprocess.CompletedProcess[str]]] = {}


def _rehearse(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aksray.rehearse", "rehearse", *args, "--json"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=3000, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def rehearsals() -> Any:
    pool = ThreadPoolExecutor(max_workers=2)
    since = [arg for path in SEQUENCE[:-1] for arg in ("--since", str(path))]
    _runs["sequence"] = pool.submit(_rehearse, "--config", str(SEQUENCE[-1]), *since)
    _runs["upgrade"] = pool.submit(_rehearse, "--config", str(UPGRADE), "--upgrade-operators")
    yield
    pool.shutdown(cancel_futures=True)


@cache
def result(which: str) -> dict[str, Any]:
    done = _runs[which].result()
    assert done.returncode in (0, 1), done.stderr[-4000:]
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def verdicts(which: str) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in result(which)["invariants"]}


def verdict(which: str, starts: str) -> dict[str, Any]:
    (found,) = [v for name, v in verdicts(which).items() if name.startswith(starts)]
    return found


def title(number: int) -> str:
    """How the report names change `number` (its files as the command line names them)."""
    return f"change {number}: {SEQUENCE[number - 1]} -> {SEQUENCE[number]}"


def events(which: str, workload: str, what: str) -> list[dict[str, Any]]:
    return [e for e in result(which)["events"] if e["workload"] == workload and e["what"] == what]


def step_events(number: int) -> list[dict[str, Any]]:
    """The events of change `number`: from its note to the next change's (or the end), by
    their place in the timeline (two events may share a tenth of a second)."""
    timeline: list[dict[str, Any]] = result("sequence")["events"]
    starts = {
        int(e["what"]): i
        for i, e in enumerate(timeline)
        if e["workload"] == "change" and e["what"].isdigit()
    }
    return timeline[starts[number] : starts.get(number + 1, len(timeline))]


@pytest.mark.parametrize("which", ["sequence", "upgrade"])
def test_every_invariant_and_every_check_holds(which: str) -> None:
    broken = [f"{n}: {v['detail']}" for n, v in verdicts(which).items() if not v["held"]]
    assert broken == []
    assert set(INVARIANTS) <= set(verdicts(which))
    assert _runs[which].result().returncode == 0


@pytest.mark.parametrize("number", sorted(PREDICTED))
def test_the_engines_preview_of_each_change_lists_what_the_plan_predicts(number: int) -> None:
    name = f"{title(number)}: the engine's preview lists what the plan predicts"
    assert verdict("sequence", name) == {
        "name": f"{name} ({PREDICTED[number]})",
        "held": True,
        "detail": "",
    }
    assert verdict("sequence", f"{title(number)}: pulumi up finishes")["held"]
    assert verdict("sequence", f"{title(number)}: what the change plan leaves alone")["held"]


def test_a_team_added_moved_or_a_pool_grown_touches_no_running_work() -> None:
    quiet = [*step_events(1), *step_events(2), *step_events(3)]
    assert [e for e in quiet if e["what"] in ("evicted", "preempted", "pods deleted")] == []
    grown = events("sequence", "pool a100", "nodes")[0]["detail"]
    assert grown == "maxCount 6 -> 7: nodes follow; 0 pod(s) evicted"


def test_a_new_vm_size_takes_every_pod_on_the_pool_and_the_work_comes_back() -> None:
    replaced = events("sequence", "pool a100", "nodes")[1]["detail"]
    assert replaced.startswith(
        "pool replaced, VM size Standard_NC24ads_A100_v4 -> Standard_NC48ads_A100_v4: its 7 "
        "node(s) drained and deleted, 7 new ones; "
    )
    assert int(replaced.rsplit("; ", 1)[1].split()[0]) >= 4  # the gang's 2, the endpoint, aurora
    during = step_events(4)
    (back,) = [e["detail"] for e in during if e["what"] == "pods bound again"]
    assert back == "on the new nodes: aurora-finetune, llm-serve, qwen-lora"


def test_the_endpoint_replaced_serves_nothing_until_the_new_one_is_bound() -> None:
    """KubeRay's zero-downtime upgrade never runs: the program replaces the RayService, deleting
    it first, so the endpoint is down from its old pods going to its new ones bound."""
    during = step_events(5)
    down = [e for e in during if e["workload"] == "llm-serve" and e["what"] == "serving nothing"]
    (back,) = [e for e in during if e["workload"] == "llm-serve" and e["what"] == "serving again"]
    assert down and down[0]["t"] < back["t"]
    assert float(back["detail"].split()[1].rstrip("s")) > 0
    assert not [e for e in during if e["what"] == "preempted"]


def test_an_endpoint_replaced_after_a_quota_cut_below_it_is_not_admitted_again() -> None:
    """The cut spared the running endpoint (Kueue never evicts for it); its replacement is new
    work, admitted only within the new quota, which is smaller than it."""
    after = step_events(10)
    assert [e for e in after if e["workload"] == "llm-serve" and e["what"] == "serving nothing"]
    assert not [e for e in after if e["workload"] == "llm-serve" and e["what"] == "serving again"]
    waits = [n for n in result("sequence")["notes"] if n.startswith(title(10))]
    assert any("last Kueue condition of llm-serve: QuotaReserved False" in n for n in waits)


def test_a_quota_cut_below_the_running_gang_evicts_nothing() -> None:
    after = step_events(6)
    assert [e for e in after if e["what"] in ("evicted", "preempted")] == []
    assert verdict("sequence", "admitted-within-quota")["held"]


def test_a_team_removed_while_its_job_runs_goes_with_it_and_pulumi_up_ends() -> None:
    after = step_events(7)
    assert [e for e in after if e["workload"].startswith("aurora-finetune")
            and e["what"] == "pods deleted"]  # fmt: skip
    (up,) = [e for e in after if e["workload"] == "pulumi" and e["what"] == "up"]
    assert float(up["detail"].rsplit(" in ", 1)[1].rstrip("s")) < 120


def test_a_chart_source_switch_restarts_both_operators_and_monitoring_restarts_kueue() -> None:
    switch = step_events(8)
    restarted = [e["detail"] for e in switch if e["what"] == "restarted"]
    assert len(restarted) == 2
    assert "(chart, repositoryOpts, values.image.repository)" in restarted[0]
    assert "values.controllerManager.manager.image.repository" in restarted[1]
    monitoring = step_events(9)
    (kueue,) = [e["detail"] for e in monitoring if e["what"] == "restarted"]
    assert "(values.managerConfig.controllerManagerConfigYaml)" in kueue
    assert not [e for e in (*switch, *monitoring) if e["what"] in ("evicted", "preempted")]


def test_the_upgrade_runs_the_pair_shipped_before_then_todays() -> None:
    controllers = result("upgrade")["controllers"]
    assert controllers["kueue"] == "v0.17.1 -> v0.19.2"
    assert controllers["kuberay-operator"] == "v1.6.1 -> v1.6.2"
    upgraded = [e["workload"] for e in result("upgrade")["events"] if e["what"] == "upgraded"]
    assert upgraded == ["kuberay-operator", "kueue"]  # in the order pulumi up upgrades them


def test_every_object_stored_before_the_upgrade_reads_back_the_same_and_queued_work_runs() -> None:
    kept = verdict("upgrade", "the upgrade: every Kueue and KubeRay object stored before")
    assert kept["held"], kept["detail"]
    queued = verdict("upgrade", "work queued before the change admitted after it")
    assert (
        queued["held"] and queued["name"] != "work queued before the change admitted after it: none"
    )
    assert not [e for e in result("upgrade")["events"] if e["what"] in ("evicted", "preempted")]

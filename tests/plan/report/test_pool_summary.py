"""The summary's pools (aksray/plan/report/pool_summary.py): AKS's node allocatable and, on a
GPU node, what its daemon sets request of it, in the data and in the table."""

from __future__ import annotations

from aksray.plan.model.plan import plan
from aksray.plan.report.pool_summary import POOLS_TITLE, pools, pools_table
from tests.support.harness import planned


def test_prods_pools_show_allocatable_and_the_gpu_nodes_daemon_sets() -> None:
    rows = {row["pool"]: row for row in pools(plan(planned("prod")))}
    assert {name: row["daemonSets"] for name, row in rows.items()} == {
        "cpu": {"gpu": 0, "cpu": "0", "memory": "0"},  # not modelled on CPU nodes
        "a100": {"gpu": 0, "cpu": "425m", "memory": "814Mi"},
        "h100": {"gpu": 0, "cpu": "425m", "memory": "814Mi"},
        "a100spot": {"gpu": 0, "cpu": "425m", "memory": "814Mi"},
    }
    # 1900 GiB as the kernel reports it (1914944Mi) less 5050Mi kube-reserved and 100Mi
    assert rows["h100"]["nodeAllocatable"] == {"gpu": 8, "cpu": "94940m", "memory": "1909794Mi"}


def test_the_table_says_what_each_column_is() -> None:
    lines = pools_table(pools(plan(planned("dev"))))
    assert lines[0] == f"{POOLS_TITLE}:"
    assert lines[1].split()[-2:] == ["daemon", "sets"]
    assert lines[2].endswith("memory 26850Mi           -")  # the CPU pool: none modelled
    assert lines[3].endswith("cpu 425m, memory 814Mi")

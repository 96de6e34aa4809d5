"""Reading what MultiKueue wrote on the manager, on recorded objects (Kueue v0.19.2's shapes)."""

from __future__ import annotations

from typing import Any

from aksray.rehearse.multikueue.watch import (
    check_state,
    cluster_connection,
    dispatched_to,
    manager_eviction_explained,
)


def workload(**status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "rayjob-qwen-lora-1", "namespace": "team-a"}, "status": status}


def test_where_a_job_was_dispatched_is_its_cluster_name() -> None:
    assert dispatched_to(workload(clusterName="weu")) == "weu"
    assert dispatched_to(workload()) is None


def test_the_admission_check_state_and_message() -> None:
    lost = workload(
        admissionChecks=[
            {"name": "multikueue-team-a", "state": "Retry", "message": "Admitting remote lost"}
        ]
    )
    assert check_state(lost) == ("Retry", "Admitting remote lost")
    assert check_state(workload()) == ("", "")


def test_a_worker_connection_is_its_active_condition() -> None:
    connected = {
        "status": {
            "conditions": [
                {"type": "Active", "status": "True", "reason": "Active", "message": "Connected"}
            ]
        }
    }
    lost = {
        "status": {
            "conditions": [
                {
                    "type": "Active",
                    "status": "False",
                    "reason": "ClientConnectionFailed",
                    "message": "connection refused",
                }
            ]
        }
    }
    assert cluster_connection(connected) == (True, "Active: Connected")
    assert cluster_connection(lost) == (False, "ClientConnectionFailed: connection refused")
    assert cluster_connection({}) == (False, "")


def _evicted(reason: str) -> dict[str, Any]:
    return workload(
        conditions=[{"type": "Evicted", "status": "True", "reason": reason, "message": "x"}]
    )


def test_a_lost_workers_requeue_explains_an_eviction_on_the_manager() -> None:
    assert manager_eviction_explained(_evicted("AdmissionCheck"))
    assert manager_eviction_explained(_evicted("PodsReadyTimeout"))
    assert manager_eviction_explained(workload())
    assert not manager_eviction_explained(_evicted("Preempted"))


def test_a_workers_copy_deactivated_because_the_manager_evicted_the_job_is_explained() -> None:
    # Kueue v0.19.2, seen on the rig: a worker lost past the timeout, the manager evicts the
    # job, and the copy it had just made in the other worker is deactivated with this reason.
    from aksray.rehearse.invariants.evictions_explained import watch
    from aksray.rehearse.record import Sample, Verdict

    copy = _evicted("DeactivatedDueToEvictedOnManagerCluster")
    copy["metadata"]["uid"] = "u1"
    check, verdict = watch(), Verdict("evictions-explained")
    check(Sample(1.0, [copy], [], {}, {}, {}, {}, {}), verdict)
    assert verdict.held
    check(Sample(2.0, [_evicted("Preempted")], [], {}, {}, {}, {}, {}), verdict)
    assert not verdict.held

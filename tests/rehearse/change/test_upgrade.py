"""The operator upgrade's checks: what was stored reads back the same; what the new controllers
wrote beside the spec is reported."""

from __future__ import annotations

from aksray.rehearse.change.upgrade import Stored, compare
from aksray.rehearse.rig.prerequisites import controller_versions, previous_versions
from aksray.rehearse.rig.toolchain import RIG_SCRIPTS, RigToolchain, read_env_file

KEY = ("rayservices", "team-a", "llm-serve")


def test_same_uid_and_spec_read_back_the_same_and_new_metadata_is_reported() -> None:
    before = {KEY: Stored("u1", {"a": 1}, (), {"x": "1"})}
    after = {KEY: Stored("u1", {"a": 1}, ("ray.io/rayservice-finalizer",), {"x": "1", "y": "2"})}
    assert compare(before, after) == (
        [],
        [
            "rayservices team-a/llm-serve gained the finalizer(s) ray.io/rayservice-finalizer",
            "rayservices team-a/llm-serve annotation y: None -> 2",
        ],
    )


def test_a_lost_recreated_or_changed_object_does_not() -> None:
    before = {
        KEY: Stored("u1", {"a": 1}, (), {}),
        ("clusterqueues", "", "team-a"): Stored("u2", {"q": 4}, (), {}),
        ("workloads", "team-a", "w"): Stored("u3", {}, (), {}),
    }
    after = {
        KEY: Stored("u9", {"a": 1}, (), {}),
        ("clusterqueues", "", "team-a"): Stored("u2", {"q": 2}, (), {}),
    }
    assert compare(before, after)[0] == [
        "clusterqueues team-a changed its spec",
        "rayservices team-a/llm-serve was recreated (uid u1 -> u9)",
        "workloads team-a/w is gone",
    ]


def test_the_reports_name_the_upgrade() -> None:
    tools = RigToolchain(RIG_SCRIPTS, read_env_file(RIG_SCRIPTS / "versions.env"))
    assert previous_versions() == {"kueue": "v0.17.1", "kuberay-operator": "v1.6.1"}
    found = controller_versions(tools, previous=previous_versions())
    assert found["kueue"] == "v0.17.1 -> v0.19.2"
    assert found["kuberay-operator"] == "v1.6.1 -> v1.6.2"
    assert found["kai-scheduler"] == "v0.12.0 (the platform ships v0.17.0)"

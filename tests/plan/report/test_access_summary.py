"""The plan's access part (aksray/plan/report/access_summary.py): who may do what where, read
from the registered RoleBindings, ClusterRoles and namespaces, and every Azure role assignment
counted against the limit; and the storage part's conditions, as evaluated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aksray.plan.model.plan import plan
from aksray.plan.report.access_summary import access, access_lines
from aksray.plan.report.storage_summary import storage, storage_lines
from tests.support.harness import P, mutated, planned
from tests.support.minimal_stack import run

SHARED = "6f1c2a9e-0b7d-4c6a-9a5e-2f3d4b5c6d7e"
OWN = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def _groups(config: dict[str, Any]) -> None:
    research = config[P + "scheduling"]["departments"][0]["teams"]
    research[0]["members"] = [SHARED]
    research[1]["members"] = [SHARED]
    research[1]["viewers"] = [OWN]
    research[1]["priorities"] = ["train", "build"]


def test_who_may_do_what_where(tmp_path: Path) -> None:
    result = run(tmp_path, mutated("prod", _groups))
    data = access(plan(result))
    assert data["teams"] == [
        {"team": "nlp", "namespace": "nlp", "members": [SHARED], "viewers": [],
         "priorities": ["train"]},
        {"team": "vision", "namespace": "vision", "members": [SHARED], "viewers": [OWN],
         "priorities": ["train", "build"]},
        {"team": "serving", "namespace": "llm-serving", "members": [], "viewers": [],
         "priorities": ["inference"]},
        {"team": "training", "namespace": "training", "members": [], "viewers": [],
         "priorities": ["build-preemptible"]},
    ]  # fmt: skip
    assert data["admissionPolicies"] == ["aksray-team-pod-specs", "aksray-team-ray"]
    assert data["roleAssignments"] == {
        "count": 12,
        "limit": 4000,
        "byKind": {
            "deployer's cluster admin": 1,
            "Blob data, one per team": 4,
            "kubeconfig, one per group": 2,
            "Grafana": 2,
            "image cache": 3,
        },
    }
    assert data["roles"]["viewers"] == [
        "get/list/watch rayjobs, rayservices, rayclusters (ray.io)",
        "get/list/watch workloads, localqueues (kueue.x-k8s.io)",
        "get/list/watch pods, pods/log, services, events (core)",
        "get/list/watch events (events.k8s.io)",
    ]
    lines = access_lines(data)
    assert lines[0].startswith("Team access (Kubernetes RBAC in each team's namespace only;")
    assert lines[1].split() == ["team", "namespace", "members", "viewers", "may", "submit", "at"]
    assert lines[3].split() == ["vision", "vision", SHARED, OWN, "train,", "build"]
    assert lines[-1] == (
        "Azure role assignments: 12 of the 4,000 a subscription allows (1 deployer's cluster "
        "admin, 4 Blob data, one per team, 2 kubeconfig, one per group, 2 Grafana, 3 image "
        "cache)"
    )


def test_the_storage_part_reads_what_the_conditions_allow() -> None:
    data = storage(plan(planned("prod")))
    nlp = next(c for c in data["containers"] if c["name"] == "nlp-data")
    assert nlp == {
        "name": "nlp-data",
        "kind": "team",
        "write": ["nlp"],
        "read": [],
        "readPrefix": [
            {"team": "serving", "prefix": "adapters/qwen-lora/"},
            {"team": "training", "prefix": "adapters/qwen-lora/"},
        ],
    }
    models = next(c for c in data["containers"] if c["name"] == "models")
    assert (models["write"], models["read"]) == (["training"], ["nlp", "vision", "serving"])
    assert [t["team"] for t in data["teams"]] == ["nlp", "vision", "serving", "training"]
    assert data["grantedByStack"] is True
    assert (
        "  nlp-data       team    nlp       serving (adapters/qwen-lora/ only), training "
        "(adapters/qwen-lora/ only)"
    ) in storage_lines(data)


def test_without_grants_the_storage_part_shows_the_conditions_to_make(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "cluster"]["createRoleAssignments"] = False

    data = storage(plan(run(tmp_path, mutated("prod", change))))
    assert data["grantedByStack"] is False
    serving = next(t for t in data["teams"] if t["team"] == "serving")
    assert serving["identity"] == "id-aksray-test-serving"
    assert "StringStartsWith 'adapters/qwen-lora/'" in serving["condition"]
    nlp = next(c for c in data["containers"] if c["name"] == "nlp-data")
    assert [r["team"] for r in nlp["readPrefix"]] == ["serving", "training"]

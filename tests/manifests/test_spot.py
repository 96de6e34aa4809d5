"""An endpoint must never run on spot nodes: Azure takes them back at any moment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.harness import P, plan_findings
from tests.support.minimal_stack import config, minimal, teams

QUOTA = "scheduling.departments[0].teams[0].quota"


def _two_pools(first_spot: bool) -> dict[str, Any]:
    """Pools a100 and a100spot in this order; team-a (the endpoint's) holds quota on both."""
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"] = [
        {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "maxCount": 2, "spot": first_spot},
        {
            "name": "a100spot",
            "vmSize": "Standard_NC24ads_A100_v4",
            "maxCount": 2,
            "spot": not first_spot,
        },
    ]
    teams(document)[0]["quota"]["a100spot"] = {"gpu": 2}
    return document


# What the plan says when Kueue would give the endpoint its spot flavor first.
SPOT_FIRST = (
    f"error: {QUOTA}.a100: llm-serve is an endpoint that must never be evicted, but team "
    "team-a's quota on a100 places its gpu pods on spot nodes (cluster.gpuPools[0].spot: "
    "true), which Azure takes back at any moment; Kueue gives it this flavor on an empty "
    "cluster: move team team-a's GPU quota to an on-demand pool, or set "
    "cluster.gpuPools[0].spot: false"
)


def test_an_endpoint_whose_team_holds_only_spot_quota_is_refused(tmp_path: Path) -> None:
    document = minimal()
    config(document)[P + "cluster"]["gpuPools"][0]["spot"] = True
    code, errors, warnings = plan_findings(tmp_path, document)
    assert (code, warnings) == (1, [])
    assert errors == [SPOT_FIRST]


def test_an_endpoint_that_gets_a_spot_flavor_first_is_refused(tmp_path: Path) -> None:
    code, errors, _ = plan_findings(tmp_path, _two_pools(first_spot=True))
    assert code == 1
    assert errors == [SPOT_FIRST]


def test_an_endpoint_that_falls_back_to_spot_is_warned_about(tmp_path: Path) -> None:
    code, errors, warnings = plan_findings(tmp_path, _two_pools(first_spot=False))
    assert (code, errors) == (0, [])
    assert warnings == [
        f"warning: {QUOTA}.a100spot: llm-serve is an endpoint that must never be evicted, but "
        "team team-a's quota on a100spot places its gpu pods on spot nodes "
        "(cluster.gpuPools[1].spot: true), which Azure takes back at any moment; Kueue gives "
        "it this flavor when a100 is full: remove team team-a's quota on a100spot, or set "
        "cluster.gpuPools[1].spot: false"
    ]


def test_spot_quota_of_a_team_without_the_endpoint_is_fine(tmp_path: Path) -> None:
    document = _two_pools(first_spot=False)
    training = {
        "name": "team-b",
        "quota": {"a100spot": {"gpu": 2}, "cpu": {"cpu": 4, "memory": "16Gi"}},
    }
    del teams(document)[0]["quota"]["a100spot"]
    # The endpoint's team borrows nothing from the department's cohort (services.py).
    teams(document)[0]["borrowingLimit"] = {"cpu": {"cpu": 0, "memory": 0}, "a100": {"gpu": 0}}
    teams(document).append(training)
    config(document)[P + "workloads"]["vllm-batch"] = {
        "enabled": True,
        "team": "team-b",
        "modelSource": "huggingface",
        "loraAdapter": False,
    }
    code, errors, warnings = plan_findings(tmp_path, document)
    assert (code, errors) == (0, [])
    assert not any("spot" in line for line in warnings), warnings

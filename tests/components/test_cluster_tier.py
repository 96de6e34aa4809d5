"""`cluster.tier`: the AKS pricing tier reaches the ManagedCluster's `sku`, prod runs Standard,
the plan shows it, and a wrong value or a Free tier on a big cluster is told at its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.plan.checks.azure import check_free_tier_size
from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import plan
from manifests.aks import managed_cluster_args
from settings.defaults import DEFAULT_CLUSTER_TIER
from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.support.harness import (
    P,
    assert_rejected,
    cli,
    mutated,
    one,
    planned,
    stack_document,
    write_stack,
)
from tests.support.minimal_stack import minimal, run

CLUSTER = "azure-native:containerservice:ManagedCluster"


@pytest.mark.parametrize(("stack", "tier"), [("prod", "Standard"), ("dev", "Free")])
def test_the_stack_files_name_their_tier_and_the_cluster_gets_it(stack: str, tier: str) -> None:
    aks = one(planned(stack), CLUSTER, "aksray-cluster-aks")
    assert aks.inputs["sku"] == {"name": "Base", "tier": tier}


def test_prod_says_standard_in_its_own_file() -> None:
    """Prod's tier never rests on the default: the stack file names it."""
    assert stack_document("prod")["config"][P + "cluster"]["tier"] == "Standard"


def test_a_stack_that_names_no_tier_gets_standard() -> None:
    assert DEFAULT_CLUSTER_TIER == "Standard"
    assert parse_settings({}, stack="dev").cluster.tier == "Standard"


@pytest.mark.parametrize("tier", ["Free", "Standard", "Premium"])
def test_each_tier_is_sent_as_azure_spells_it(tier: str) -> None:
    args = managed_cluster_args(
        "dev",
        location="eastus2",
        kubernetes_version="1.35",
        system_pool={},
        local_accounts=False,
        tier=tier,
    )
    assert args["sku"] == {"name": "Base", "tier": tier}


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        (
            "standard",
            "must be one of Free, Standard, Premium (the AKS pricing tier), got "
            "'standard'; write 'Standard'",
        ),
        ("Basic", "must be one of Free, Standard, Premium (the AKS pricing tier), got 'Basic'"),
        (True, "must be one of Free, Standard, Premium, got true"),
    ],
)
def test_a_wrong_tier_is_refused_with_the_fix(value: Any, fix: str) -> None:
    with pytest.raises(SettingsError) as raised:
        parse_settings({"cluster": {"tier": value}}, stack="dev")
    (problem,) = raised.value.problems
    assert problem.path == "cluster.tier"
    assert problem.message == fix


def test_a_wrong_tier_fails_the_plan_at_its_key(tmp_path: Path) -> None:
    document = mutated("prod", lambda c: c[P + "cluster"].update(tier="Gold"))
    run_ = assert_rejected(tmp_path, document, "cluster.tier")
    assert "must be one of Free, Standard, Premium" in run_.stderr


def test_tier_belongs_to_aks_mode_only(tmp_path: Path) -> None:
    document = mutated("local", lambda c: c[P + "cluster"].update(tier="Standard"))
    run_ = assert_rejected(tmp_path, document, "cluster.tier")
    assert "only used when mode is aks" in run_.stderr


@pytest.mark.parametrize(
    ("stack", "line"),
    [
        (
            "prod",
            "Cluster: AKS aks-aksray-prod, Kubernetes 1.35, tier Standard (uptime SLA, control "
            "plane for up to 5,000 nodes; cluster.tier)",
        ),
        (
            "dev",
            "Cluster: AKS aks-aksray-dev, Kubernetes 1.35, tier Free (no uptime SLA, meant for "
            "up to 10 nodes: not for production; cluster.tier)",
        ),
    ],
)
def test_the_plan_shows_the_tier(tmp_path: Path, stack: str, line: str) -> None:
    run_ = cli("plan", "--stack", stack)
    assert run_.code == 0, run_.output
    assert line in run_.stdout.splitlines()
    tier = "Standard" if stack == "prod" else "Free"
    as_json = cli("plan", "--stack", stack, "--json")
    assert f'"tier": "{tier}"' in as_json.stdout


def _free(document: dict[str, Any], gpu_nodes: int) -> dict[str, Any]:
    cluster = document["config"][P + "cluster"]
    cluster["tier"] = "Free"
    cluster["gpuPools"][0]["maxCount"] = gpu_nodes
    return document


def test_free_on_a_cluster_that_outgrows_it_is_a_warning(tmp_path: Path) -> None:
    # system 2 (the default) + cpu 2 + gpu 7 = 11 nodes at most.
    findings = Findings()
    check_free_tier_size(plan(run(tmp_path, _free(minimal(), 7))), findings)
    assert findings.errors == []
    assert [(w.path, w.message) for w in findings.warnings] == [
        (
            "cluster.tier",
            "Free with up to 11 nodes: AKS means the Free tier for at most 10 nodes and gives "
            "it no uptime SLA; set tier: Standard",
        )
    ]


def test_free_on_a_cluster_of_ten_nodes_is_fine(tmp_path: Path) -> None:
    findings = Findings()
    check_free_tier_size(plan(run(tmp_path, _free(minimal(), 6))), findings)
    assert (findings.errors, findings.warnings) == ([], [])


def test_the_warning_reaches_the_cli_and_exits_zero(tmp_path: Path) -> None:
    stack = write_stack(tmp_path, _free(minimal(), 20))
    run_ = cli("plan", "--config", stack)
    assert run_.code == 0, run_.output
    assert "cluster.tier: Free with up to 24 nodes" in run_.output

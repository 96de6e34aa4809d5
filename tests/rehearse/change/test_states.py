"""The stacks of a change rehearsal, checked offline, and what the plan predicts on the rig."""

from __future__ import annotations

from pathlib import Path

import pytest

from aksray.rehearse.change.states import RUN_LABEL, load_state, steps
from aksray.rehearse.run import InvalidConfigError

DAY2 = Path(__file__).resolve().parents[2] / "stacks" / "day2"


def test_a_team_added_is_created_on_the_rig_as_it_is_on_aks(tmp_path: Path) -> None:
    states = [
        load_state(name, DAY2 / name, "rehearse-day2", tmp_path)
        for name in ("0-base.yaml", "1-team-added.yaml")
    ]
    (step,) = steps(states)
    predicted = step.predicted()
    found = sorted(
        (action, key.split("::")[0].rsplit("$", 1)[-1], key.split("::")[1])
        for key, action in predicted.items()
    )
    assert found == [
        ("create", "kubernetes:core/v1:Namespace", "aksray-teams-team-c"),
        ("create", "kubernetes:core/v1:ServiceAccount", "aksray-teams-team-c-ray"),
        ("create", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "aksray-queues-cq-team-c"),
        ("create", "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "aksray-queues-lq-team-c"),
        # the rehearsal names a stand-in group of members for every team (rehearse/stack.py)
        (
            "create",
            "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
            "aksray-access-team-c-member",
        ),
        ("create", "kubernetes:scheduling.run.ai/v2:Queue", "aksray-queues-kai-team-c"),
        # the department's KAI queue weighs its teams: one more
        ("update", "kubernetes:scheduling.run.ai/v2:Queue", "aksray-queues-kai-research"),
    ]
    # On AKS the team also gets its identity, its federation and its Blob access.
    real = {c.type for c in step.real_plan.changes}
    assert "azure-native:managedidentity:UserAssignedIdentity" in real
    assert all(not key.startswith("urn:") for key in predicted)


def test_every_enabled_job_is_started_with_one_run_label(tmp_path: Path) -> None:
    state = load_state("base", DAY2 / "0-base.yaml", "rehearse-day2", tmp_path)
    section = state.workloads()
    assert section["qwen-lora"]["run"] == section["aurora-finetune"]["run"] == RUN_LABEL
    assert "run" not in section["llm-serve"]


def test_an_old_stack_that_does_not_validate_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "old.yaml"
    bad.write_text((DAY2 / "0-base.yaml").read_text().replace("team: team-b", "team: team-x"))
    with pytest.raises(InvalidConfigError) as refused:
        load_state("old.yaml", bad, "rehearse-day2", tmp_path, "--since old.yaml")
    assert refused.value.lines
    assert all(
        line.startswith("error: --since old.yaml: workloads.aurora-finetune.team")
        for line in refused.value.lines
    )

"""Teams cannot write each other's Blob data: proven from the role assignments the program
registers (each one's scope and role definition, per principal), on the project stacks and on
a generated stack of twelve teams; and every payload writes only where its team may write."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import RunResult
from manifests.identity import STORAGE_BLOB_DATA_CONTRIBUTOR_ROLE, STORAGE_BLOB_DATA_READER_ROLE
from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.support.harness import RUNNING, P, assert_rejected, mutated, planned
from tests.support.minimal_stack import run
from tests.support.scripts import load_script

ROLE = "azure-native:authorization:RoleAssignment"
CONTAINER = "azure-native:storage:BlobContainer"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
ROLES = {STORAGE_BLOB_DATA_READER_ROLE: "read", STORAGE_BLOB_DATA_CONTRIBUTOR_ROLE: "write"}


def _unknown(value: object) -> str:
    return str(value).removeprefix("<unknown until deploy: ").removesuffix(">")


def blob_access(result: RunResult) -> dict[str, dict[str, str]]:
    """team -> container name -> "read" / "write", from the registered role assignments of
    the team identities. Fails on any grant to a team identity that is not on one container
    or not one of the two Blob data roles."""
    containers = {
        f"id of BlobContainer {c.name}": c.inputs["containerName"]
        for c in result.by_type(CONTAINER)
    }
    prefix = f"id-aksray-{result.stack}-"
    teams = {
        f"principal id of identity {i.inputs['resourceName']}": i.inputs[
            "resourceName"
        ].removeprefix(prefix)
        for i in result.by_type(IDENTITY)
    }
    access: dict[str, dict[str, str]] = {team: {} for team in teams.values()}
    for assignment in result.by_type(ROLE):
        team = teams.get(_unknown(assignment.inputs["principalId"]))
        if team is None:
            continue  # the deployer's and Grafana's roles
        scope = _unknown(assignment.inputs["scope"])
        assert scope in containers, f"{assignment.name}: scope {scope} is not one container"
        role = str(assignment.inputs["roleDefinitionId"]).rsplit("/", 1)[-1]
        assert role in ROLES, f"{assignment.name}: role {role}"
        container = containers[scope]
        assert container not in access[team], f"{team} holds two roles on {container}"
        access[team][container] = ROLES[role]
    return access


def _generated(tmp_path: Path) -> RunResult:
    return run(tmp_path, load_script("bench_plan").generate_stack(12))


@pytest.fixture(params=["dev", "prod", f"prod{RUNNING}", "twelve teams"])
def result(request: pytest.FixtureRequest, tmp_path: Path) -> RunResult:
    if request.param == "twelve teams":
        return _generated(tmp_path)
    return planned(request.param)


def test_no_team_may_write_another_teams_data(result: RunResult) -> None:
    access = blob_access(result)
    teams = [team.name for team in result.settings.scheduling.teams]
    assert sorted(access) == sorted(teams)
    for team in teams:
        for other in teams:
            if other != team:
                assert access[team].get(f"{other}-data") != "write", (team, other)


def test_each_team_writes_its_own_container_and_reads_the_shared_ones(result: RunResult) -> None:
    access = blob_access(result)
    shared = result.settings.storage.containers
    stagers = {w.team for w in result.settings.workloads if w.name == "model-stage" and w.enabled}
    for team, held in access.items():
        assert held[f"{team}-data"] == "write"
        assert held["datasets"] == "read"  # nobody's job writes the shared datasets
        assert held["models"] == ("write" if team in stagers else "read")
        assert set(held) - set(shared) - {f"{team}-data"} <= {
            f"{t}-data" for t in access
        }  # the rest: other teams' containers, read only (checked above)


def test_prod_grants_exactly_what_its_workloads_need() -> None:
    assert blob_access(planned("prod")) == {
        "nlp": {"nlp-data": "write", "datasets": "read", "models": "read"},
        "vision": {"vision-data": "write", "datasets": "read", "models": "read"},
        # llm-serve loads the adapter qwen-lora (nlp) writes to nlp-data.
        "serving": {
            "serving-data": "write",
            "datasets": "read",
            "models": "read",
            "nlp-data": "read",
        },
        # model-stage stages the base model for everyone; vllm-batch loads nlp's adapter.
        "training": {
            "training-data": "write",
            "datasets": "read",
            "models": "write",
            "nlp-data": "read",
        },
    }


def test_no_grant_reaches_the_whole_account() -> None:
    for stack in ("dev", "prod"):
        for assignment in planned(stack).by_type(ROLE):
            scope = _unknown(assignment.inputs["scope"])
            assert not scope.startswith("id of StorageAccount"), assignment.name
            assert not scope.startswith("id of ResourceGroup"), assignment.name


# --------------------------------------------------------------------------------------------
# Every payload writes only where its team may write, and reads only where it may read
# --------------------------------------------------------------------------------------------


def _options(job: Mapping[str, Any]) -> dict[str, str]:
    argv = shlex.split(job["spec"]["entrypoint"])[3:]
    return {argv[i]: argv[i + 1] for i in range(0, len(argv) - 1) if argv[i].startswith("--")}


def test_every_payload_writes_and_reads_where_its_team_may() -> None:
    result = planned(f"prod{RUNNING}")
    access = blob_access(result)
    jobs = {
        job.inputs["metadata"]["labels"]["aksray.io/workload"]: job.inputs
        for job in result.by_type("kubernetes:ray.io/v1:RayJob")
    }
    team = {w.name: w.team for w in result.settings.workloads}
    writes = {
        "aurora-finetune": _options(jobs["aurora-finetune"])["--checkpoint-container"],
        "qwen-lora": _options(jobs["qwen-lora"])["--adapter-container"],
        "vllm-batch": _options(jobs["vllm-batch"])["--output-container"],
        "model-stage": "models",  # the payload's default (workloads/model_stage/main.py)
    }
    assert writes == {
        "aurora-finetune": "vision-data",
        "qwen-lora": "nlp-data",
        "vllm-batch": "training-data",
        "model-stage": "models",
    }
    for workload, container in writes.items():
        assert access[team[workload]][container] == "write", workload
    # vllm-batch reads the adapter where qwen-lora wrote it; so does the endpoint.
    assert _options(jobs["vllm-batch"])["--adapter-container"] == writes["qwen-lora"]
    assert access[team["vllm-batch"]]["nlp-data"] == "read"
    (service,) = result.by_type("kubernetes:ray.io/v1:RayService")
    serve = yaml.safe_load(service.inputs["spec"]["serveConfigV2"])
    lora = serve["applications"][0]["args"]["llm_configs"][0]["lora_config"]
    assert lora["dynamic_lora_loading_path"].startswith("azure://nlp-data@")
    assert access[team["llm-serve"]]["nlp-data"] == "read"


# --------------------------------------------------------------------------------------------
# Team names must make valid container names; Azure's role assignment limit
# --------------------------------------------------------------------------------------------


def _rename_team(name: str) -> Any:
    def change(config: dict[str, Any]) -> None:
        config[P + "scheduling"]["departments"][0]["teams"][0]["name"] = name
        for workload in config[P + "workloads"].values():
            workload["team"] = name

    return change


@pytest.mark.parametrize(
    "name",
    ["a" * 59, "team--a"],
    ids=["59 characters", "double hyphen"],
)
def test_a_team_whose_container_azure_refuses_is_rejected(tmp_path: Path, name: str) -> None:
    run_ = assert_rejected(
        tmp_path, mutated("dev", _rename_team(name)), "scheduling.departments[0].teams[0].name"
    )
    assert (
        f"team {name!r} would get the Blob container {name + '-data'!r}, which Azure refuses "
        "(3-63 lowercase letters, digits and single hyphens): name the team with at most 58 "
        "characters and no '--'"
    ) in run_.stderr


def test_a_58_character_team_is_fine(tmp_path: Path) -> None:
    result = run(tmp_path, mutated("dev", _rename_team("a" * 58)))
    assert result.ok, result.problems
    assert blob_access(result)["a" * 58][f"{'a' * 58}-data"] == "write"


def test_a_shared_container_may_not_take_a_teams_name(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "storage"]["containers"] = ["datasets", "models", "nlp-data"]

    run_ = assert_rejected(tmp_path, mutated("prod", change), "storage.containers[2]")
    assert "'nlp-data' is team nlp's own container" in run_.stderr


def _teams(count: int) -> dict[str, Any]:
    return {
        "scheduling": {
            "departments": [
                {
                    "name": f"dept-{d:03d}",
                    "teams": [
                        {"name": f"team-{d:03d}-{t}", "quota": {"cpu": {"cpu": 1, "memory": "1Gi"}}}
                        for t in range(10)
                    ],
                }
                for d in range(count // 10)
            ]
        }
    }


def test_more_role_assignments_than_azure_allows_are_refused() -> None:
    # 1,340 teams x (own container + datasets + models) = 4,020 > 4,000.
    with pytest.raises(SettingsError) as raised:
        parse_settings(_teams(1340), stack="dev")
    problems = [p for p in raised.value.problems if p.path == "scheduling.departments"]
    assert [p.message for p in problems] == [
        "1,340 teams need 4,020 Blob role assignments (one per team and container it reaches), "
        "above Azure's limit of 4,000 per subscription: use fewer teams or shared containers, "
        "or set cluster.createRoleAssignments: false and grant access some other way"
    ]


def test_the_limit_counts_only_what_the_stack_grants() -> None:
    raw = _teams(1340)
    raw["cluster"] = {"createRoleAssignments": False}
    problems: list[Any] = []
    try:
        parse_settings(raw, stack="dev")
    except SettingsError as exc:
        problems = [p for p in exc.problems if p.path == "scheduling.departments"]
    assert problems == []
    assert parse_settings(_teams(1330), stack="dev").scheduling.teams  # 3,990 grants

"""No team can read or write what another team keeps in Blob: proven by evaluating the
conditions of the role assignments the program registers (one per team, on the account) for the
requests a team could make, on the project stacks and on a generated stack of twelve teams; and
every payload writes and reads only where its team may.

The evaluator (aksray/plan/model/abac.py) reads the condition language's rules as Microsoft
documents them; its own tests run it on Microsoft's examples (tests/plan/model/test_abac.py). One
condition is also pinned word for word below, so the evaluator cannot agree with the builder by
sharing a mistake.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import RunResult
from aksray.plan.model.abac import BlobRequest, Node, parse_condition
from settings.access.blob_condition import (
    BLOB_PATH,
    CONTAINER_NAME,
    LIST_PREFIX,
    LIST_SUBOPERATION,
    READ_ACTION,
    WRITE_ACTIONS,
)
from tests.support.harness import RUNNING, P, assert_rejected, mutated, planned
from tests.support.minimal_stack import run
from tests.support.scripts import load_script

ROLE = "azure-native:authorization:RoleAssignment"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
# What a team keeps in its own container (workloads/common/layout.py), and paths an adapter
# prefix must not let through: a sibling folder that starts alike, another adapter.
PRIVATE_PATHS = (
    "checkpoints/aurora-finetune/run-1/lora.pt",
    "results/vllm-batch/run-1/part-0.jsonl",
    "datasets/private.jsonl",
    "adapters/qwen-lora-old/aksray-sft/adapter_model.safetensors",
    "adapters/other-workload/adapter_config.json",
)
ADAPTER_FILE = "adapters/qwen-lora/aksray-sft/adapter_model.safetensors"


def _unknown(value: object) -> str:
    return str(value).removeprefix("<unknown until deploy: ").removesuffix(">")


def conditions(result: RunResult) -> dict[str, Node]:
    """team -> its Blob role assignment's condition, parsed. Fails on a team identity's
    assignment that is not on the account or carries no condition."""
    prefix = f"id-aksray-{result.stack}-"
    teams = {
        f"principal id of identity {i.inputs['resourceName']}": i.inputs[
            "resourceName"
        ].removeprefix(prefix)
        for i in result.by_type(IDENTITY)
    }
    found: dict[str, Node] = {}
    for assignment in result.by_type(ROLE):
        team = teams.get(_unknown(assignment.inputs["principalId"]))
        if team is None:
            continue  # the deployer's, Grafana's and the groups' kubeconfig roles
        assert _unknown(assignment.inputs["scope"]) == "id of StorageAccount aksray-storage-account"
        assert assignment.inputs["conditionVersion"] == "2.0"
        assert team not in found, f"{team} holds two Blob assignments"
        found[team] = parse_condition(assignment.inputs["condition"])
    return found


def may_read(node: Node, container: str, path: str) -> bool:
    return node(BlobRequest(READ_ACTION, {CONTAINER_NAME: container, BLOB_PATH: path}))


def may_list(node: Node, container: str, prefix: str | None) -> bool:
    attributes = {CONTAINER_NAME: container}
    if prefix is not None:
        attributes[LIST_PREFIX] = prefix
    return node(BlobRequest(READ_ACTION, attributes, LIST_SUBOPERATION))


def may_write(node: Node, container: str, path: str) -> bool:
    """Every write action: write, append, delete, rename."""
    at = {CONTAINER_NAME: container, BLOB_PATH: path}
    return all(node(BlobRequest(action, at)) for action in WRITE_ACTIONS)


def may_write_any(node: Node, container: str, path: str) -> bool:
    at = {CONTAINER_NAME: container, BLOB_PATH: path}
    return any(node(BlobRequest(action, at)) for action in WRITE_ACTIONS)


def _generated(tmp_path: Path) -> RunResult:
    return run(tmp_path, load_script("bench_stack").generate_stack(12))


@pytest.fixture(params=["dev", "prod", f"prod{RUNNING}", "twelve teams"])
def result(request: pytest.FixtureRequest, tmp_path: Path) -> RunResult:
    if request.param == "twelve teams":
        return _generated(tmp_path)
    return planned(request.param)


def _adapter_readers(result: RunResult) -> dict[str, str]:
    """team -> the team whose adapter it reads (settings: an enabled adapter reader of
    another team than qwen-lora's)."""
    workloads = {w.name: w for w in result.settings.workloads}
    source = workloads["qwen-lora"].team
    return {
        w.team: source
        for w in result.settings.workloads
        if w.enabled and w.name in ("vllm-batch", "llm-serve") and w.lora_adapter
        and w.team != source
    }  # fmt: skip


def test_no_team_can_read_or_write_another_teams_data(result: RunResult) -> None:
    found = conditions(result)
    teams = [team.name for team in result.settings.scheduling.teams]
    assert sorted(found) == sorted(teams)
    adapters = _adapter_readers(result)
    for team, node in found.items():
        for other in teams:
            if other == team:
                continue
            container = f"{other}-data"
            for path in PRIVATE_PATHS:
                assert not may_read(node, container, path), (team, container, path)
                assert not may_write_any(node, container, path), (team, container, path)
            assert not may_list(node, container, None), (team, container)
            assert not may_list(node, container, "checkpoints/"), (team, container)
            assert not may_list(node, container, "adapters/"), (team, container)
            reads_adapter = adapters.get(team) == other
            assert may_read(node, container, ADAPTER_FILE) is reads_adapter, (team, other)
            assert may_list(node, container, "adapters/qwen-lora/aksray-sft/") is reads_adapter
            assert not may_write_any(node, container, ADAPTER_FILE), (team, other)


def test_each_team_writes_its_own_container_and_reads_the_shared_ones(result: RunResult) -> None:
    found = conditions(result)
    stagers = {w.team for w in result.settings.workloads if w.name == "model-stage" and w.enabled}
    for team, node in found.items():
        for path in (*PRIVATE_PATHS, ADAPTER_FILE):
            assert may_write(node, f"{team}-data", path) and may_read(node, f"{team}-data", path)
        assert may_list(node, f"{team}-data", None)
        assert may_read(node, "datasets", "qwen-lora/sft/train.jsonl")
        assert may_list(node, "datasets", None)
        assert not may_write_any(node, "datasets", "x")  # nobody's job writes the datasets
        assert may_read(node, "models", "hf/Qwen/Qwen2.5-7B-Instruct/main/config.json")
        assert may_write(node, "models", "hf/x") is (team in stagers)
        # A container the stack does not have: nothing.
        assert not may_read(node, "elsewhere", "x") and not may_write_any(node, "elsewhere", "x")


def test_prod_serving_condition_word_for_word() -> None:
    (assignment,) = [
        a for a in planned("prod").by_type(ROLE) if a.name == "aksray-storage-serving-blob"
    ]
    c = "Microsoft.Storage/storageAccounts/blobServices/containers"
    name = f"@Resource[{c}:name]"
    assert assignment.inputs["condition"] == (
        "(\n (\n"
        f"  !(ActionMatches{{'{c}/blobs/read'}} AND NOT SubOperationMatches{{'Blob.List'}})\n"
        " )\n OR\n (\n"
        f"  {name} ForAnyOfAnyValues:StringEquals {{'serving-data', 'datasets', 'models'}}\n"
        "  OR\n"
        f"  ({name} StringEquals 'nlp-data' AND @Resource[{c}/blobs:path] StringStartsWith "
        "'adapters/qwen-lora/')\n"
        " )\n)\nAND\n(\n (\n"
        f"  !(ActionMatches{{'{c}/blobs/read'}} AND SubOperationMatches{{'Blob.List'}})\n"
        " )\n OR\n (\n"
        f"  {name} ForAnyOfAnyValues:StringEquals {{'serving-data', 'datasets', 'models'}}\n"
        "  OR\n"
        f"  ({name} StringEquals 'nlp-data' AND @Request[{c}/blobs:prefix] StringStartsWith "
        "'adapters/qwen-lora/')\n"
        " )\n)\nAND\n(\n (\n"
        f"  !(ActionMatches{{'{c}/blobs/write'}}) AND !(ActionMatches{{'{c}/blobs/add/action'}})"
        f" AND !(ActionMatches{{'{c}/blobs/delete'}}) AND "
        f"!(ActionMatches{{'{c}/blobs/move/action'}})\n"
        " )\n OR\n (\n"
        f"  {name} StringEquals 'serving-data'\n"
        " )\n)"
    )


# --------------------------------------------------------------------------------------------
# Every payload writes only where its team may write, and reads only where it may read
# --------------------------------------------------------------------------------------------


def _options(job: Mapping[str, Any]) -> dict[str, str]:
    argv = shlex.split(job["spec"]["entrypoint"])[3:]
    return {argv[i]: argv[i + 1] for i in range(0, len(argv) - 1) if argv[i].startswith("--")}


def test_every_payload_writes_and_reads_where_its_team_may() -> None:
    result = planned(f"prod{RUNNING}")
    found = conditions(result)
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
        assert may_write(found[team[workload]], container, "out/part-0"), workload
    # vllm-batch reads the adapter where qwen-lora wrote it; so does the endpoint: only it.
    assert _options(jobs["vllm-batch"])["--adapter-container"] == writes["qwen-lora"]
    (service,) = result.by_type("kubernetes:ray.io/v1:RayService")
    serve = yaml.safe_load(service.inputs["spec"]["serveConfigV2"])
    lora = serve["applications"][0]["args"]["llm_configs"][0]["lora_config"]
    path = lora["dynamic_lora_loading_path"]
    assert path.startswith("azure://nlp-data@") and path.endswith("/adapters/qwen-lora")
    for reader in ("vllm-batch", "llm-serve"):
        node = found[team[reader]]
        assert may_read(node, "nlp-data", ADAPTER_FILE), reader
        assert not may_read(node, "nlp-data", PRIVATE_PATHS[0]), reader


# --------------------------------------------------------------------------------------------
# Team names must make valid container names; Azure's limit on a condition
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
    assert may_write(conditions(result)["a" * 58], f"{'a' * 58}-data", "x")


def test_a_shared_container_may_not_take_a_teams_name(tmp_path: Path) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "storage"]["containers"] = ["datasets", "models", "nlp-data"]

    run_ = assert_rejected(tmp_path, mutated("prod", change), "storage.containers[2]")
    assert "'nlp-data' is team nlp's own container" in run_.stderr


def test_a_condition_longer_than_azure_allows_is_refused(tmp_path: Path) -> None:
    # 140 shared containers of 63 characters: each name appears twice in every condition
    # (reading and listing), so well over 140 x 2 x 63 = 17,640 characters.
    names = ["datasets", "models", *(f"{i:03d}" + "x" * 60 for i in range(138))]

    def change(config: dict[str, Any]) -> None:
        config[P + "storage"]["containers"] = names

    run_ = assert_rejected(tmp_path, mutated("dev", change), "storage.containers")
    found = re.search(
        r"error: storage.containers: team team-a's Blob role assignment would need a condition "
        r"of ([0-9,]+) characters naming its containers, above Azure's 8,192: use fewer or "
        r"shorter shared containers",
        run_.stderr,
    )
    assert found is not None, run_.stderr
    assert int(found.group(1).replace(",", "")) > 17_640

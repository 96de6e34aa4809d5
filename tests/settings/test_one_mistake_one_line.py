"""One mistake in a stack file gives one error line, at the key to change, and nothing that is
only its echo: a refused team name is not also an unknown team, a team `''` or a container
`-data`; a `workers` map is not also a missing list; a worker's `cluster` list is not also a
missing map or a flavor no pool provides; a wrong `regional` worker is not also an elastic
workload without one. And what Kubernetes accepts as a quantity plans."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.harness import P, cli, mutated, write_stack

Config = dict[str, Any]
LONG_NAME = "a" * 10_000


def _rename_team(name: str) -> Callable[[Config], None]:
    def mutate(config: Config) -> None:
        config[P + "scheduling"]["departments"][0]["teams"][0]["name"] = name
        for entry in config[P + "workloads"].values():
            entry["team"] = name

    return mutate


def _error_lines(tmp_path: Path, stack: str, mutate: Callable[[Config], None]) -> list[str]:
    run = cli("plan", "--config", write_stack(tmp_path, mutated(stack, mutate)))
    assert run.code == 1, run.output
    assert "Traceback" not in run.output and run.stdout == ""
    assert all(line.startswith("error: ") for line in run.stderr.splitlines()), run.stderr
    return run.error_lines


TEAM_PATH = "scheduling.departments[0].teams[0].name"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("TeamA", "'TeamA' is not valid: use a DNS-1123 label"),
        ("équipe", "'équipe' is not valid: use a DNS-1123 label"),
        (LONG_NAME, "is 10,000 characters long; no setting needs more than 1000"),
    ],
    ids=["capitals", "accent", "10000-characters"],
)
@pytest.mark.parametrize("stack", ["dev", "multiregion"])
def test_a_refused_team_name_is_one_line_at_the_name(
    tmp_path: Path, stack: str, name: str, message: str
) -> None:
    def mutate(config: Config) -> None:
        _rename_team(name)(config)
        for worker in (config.get(P + "multikueue") or {}).get("workers", []):
            worker["quota"] = {name: worker["quota"]["team-a"]}

    lines = _error_lines(tmp_path, stack, mutate)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {TEAM_PATH}: {message}"), lines


def test_a_workload_naming_a_team_that_does_not_exist_is_still_reported(tmp_path: Path) -> None:
    def mutate(config: Config) -> None:
        config[P + "workloads"]["qwen-lora"]["team"] = "team-b"

    assert _error_lines(tmp_path, "dev", mutate) == [
        "error: workloads.qwen-lora.team: unknown team 'team-b'; teams are: team-a"
    ]


def _multikueue(change: Callable[[Config], None]) -> Callable[[Config], None]:
    def mutate(config: Config) -> None:
        change(config[P + "multikueue"])

    return mutate


def _workers_as_map(section: Config) -> None:
    section["workers"] = {worker["name"]: worker for worker in section["workers"]}


def _cluster_as_list(section: Config) -> None:
    section["workers"][0]["cluster"] = [section["workers"][0]["cluster"]]


def _regional_worker(worker: object) -> Callable[[Config], None]:
    def change(section: Config) -> None:
        section["regional"] = {"vllm-batch": worker}

    return change


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (_workers_as_map, "multikueue.workers", "must be a list, got {"),
        (_cluster_as_list, "multikueue.workers[0].cluster", "must be a map, got ["),
        (
            _regional_worker("nowhere"),
            "multikueue.regional.vllm-batch",
            "must name a worker of multikueue.workers, got 'nowhere'; workers are weu, sce",
        ),
        (
            _regional_worker(5),
            "multikueue.regional.vllm-batch",
            "must name a worker of multikueue.workers, got 5; workers are weu, sce",
        ),
        (
            lambda section: section.update(regional=["weu"]),
            "multikueue.regional",
            'must be a map, got ["weu"]',
        ),
    ],
    ids=["workers-map", "cluster-list", "unknown-regional", "number-regional", "regional-list"],
)
def test_a_multikueue_mistake_is_one_line(
    tmp_path: Path, change: Callable[[Config], None], path: str, message: str
) -> None:
    lines = _error_lines(tmp_path, "multiregion", _multikueue(change))
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {path}: {message}"), lines


def test_an_elastic_workload_without_a_regional_worker_is_still_reported(tmp_path: Path) -> None:
    lines = _error_lines(tmp_path, "multiregion", _multikueue(lambda s: s.pop("regional")))
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "error: multikueue.regional.vllm-batch: vllm-batch is elastic (1..2 workers)"
    )


@pytest.mark.parametrize("written", ['"1.2e11"', '"120e9"', "'1.2E11'", "1.2e11", '"+1.2e+11"'])
def test_a_memory_per_gpu_in_exponent_form_plans(tmp_path: Path, written: str) -> None:
    """Kubernetes accepts `1.2e11` (and writes it back as `120e9`): so does the stack, quoted
    (a string) or not (a number)."""

    def mutate(config: Config) -> None:
        config[P + "workloads"]["qwen-lora"]["memoryPerGpu"] = "MEMORY"

    text = yaml.safe_dump(mutated("prod", mutate)).replace("MEMORY", written)
    assert f"memoryPerGpu: {written}" in text
    run = cli("plan", "--config", write_stack(tmp_path, text), "--json")
    assert run.code == 0, run.stderr
    assert run.error_lines == []
    assert '"memory": "117187500Ki"' in run.stdout  # 1.2e11 bytes, exactly, on each worker

"""Every validation rule of the stack config, fed through the CLI as a user would hit it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT
from settings.defaults import DEFAULT_LOCATION
from settings.errors import SettingsError
from settings.load import settings_from_config
from settings.parse import parse_settings
from tests.support.harness import P, assert_rejected, mutated, planned

Config = dict[str, Any]


def _gpu_pool(config: Config) -> Config:
    pool: Config = config[P + "cluster"]["gpuPools"][0]
    return pool


def _team(config: Config) -> Config:
    team: Config = config[P + "scheduling"]["departments"][0]["teams"][0]
    return team


def _add_team(config: Config, **team: Any) -> None:
    config[P + "scheduling"]["departments"][0]["teams"].append(team)


def _set(path: list[str | int], value: Any) -> Callable[[Config], None]:
    def mutate(config: Config) -> None:
        node: Any = config
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


TEAM: list[str | int] = [P + "scheduling", "departments", 0, "teams", 0]
POOL: list[str | int] = [P + "cluster", "gpuPools", 0]
T = "scheduling.departments[0].teams[0]"
G = "cluster.gpuPools[0]"

CASES: list[tuple[str, Callable[[Config], None], str, str]] = [
    # (case id, mutation of the dev stack, config path the error names, a word the fix carries)
    (
        "unknown-vm-size",
        _set([*POOL, "vmSize"], "Standard_NC24ads_A100"),
        f"{G}.vmSize",
        "Standard_NC24ads_A100_v4",
    ),
    (
        "cpu-size-for-gpu-pool",
        _set([*POOL, "vmSize"], "Standard_D8ds_v6"),
        f"{G}.vmSize",
        "not a GPU size",
    ),
    (
        "unknown-cpu-pool-size",
        _set([P + "cluster", "cpuPool", "vmSize"], "Standard_Q9"),
        "cluster.cpuPool.vmSize",
        "Standard_D8ds_v6",
    ),
    ("min-above-max", _set([*POOL, "minCount"], 6), f"{G}.minCount", "maxCount"),
    (
        "cpu-pool-min-above-max",
        _set([P + "cluster", "cpuPool", "minCount"], 4),
        "cluster.cpuPool.minCount",
        "maxCount",
    ),
    ("negative-count", _set([*POOL, "maxCount"], -1), f"{G}.maxCount", "whole number"),
    ("fractional-count", _set([*POOL, "minCount"], 0.5), f"{G}.minCount", "whole number"),
    ("string-count", _set([*POOL, "maxCount"], "five"), f"{G}.maxCount", "whole number"),
    ("huge-count", _set([*POOL, "maxCount"], 10**12), f"{G}.maxCount", "1000"),
    (
        "system-pool-zero",
        _set([P + "cluster", "systemPool", "count"], 0),
        "cluster.systemPool.count",
        "whole number",
    ),
    (
        "negative-gpu-quota",
        _set([*TEAM, "quota", "a100", "gpu"], -2),
        f"{T}.quota.a100.gpu",
        "whole number",
    ),
    (
        "fractional-gpu-quota",
        _set([*TEAM, "quota", "a100", "gpu"], 1.5),
        f"{T}.quota.a100.gpu",
        "whole number",
    ),
    (
        "malformed-memory",
        _set([*TEAM, "quota", "cpu", "memory"], "64Gb"),
        f"{T}.quota.cpu.memory",
        "64Gi",
    ),
    ("malformed-cpu", _set([*TEAM, "quota", "cpu", "cpu"], "eight"), f"{T}.quota.cpu.cpu", "500m"),
    (
        "memory-with-milli",
        _set([*TEAM, "quota", "cpu", "memory"], "500m"),
        f"{T}.quota.cpu.memory",
        "64Gi",
    ),
    (
        "gpu-on-cpu-flavor",
        _set([*TEAM, "quota", "cpu", "gpu"], 1),
        f"{T}.quota.cpu.gpu",
        "GPU pool",
    ),
    (
        "duplicate-pool",
        lambda c: c[P + "cluster"]["gpuPools"].append(dict(_gpu_pool(c))),
        "cluster.gpuPools[1].name",
        "duplicate",
    ),
    ("reserved-pool-name", _set([*POOL, "name"], "cpu"), f"{G}.name", "reserved"),
    ("pool-name-not-aks", _set([*POOL, "name"], "A100-Pool"), f"{G}.name", "lowercase"),
    ("pool-name-too-long", _set([*POOL, "name"], "gpupoolnumber1"), f"{G}.name", "1-12"),
    (
        "duplicate-team",
        lambda c: _add_team(c, name="team-a", namespace="team-z"),
        "scheduling.departments[0].teams[1].name",
        "duplicate team",
    ),
    (
        "duplicate-namespace",
        lambda c: _add_team(c, name="team-b", namespace="team-a"),
        "scheduling.departments[0].teams[1].namespace",
        "duplicate namespace",
    ),
    (
        "duplicate-department",
        lambda c: c[P + "scheduling"]["departments"].append(
            {"name": "research", "teams": [{"name": "team-b"}]}
        ),
        "scheduling.departments[1].name",
        "duplicate department",
    ),
    ("team-not-dns-label", _set([*TEAM, "name"], "Team_A"), f"{T}.name", "DNS-1123"),
    ("namespace-not-dns-label", _set([*TEAM, "namespace"], "team.a"), f"{T}.namespace", "DNS-1123"),
    (
        "department-not-dns-label",
        _set([P + "scheduling", "departments", 0, "name"], "R&D"),
        "scheduling.departments[0].name",
        "DNS-1123",
    ),
    ("team-named-default", _set([*TEAM, "name"], "default"), f"{T}.name", "default"),
    (
        "local-queue-named-default",
        _set([*TEAM, "localQueue"], "default"),
        f"{T}.localQueue",
        "default",
    ),
    (
        "team-in-kube-system",
        _set([*TEAM, "namespace"], "kube-system"),
        f"{T}.namespace",
        "own namespace",
    ),
    ("quota-unknown-flavor", _set([*TEAM, "quota", "h100"], {"gpu": 8}), f"{T}.quota.h100", "a100"),
    (
        "borrowing-unknown-flavor",
        _set([*TEAM, "borrowingLimit"], {"h100": {"gpu": 1}}),
        f"{T}.borrowingLimit.h100",
        "flavors are",
    ),
    (
        "lending-above-quota",
        _set([*TEAM, "lendingLimit"], {"a100": {"gpu": 9}}),
        f"{T}.lendingLimit.a100.gpu",
        "nominal",
    ),
    (
        "limit-without-quota",
        lambda c: (
            _set([*TEAM, "borrowingLimit"], {"cpu": {"cpu": 1}})(c) or _team(c)["quota"].pop("cpu")
        ),
        f"{T}.borrowingLimit.cpu",
        "no quota",
    ),
    (
        "workload-unknown-team",
        _set([P + "workloads", "vllm-batch", "team"], "team-x"),
        "workloads.vllm-batch.team",
        "team-a",
    ),
    (
        "workload-unknown-priority",
        _set([P + "workloads", "llm-serve", "priority"], "urgent"),
        "workloads.llm-serve.priority",
        "inference",
    ),
    (
        "enabled-workload-without-team",
        lambda c: c[P + "workloads"]["vllm-batch"].pop("team"),
        "workloads.vllm-batch.team",
        "required",
    ),
    (
        "unknown-workload",
        _set([P + "workloads", "stable-diffusion"], {"enabled": True}),
        "workloads.stable-diffusion",
        "qwen-lora",
    ),
    (
        "option-on-wrong-workload",
        _set([P + "workloads", "vllm-batch", "workers"], 2),
        "workloads.vllm-batch.workers",
        "unknown key",
    ),
    (
        "zero-workers",
        _set([P + "workloads", "qwen-lora", "workers"], 0),
        "workloads.qwen-lora.workers",
        "whole number",
    ),
    (
        "existing-without-context",
        _set([P + "cluster", "mode"], "existing"),
        "cluster.kubeconfigContext",
        "context",
    ),
    (
        "context-in-aks-mode",
        _set([P + "cluster", "kubeconfigContext"], "kind-dev"),
        "cluster.kubeconfigContext",
        "existing",
    ),
    ("unknown-mode", _set([P + "cluster", "mode"], "eks"), "cluster.mode", "aks, existing"),
    (
        "unknown-driver",
        _set([P + "cluster", "gpuDriver"], "nvidia"),
        "cluster.gpuDriver",
        "operator, aks",
    ),
    (
        "version-as-number",
        _set([P + "cluster", "kubernetesVersion"], 1.35),
        "cluster.kubernetesVersion",
        "quote",
    ),
    (
        "storage-off-with-blob-workloads",
        _set([P + "storage", "enabled"], False),
        "workloads.aurora-finetune.enabled",
        "storage.enabled",
    ),
    (
        "missing-container",
        _set([P + "storage", "containers"], ["datasets", "checkpoints"]),
        "workloads.vllm-batch.enabled",
        "models",
    ),
    (
        "bad-container-name",
        _set([P + "storage", "containers"], ["Data_Sets"]),
        "storage.containers[0]",
        "lowercase",
    ),
    ("not-a-bool", _set([P + "storage", "protect"], "yes"), "storage.protect", "true or false"),
    ("unknown-top-level-key", _set([P + "clustr"], {"mode": "aks"}), "clustr", "cluster"),
    ("unknown-cluster-key", _set([P + "cluster", "gpuPool"], []), "cluster.gpuPool", "gpuPools"),
    ("unknown-pool-key", _set([*POOL, "maxcount"], 4), f"{G}.maxcount", "maxCount"),
    ("unknown-team-key", _set([*TEAM, "quotas"], {}), f"{T}.quotas", "quota"),
    (
        "unknown-resource-key",
        _set([*TEAM, "quota", "a100", "gpus"], 4),
        f"{T}.quota.a100.gpus",
        "gpu",
    ),
    (
        "unknown-workload-key",
        _set([P + "workloads", "llm-serve", "enable"], True),
        "workloads.llm-serve.enable",
        "enabled",
    ),
    (
        "unknown-storage-key",
        _set([P + "storage", "protected"], True),
        "storage.protected",
        "protect",
    ),
    (
        "plain-text-token",
        _set([P + "huggingfaceToken"], "hf_abcdef"),
        "huggingfaceToken",
        "--secret",
    ),
    ("cluster-not-a-map", _set([P + "cluster"], "aks"), "cluster", "map"),
    ("bad-location", _set([P + "location"], "East US 2"), "location", "eastus2"),
]


@pytest.mark.parametrize(
    ("mutate", "path", "fix"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_config_is_rejected_with_its_path(
    tmp_path: Path, mutate: Callable[[Config], None], path: str, fix: str
) -> None:
    run = assert_rejected(tmp_path, mutated("dev", mutate), path)
    line = next(line for line in run.error_lines if line.startswith(f"error: {path}: "))
    assert fix in line


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    def break_three_things(config: Config) -> None:
        _gpu_pool(config)["vmSize"] = "Standard_NC1"
        _team(config)["quota"]["cpu"]["memory"] = "64Gb"
        config[P + "workloads"]["llm-serve"]["priority"] = "urgent"

    run = assert_rejected(tmp_path, mutated("dev", break_three_things), f"{G}.vmSize")
    paths = [line.split(": ")[1] for line in run.error_lines]
    assert paths == [f"{G}.vmSize", f"{T}.quota.cpu.memory", "workloads.llm-serve.priority"]


def test_unknown_vm_size_lists_the_known_sizes(tmp_path: Path) -> None:
    run = assert_rejected(
        tmp_path, mutated("dev", _set([*POOL, "vmSize"], "Standard_X")), f"{G}.vmSize"
    )
    for size in (
        "Standard_NC24ads_A100_v4",
        "Standard_ND96isr_H100_v5",
        "Standard_NC4as_T4_v3",
        "Standard_NV36ads_A10_v5",
    ):
        assert size in run.stderr
    assert "Standard_NC6s_v3" not in run.stderr  # retired: never offered as a choice


def test_valid_stacks_parse_to_the_documented_model() -> None:
    settings = planned("dev").settings
    assert settings.cluster.flavors == ("cpu", "a100")
    pool = settings.cluster.gpu_pools[0]
    assert (pool.name, pool.vm_size, pool.min_count, pool.max_count, pool.spot) == (
        "a100",
        "Standard_NC24ads_A100_v4",
        0,
        5,
        False,
    )
    team = settings.scheduling.team("team-a")
    assert team.namespace == "team-a" and team.local_queue == "team-a"
    assert team.quota["a100"].amount("nvidia.com/gpu") == 5
    assert team.quota["a100"].amount("cpu") is None
    assert team.quota["cpu"].amount("cpu") == 10000
    assert team.quota["cpu"].amount("memory") == 40 * 1024**3
    # The endpoint ships off in dev (it would hold a GPU node while up); the jobs are staged.
    assert {w.name for w in settings.enabled_workloads} == {
        "aurora-finetune",
        "qwen-lora",
        "vllm-batch",
        "model-stage",
    }
    # With storage on, the base model streams from the copy model-stage makes.
    streaming = {w.name: w.model_source for w in settings.workloads if w.model_source == "blob"}
    assert streaming == {"vllm-batch": "blob", "llm-serve": "blob"}
    assert all(w.staged for w in settings.enabled_workloads)
    assert next(w for w in settings.workloads if w.name == "qwen-lora").workers == 4


def test_settings_are_frozen() -> None:
    settings = planned("dev").settings
    with pytest.raises(AttributeError):
        settings.location = "westeurope"
    with pytest.raises(TypeError):
        settings.scheduling.team("team-a").quota["a100"] = None


def test_defaults_apply_when_sections_are_left_out() -> None:
    settings = parse_settings({}, stack="empty")
    assert settings.location == "eastus2"
    assert settings.cluster.mode == "aks" and settings.cluster.gpu_driver == "operator"
    assert settings.storage.containers == ("datasets", "models")
    assert settings.storage.enabled and not settings.storage.protect
    assert not settings.cluster.local_accounts
    assert settings.enabled_workloads == ()


def test_zero_is_kept_not_replaced_by_a_default() -> None:
    settings = parse_settings(
        {
            "cluster": {
                "gpuPools": [
                    {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 1}
                ]
            }
        },
        stack="zero",
    )
    assert settings.cluster.gpu_pools[0].min_count == 0


def test_settings_error_is_a_pulumi_run_error_with_one_line_per_problem() -> None:
    """The pure parser raises SettingsError; what the program loads from the Pulumi runtime
    raises it as a pulumi.RunError, which `pulumi up` prints without a traceback."""
    expected = [
        "zzz: unknown key; known keys here: location, cluster, storage, scheduling, "
        "workloads, operators, observability, huggingfaceToken, multikueue",
        "location: 'X' is not valid: an Azure region name such as eastus2 or westeurope",
    ]
    with pytest.raises(SettingsError) as parsed:
        parse_settings({"location": "X", "zzz": "blue"}, stack="bad")
    assert [str(p) for p in parsed.value.problems] == expected
    with pytest.raises(SettingsError) as loaded:
        settings_from_config({f"{P}location": "X", f"{P}zzz": "blue"}, set(), stack="bad")
    assert isinstance(loaded.value, pulumi.RunError)
    assert [str(p) for p in loaded.value.problems] == expected
    assert str(loaded.value) == str(parsed.value)


def test_the_project_file_defaults_are_the_settings_defaults() -> None:
    """Pulumi.yaml types the scalar keys; a `default:` it gives must be the one the settings
    fill in, or `pulumi config` and the program would disagree."""
    project = yaml.safe_load((PROJECT_ROOT / "Pulumi.yaml").read_text())
    given = {
        key: schema["default"]
        for key, schema in project["config"].items()
        if isinstance(schema, dict) and "default" in schema
    }
    assert given == {"location": DEFAULT_LOCATION}
    assert parse_settings({}, stack="dev").location == DEFAULT_LOCATION


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            _set([*TEAM, "borrowingLimit"], {"a100": {"gpu": "unlimited"}}),
            f"{T}.borrowingLimit.a100.gpu",
        ),
        (_set([P + "storage", "containers"], "datasets"), "storage.containers"),
        (lambda c: _add_team(c, name="team-a"), "scheduling.departments[0].teams[1].name"),
        (_set([*TEAM, "quota", "cpu", "memory"], 32), f"{T}.quota.cpu.memory"),
    ],
    ids=["unlimited-limit", "containers-not-a-list", "duplicate-team", "memory-without-unit"],
)
def test_one_mistake_is_one_line(
    tmp_path: Path, mutate: Callable[[Config], None], path: str
) -> None:
    """A mistake is reported once, at its own path: no follow-on errors from defaults that
    derive from the broken value."""
    run = assert_rejected(tmp_path, mutated("dev", mutate), path)
    assert [line.split(": ")[1] for line in run.error_lines] == [path], run.stderr


def test_a_memory_number_without_unit_says_which_unit(tmp_path: Path) -> None:
    run = assert_rejected(
        tmp_path,
        mutated("dev", _set([*TEAM, "quota", "cpu", "memory"], 32)),
        f"{T}.quota.cpu.memory",
    )
    assert run.error_lines == [
        f'error: {T}.quota.cpu.memory: 32 is 32 bytes, less than 1Mi: add the unit, e.g. "32Gi"'
    ]


def test_a_run_label_may_be_a_number() -> None:
    """`pulumi config set --path 'workloads.qwen-lora.run' 1` stores the number 1."""
    settings = parse_settings(
        {
            "scheduling": {"departments": [{"name": "d", "teams": [{"name": "t"}]}]},
            "workloads": {"qwen-lora": {"enabled": True, "team": "t", "run": 1}},
        },
        stack="runs",
    )
    qwen = next(w for w in settings.workloads if w.name == "qwen-lora")
    assert (qwen.run, qwen.staged) == ("1", False)
    with pytest.raises(SettingsError) as raised:
        parse_settings({"workloads": {"qwen-lora": {"run": True}}}, stack="runs")
    assert [p.path for p in raised.value.problems] == ["workloads.qwen-lora.run"]


K = "operators.kaiActions"


@pytest.mark.parametrize(
    ("stack", "actions", "path", "fix"),
    [
        ("local", ["allocate", "preemt"], f"{K}[1]", "'preemt' is not a KAI scheduler action"),
        ("local", ["allocate", "allocate"], f"{K}[1]", "duplicate action 'allocate'"),
        ("local", [], K, "must not be empty: with no actions KAI's scheduler runs all five"),
        ("local", "allocate", K, "must be a list"),
        ("dev", ["allocate"], K, "is only for operators.install: false"),
    ],
    ids=["misspelt", "duplicate", "empty", "not-a-list", "with-installed-operators"],
)
def test_kai_actions_are_kais_own_and_only_for_an_existing_kai(
    tmp_path: Path, stack: str, actions: Any, path: str, fix: str
) -> None:
    def declare(config: Config) -> None:
        config.setdefault(P + "operators", {})["kaiActions"] = actions

    run = assert_rejected(tmp_path, mutated(stack, declare), path)
    line = next(line for line in run.error_lines if line.startswith(f"error: {path}: "))
    assert fix in line


def test_kai_actions_as_declared() -> None:
    assert planned("local").settings.operators.kai_actions == ("allocate",)
    assert planned("dev").settings.operators.kai_actions is None  # the stack installs KAI


def test_a_key_set_without_path_says_to_use_path() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings({"cluster.gpuPools[0].maxCount": 4}, stack="dev")
    assert [str(p) for p in caught.value.problems] == [
        "cluster.gpuPools[0].maxCount: is one key whose name holds the path, not a setting "
        "inside `cluster`: `pulumi config set` stores that when `--path` is left out. Run "
        "`pulumi config rm 'cluster.gpuPools[0].maxCount'` and `pulumi config set --path "
        "'cluster.gpuPools[0].maxCount' <value>`"
    ]

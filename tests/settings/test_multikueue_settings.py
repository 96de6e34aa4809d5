"""The `multikueue` section: workers in named regions, quota per team per worker, regional
workloads; each mistake refused with its config path, nothing registered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import run_program, stack_file
from settings.errors import SettingsError
from settings.parse import parse_settings
from tests.support.harness import P, assert_rejected, planned, stack_document, write_stack

Config = dict[str, Any]


def _multiregion() -> dict[str, Any]:
    return stack_document("multiregion")


def test_the_example_stack_parses_to_two_workers() -> None:
    settings = run_program(stack_file("multiregion"), stack="multiregion").settings
    multikueue = settings.multikueue
    assert [(w.name, w.location) for w in multikueue.workers] == [
        ("weu", "westeurope"),
        ("sce", "swedencentral"),
    ]
    weu = multikueue.worker("weu")
    assert dict(weu.team_quota("team-a")["a100"].given) == {"nvidia.com/gpu": 4}
    assert [p.name for p in weu.cluster.gpu_pools] == ["a100"]
    assert dict(multikueue.regional) == {"vllm-batch": "weu"}
    assert settings.cluster.gpu_pools == ()


@pytest.mark.parametrize(("given", "label"), [(None, ""), ("2026-12", "2026-12"), (3, "3")])
def test_the_token_rotation_label_is_read_as_written(
    tmp_path: Path, given: object, label: str
) -> None:
    document = _multiregion()
    if given is not None:
        document["config"][P + "multikueue"]["tokenRotation"] = given
    path = write_stack(tmp_path, document, "Pulumi.multiregion.yaml")
    multikueue = run_program(path, stack="multiregion").settings.multikueue
    assert multikueue is not None and multikueue.token_rotation == label


def test_one_cluster_stacks_have_no_multikueue() -> None:
    assert planned("dev").settings.multikueue is None


def _worker(config: Config, index: int = 0) -> Config:
    worker: Config = config[P + "multikueue"]["workers"][index]
    return worker


def _manager_gpu_pool(config: Config) -> None:
    config[P + "cluster"]["gpuPools"] = [
        {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "maxCount": 1}
    ]


def _typed_manager_quota(config: Config) -> None:
    config[P + "scheduling"]["departments"][0]["teams"][0]["quota"] = {"cpu": {"cpu": 1}}


def _elastic_unpinned(config: Config) -> None:
    del config[P + "multikueue"]["regional"]


def _unknown_team(config: Config) -> None:
    _worker(config)["quota"]["team-z"] = {"a100": {"gpu": 1}}


def _unknown_flavor(config: Config) -> None:
    _worker(config)["quota"]["team-a"]["h100"] = {"gpu": 1}


def _pool_size_disagrees(config: Config) -> None:
    _worker(config, 1)["cluster"]["gpuPools"][0]["vmSize"] = "Standard_NC40ads_H100_v5"


def _regional_unknown_worker(config: Config) -> None:
    config[P + "multikueue"]["regional"]["vllm-batch"] = "neu"


def _regional_without_quota(config: Config) -> None:
    del _worker(config)["quota"]["team-a"]


def _duplicate_worker(config: Config) -> None:
    _worker(config, 1)["name"] = "weu"


def _region_typo(config: Config) -> None:
    _worker(config)["location"] = "westeurop"


def _no_workers(config: Config) -> None:
    config[P + "multikueue"]["workers"] = []


def _worker_existing_mode(config: Config) -> None:
    _worker(config)["cluster"]["mode"] = "existing"


def _worker_region_without_the_size(config: Config) -> None:
    """northcentralus is in the region table and offers no A100 PCIe size."""
    _worker(config)["location"] = "northcentralus"


def _token_rotation_uppercase(config: Config) -> None:
    config[P + "multikueue"]["tokenRotation"] = "Dec-2026"


def _microsoft_charts(config: Config) -> None:
    config[P + "operators"] = {"chartSource": "mcr"}


def _worker_retired_kubernetes(config: Config) -> None:
    _worker(config, 1)["cluster"]["kubernetesVersion"] = "1.31"


def _existing_fleet(config: Config) -> None:
    """The manager and both workers are clusters that already exist, reached by context."""
    config[P + "cluster"] = {"mode": "existing", "kubeconfigContext": "manager", "gpuPools": []}
    config[P + "storage"] = {"enabled": True, "existingAccount": "teamdata"}
    config[P + "operators"] = {"install": False}
    for worker in config[P + "multikueue"]["workers"]:
        worker["cluster"] = {
            "mode": "existing",
            "kubeconfigContext": worker["name"],
            "gpuPools": worker["cluster"]["gpuPools"],
        }
        worker["apiServer"] = f"https://{worker['name']}.example.com:443"


def _aks_worker_of_existing_manager(config: Config) -> None:
    _existing_fleet(config)
    worker = _worker(config, 1)
    worker["cluster"] = {"gpuPools": worker["cluster"]["gpuPools"]}
    del worker["apiServer"]


def _existing_worker_without_api_server(config: Config) -> None:
    _existing_fleet(config)
    del _worker(config)["apiServer"]


def _api_server_of_an_aks_worker(config: Config) -> None:
    _worker(config)["apiServer"] = "https://weu.example.com"


def _api_server_not_https(config: Config) -> None:
    _existing_fleet(config)
    _worker(config)["apiServer"] = "http://weu.example.com:80"


@pytest.mark.parametrize(
    ("mutate", "path", "words"),
    [
        (_manager_gpu_pool, "cluster.gpuPools", "runs no job"),
        (_typed_manager_quota, "scheduling.departments[0].teams[0].quota", "sum of its quota"),
        (_elastic_unpinned, "multikueue.regional.vllm-batch", "does not dispatch an elastic"),
        (_unknown_team, "multikueue.workers[0].quota.team-z", "no team 'team-z'"),
        (_unknown_flavor, "multikueue.workers[0].quota.team-a.h100", "no pool provides"),
        (
            _pool_size_disagrees,
            "multikueue.workers[1].cluster.gpuPools[0].vmSize",
            "one VM size in every worker",
        ),
        (_regional_unknown_worker, "multikueue.regional.vllm-batch", "workers are weu, sce"),
        (_duplicate_worker, "multikueue.workers[1].name", "duplicate worker name"),
        (
            _regional_without_quota,
            "multikueue.regional.vllm-batch",
            "team team-a has no quota in worker weu",
        ),
        (_region_typo, "multikueue.workers[0].location", "did you mean 'westeurope'"),
        (_no_workers, "multikueue.workers", "at least one worker"),
        (_token_rotation_uppercase, "multikueue.tokenRotation", "1-20 lowercase letters"),
        (_worker_existing_mode, "multikueue.workers[0].cluster.mode", "AKS cluster"),
        (
            _worker_region_without_the_size,
            "multikueue.workers[0].cluster.gpuPools[0].vmSize",
            "northcentralus does not offer Standard_NC24ads_A100_v4",
        ),
        (_microsoft_charts, "operators.chartSource", "aksExtension.enableMultiKueue"),
        (
            _worker_retired_kubernetes,
            "multikueue.workers[1].cluster.kubernetesVersion",
            "AKS ended support for Kubernetes 1.31",
        ),
        (
            _aks_worker_of_existing_manager,
            "multikueue.workers[1].cluster.mode",
            "set mode: existing, kubeconfigContext and apiServer",
        ),
        (_existing_worker_without_api_server, "multikueue.workers[0].apiServer", "required"),
        (_api_server_of_an_aks_worker, "multikueue.workers[0].apiServer", "only for a worker"),
        (_api_server_not_https, "multikueue.workers[0].apiServer", "https://"),
    ],
)
def test_mistakes_are_refused_at_their_path(
    tmp_path: Path, mutate: Any, path: str, words: str
) -> None:
    document = _multiregion()
    mutate(document["config"])
    run = assert_rejected(tmp_path, document, path)
    line = next(x for x in run.error_lines if x.startswith(f"error: {path}: "))
    assert words in line


def test_a_worker_name_too_long_for_the_stack_is_refused() -> None:
    """`<stack>-<worker>` names the worker's Azure resources: at most 40 characters."""
    config = _multiregion()["config"]
    raw = {key.removeprefix(P): value for key, value in config.items()}
    with pytest.raises(SettingsError) as refused:
        parse_settings(raw, stack="s" * 37)
    assert [str(p) for p in refused.value.problems] == [
        f"multikueue.workers[{i}].name: {name!r} is too long for this stack: '<stack>-<worker>' "
        "names the worker's Azure resources and may have at most 40 characters; use at most 2 "
        "characters"
        for i, name in enumerate(("weu", "sce"))
    ]
    assert parse_settings(raw, stack="s" * 36).multikueue is not None


def test_a_fleet_of_existing_clusters_parses_with_each_worker_api_server(tmp_path: Path) -> None:
    document = _multiregion()
    _existing_fleet(document["config"])
    path = write_stack(tmp_path, document, "Pulumi.multiregion.yaml")
    result = run_program(path, stack="multiregion")
    assert not result.problems
    multikueue = result.settings.multikueue
    assert [
        (w.cluster.mode, w.cluster.kubeconfig_context, w.api_server) for w in multikueue.workers
    ] == [
        ("existing", "weu", "https://weu.example.com:443"),
        ("existing", "sce", "https://sce.example.com:443"),
    ]
    providers = {
        r.name: r.inputs.get("context")
        for r in result.resources
        if r.type == "pulumi:providers:kubernetes"
    }
    assert providers == {
        "aksray-cluster-k8s": "manager",
        "aksray-weu-cluster-k8s": "weu",
        "aksray-sce-cluster-k8s": "sce",
    }
    assert not [r for r in result.resources if r.type.startswith("azure-native:")]

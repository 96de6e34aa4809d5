"""`cluster.imageCache`: the Ray image pulled through an Azure Container Registry of the stack.

prod turns it on: a registry, a Docker Hub credential set reading two Key Vault secrets, an
artifact cache rule for `rayproject/ray-llm`, AcrPull for the kubelet identity, and every Ray
pod on `<registry>.azurecr.io/rayproject/ray-llm:<tag>`, created after the rule and the grants.
Off (dev), nothing of it, Docker Hub's image, and the plan warns once the GPU pools can add more
nodes than Docker Hub allows anonymous pulls an hour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import RecordedResource, RunResult, run_program
from aksray.plan.checks.run import run_checks
from aksray.plan.model.plan import plan
from catalog.versions import RAY_IMAGE
from tests.support.harness import (
    P,
    assert_rejected,
    mutated,
    one,
    planned,
    resources,
    write_stack,
)

REGISTRY = "azure-native:containerregistry:Registry"
CREDENTIALS = "azure-native:containerregistry:CredentialSet"
RULE = "azure-native:containerregistry:CacheRule"
ROLE = "azure-native:authorization:RoleAssignment"
VAULT = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-platform-secrets/"
    "providers/Microsoft.KeyVault/vaults/kv-aksray-prod"
)
ROLES = "/providers/Microsoft.Authorization/roleDefinitions/"
CACHED = f"aksrayprodxxxxxxxx.azurecr.io/{RAY_IMAGE}"
RAY_KINDS = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")


def _images(resource: RecordedResource) -> list[str]:
    spec = resource.inputs["spec"]
    cluster = spec.get("rayClusterSpec") or spec["rayClusterConfig"]
    groups = [cluster["headGroupSpec"], *cluster.get("workerGroupSpecs", [])]
    return [c["image"] for g in groups for c in g["template"]["spec"]["containers"]]


def _ray_objects(result: RunResult) -> list[RecordedResource]:
    return [r for kind in RAY_KINDS for r in resources(result, kind)]


def test_prod_creates_the_registry_the_credential_set_and_the_cache_rule() -> None:
    result = planned("prod")
    registry = one(result, REGISTRY, "aksray-image-cache-registry")
    assert registry.inputs == {
        "registryName": "aksrayprodxxxxxxxx",
        "resourceGroupName": "rg-aksray-prod",
        "location": "eastus2",
        "sku": {"name": "Standard"},
        "adminUserEnabled": False,
        "anonymousPullEnabled": False,
        "publicNetworkAccess": "Enabled",
        # the provider's defaults, as it records them
        "networkRuleBypassOptions": "AzureServices",
        "zoneRedundancy": "Disabled",
    }
    credentials = one(result, CREDENTIALS, "aksray-image-cache-dockerhub")
    assert credentials.inputs == {
        "credentialSetName": "dockerhub",
        "registryName": "aksrayprodxxxxxxxx",
        "resourceGroupName": "rg-aksray-prod",
        "loginServer": "docker.io",
        "identity": {"type": "SystemAssigned"},
        "authCredentials": [
            {
                "name": "Credential1",
                "usernameSecretIdentifier": "https://kv-aksray-prod.vault.azure.net/secrets/"
                "dockerhub-username",
                "passwordSecretIdentifier": "https://kv-aksray-prod.vault.azure.net/secrets/"
                "dockerhub-token",
            }
        ],
    }
    rule = one(result, RULE, "aksray-image-cache-ray-llm")
    assert {k: v for k, v in rule.inputs.items() if k != "credentialSetResourceId"} == {
        "cacheRuleName": "ray-llm",
        "registryName": "aksrayprodxxxxxxxx",
        "resourceGroupName": "rg-aksray-prod",
        "sourceRepository": "docker.io/rayproject/ray-llm",
        "targetRepository": "rayproject/ray-llm",
    }
    assert rule.property_dependencies["credentialSetResourceId"] == (credentials.urn,)


def test_the_kubelet_pulls_and_the_credential_set_reads_one_secret_each() -> None:
    result = planned("prod")
    registry = one(result, REGISTRY, "aksray-image-cache-registry")
    pull = one(result, ROLE, "aksray-image-cache-acr-pull")
    assert pull.property_dependencies["scope"] == (registry.urn,)
    assert pull.inputs["principalId"] == (
        "<unknown until deploy: kubelet identity object id of aks-aksray-prod>"
    )
    assert pull.inputs["principalType"] == "ServicePrincipal"
    assert pull.inputs["roleDefinitionId"].endswith(ROLES + "7f951dda-4ed3-4680-a7ca-43fe172d538d")
    credentials = one(result, CREDENTIALS, "aksray-image-cache-dockerhub")
    for which, secret in (("username", "dockerhub-username"), ("password", "dockerhub-token")):
        grant = one(result, ROLE, f"aksray-image-cache-dockerhub-{which}")
        assert grant.inputs["scope"] == f"{VAULT}/secrets/{secret}"
        assert grant.property_dependencies["principalId"] == (credentials.urn,)
        assert grant.inputs["roleDefinitionId"].endswith(
            ROLES + "4633458b-17de-408a-b874-0445c86b69e6"
        )
    assert result.outputs["imageCacheRegistry"] == "aksrayprodxxxxxxxx"


def test_every_ray_pod_pulls_through_the_registry_after_the_rule_and_the_grants() -> None:
    result = planned("prod+run")
    needed = {
        one(result, RULE, "aksray-image-cache-ray-llm").urn,
        one(result, ROLE, "aksray-image-cache-acr-pull").urn,
        one(result, ROLE, "aksray-image-cache-dockerhub-username").urn,
        one(result, ROLE, "aksray-image-cache-dockerhub-password").urn,
    }
    ray = _ray_objects(result)
    assert {r.name for r in ray} == {
        "aksray-workloads-aurora-finetune",
        "aksray-workloads-qwen-lora",
        "aksray-workloads-vllm-batch",
        "aksray-workloads-llm-serve",
        "aksray-workloads-model-stage",
    }
    for resource in ray:
        assert set(_images(resource)) == {CACHED}, resource.name
        assert needed <= set(resource.depends_on), resource.name


def test_off_nothing_of_it_and_docker_hubs_image() -> None:
    result = planned("dev+run")
    assert [r for r in result.resources if "containerregistry" in r.type] == []
    assert "imageCacheRegistry" not in result.outputs
    assert {image for r in _ray_objects(result) for image in _images(r)} == {RAY_IMAGE}


def test_without_the_stacks_role_assignments_the_rule_alone_orders_the_pods(
    tmp_path: Path,
) -> None:
    def change(config: dict[str, Any]) -> None:
        config[P + "cluster"]["createRoleAssignments"] = False

    result = run_program(
        write_stack(tmp_path, mutated("prod", change), "Pulumi.prod.yaml"), stack="prod"
    )
    assert result.ok, result.problems
    assert [r.name for r in resources(result, ROLE) if "image-cache" in r.name] == []
    rule = one(result, RULE, "aksray-image-cache-ray-llm")
    serve = one(result, "kubernetes:ray.io/v1:RayService", "aksray-workloads-llm-serve")
    assert rule.urn in serve.depends_on
    assert set(_images(serve)) == {CACHED}


def _cache(change: dict[str, Any] | str, stack: str = "dev") -> dict[str, Any]:
    def mutate(config: dict[str, Any]) -> None:
        config[P + "cluster"]["imageCache"] = change

    return mutated(stack, mutate)


@pytest.mark.parametrize(
    ("cache", "path"),
    [
        ({"enabled": True}, "cluster.imageCache.dockerHub"),
        ({"enabled": True, "dockerHub": {}}, "cluster.imageCache.dockerHub.keyVaultId"),
        (
            {"enabled": True, "dockerHub": {"keyVaultId": "kv-aksray-prod"}},
            "cluster.imageCache.dockerHub.keyVaultId",
        ),
        (
            {"enabled": True, "dockerHub": {"keyVaultId": VAULT, "usernameSecret": "a_b"}},
            "cluster.imageCache.dockerHub.usernameSecret",
        ),
        ({"enabled": "yes"}, "cluster.imageCache.enabled"),
        ({"sku": "Classic"}, "cluster.imageCache.sku"),
        ({"registry": "x"}, "cluster.imageCache.registry"),
        ("on", "cluster.imageCache"),
    ],
)
def test_a_wrong_image_cache_is_one_line_at_its_key(
    tmp_path: Path, cache: dict[str, Any] | str, path: str
) -> None:
    run = assert_rejected(tmp_path, _cache(cache), path)
    assert len(run.error_lines) == 1, run.error_lines


def test_docker_hub_without_credentials_says_what_to_create(tmp_path: Path) -> None:
    run = assert_rejected(tmp_path, _cache({"enabled": True}), "cluster.imageCache.dockerHub")
    assert "ACR caches Docker Hub images only with credentials" in run.stderr
    assert "Key Vault (Azure RBAC permission model)" in run.stderr


def test_an_existing_cluster_or_a_multikueue_cluster_is_refused(tmp_path: Path) -> None:
    cache = {"enabled": True, "dockerHub": {"keyVaultId": VAULT}}
    run = assert_rejected(tmp_path, _cache(cache, "local"), "cluster.imageCache.enabled")
    assert "is only for mode aks" in run.stderr

    def both(config: dict[str, Any]) -> None:
        config[P + "cluster"]["imageCache"] = cache
        config[P + "multikueue"]["workers"][0]["cluster"]["imageCache"] = cache

    run = assert_rejected(tmp_path, mutated("multiregion", both), "cluster.imageCache.enabled")
    assert [line.split(": ")[1] for line in run.error_lines] == [
        "multikueue.workers[0].cluster.imageCache.enabled",
        "cluster.imageCache.enabled",
    ]


def _warnings(tmp_path: Path, document: dict[str, Any], stack: str = "dev") -> list[str]:
    result = run_program(write_stack(tmp_path, document, f"Pulumi.{stack}.yaml"), stack=stack)
    assert result.ok, result.problems
    findings = run_checks(plan(result))
    return [w.message for w in findings.warnings if w.path == "cluster.imageCache.enabled"]


@pytest.mark.parametrize(("max_count", "warned"), [(10, False), (11, True)])
def test_off_the_plan_warns_past_ten_new_gpu_nodes(
    tmp_path: Path, max_count: int, warned: bool
) -> None:
    def grow(config: dict[str, Any]) -> None:
        config[P + "cluster"]["gpuPools"][0]["maxCount"] = max_count

    found = _warnings(tmp_path, mutated("dev", grow))
    assert bool(found) is warned
    if warned:
        assert found[0].startswith(
            f"the GPU pools can add {max_count} nodes and each pulls {RAY_IMAGE} (about 10 GB) "
            "from Docker Hub without credentials, which allows 10 pulls an hour per IP address"
        )


def test_no_warning_when_the_cache_is_on() -> None:
    assert not [w for w in run_checks(plan(planned("prod"))).warnings if "Docker Hub" in w.message]

"""Deploy and destroy order, and what `pulumi destroy` may remove, read from the recorded plan.

Pulumi deletes a resource only after everything that depends on it, so the creation edges below
are also the teardown order: workloads and queues go while the operators whose webhooks and
finalizers serve them still run; operators go before the cluster; namespaces last.
"""

from __future__ import annotations

import pytest

from aksray.offline.runner import RecordedResource, RunResult
from catalog.versions import KUBERAY_CRDS
from tests.support.harness import one, planned, transitive_dependencies

RELEASE = "kubernetes:helm.sh/v3:Release"
RAY_KINDS = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"
INSTALLING = ("dev+run", "prod+run")  # stacks that install the operators, jobs submitted


def _ray(result: RunResult) -> list[RecordedResource]:
    return [r for r in result.resources if r.type in RAY_KINDS]


def _urn(result: RunResult, type_token: str, name: str) -> str:
    return one(result, type_token, name).urn


@pytest.mark.parametrize("stack", INSTALLING)
def test_every_ray_workload_waits_for_kueue_kuberay_and_its_own_queues(stack: str) -> None:
    result = planned(stack)
    kueue = _urn(result, RELEASE, "aksray-operators-kueue")
    kuberay = _urn(result, RELEASE, "aksray-operators-kuberay-operator")
    assert _ray(result)
    for ray in _ray(result):
        team = ray.inputs["metadata"]["labels"]["kai.scheduler/queue"]
        priority = ray.inputs["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
        own = {
            _urn(result, f"{KUEUE}LocalQueue", f"aksray-queues-lq-{team}"),
            _urn(result, KAI_QUEUE, f"aksray-queues-kai-{team}"),
            _urn(result, f"{KUEUE}WorkloadPriorityClass", f"aksray-queues-priority-{priority}"),
        }
        assert {kueue, kuberay} | own <= set(ray.depends_on), ray.name
        # ... and on no other team's queue: only real orderings.
        queues = {u for u in ray.depends_on if "LocalQueue" in u or KAI_QUEUE in u}
        assert queues <= own, ray.name


@pytest.mark.parametrize("stack", INSTALLING)
def test_kueue_counts_as_created_only_when_its_webhook_serves(stack: str) -> None:
    kueue = one(planned(stack), RELEASE, "aksray-operators-kueue")
    # helm.v3.Release waits for every object of the release to be ready (the webhook's
    # Deployment included) unless skipAwait; a RayJob created earlier would start unsuspended.
    assert kueue.inputs["skipAwait"] is False
    assert kueue.inputs["timeout"] == 600


@pytest.mark.parametrize("stack", INSTALLING)
def test_queues_wait_for_the_release_that_installs_their_crds(stack: str) -> None:
    result = planned(stack)
    kueue = _urn(result, RELEASE, "aksray-operators-kueue")
    kai = _urn(result, RELEASE, "aksray-operators-kai-scheduler")
    for resource in result.resources:
        if resource.type.startswith(KUEUE):
            assert kueue in resource.depends_on, resource.name
        if resource.type == KAI_QUEUE:
            assert kai in resource.depends_on, resource.name


@pytest.mark.parametrize("stack", INSTALLING)
def test_operators_never_wait_for_what_they_serve(stack: str) -> None:
    """No release depends on a queue or a workload, so destroy removes those first."""
    result = planned(stack)
    by_urn = result.by_urn()
    for release in result.by_type(RELEASE):
        waits_for = {by_urn[u].type for u in transitive_dependencies(result, release)}
        assert not any(t.startswith(("kubernetes:ray.io", KUEUE, KAI_QUEUE)) for t in waits_for)


@pytest.mark.parametrize("stack", INSTALLING)
def test_operators_go_before_the_cluster(stack: str) -> None:
    result = planned(stack)
    provider = one(result, "pulumi:providers:kubernetes", "aksray-cluster-k8s")
    cluster = _urn(result, "azure-native:containerservice:ManagedCluster", "aksray-cluster-aks")
    cpu_pool = _urn(result, "azure-native:containerservice:AgentPool", "aksray-cluster-pool-cpu")
    assert {cluster, cpu_pool} <= transitive_dependencies(result, provider)
    for release in result.by_type(RELEASE):
        assert release.provider_urn == provider.urn, release.name


@pytest.mark.parametrize("stack", ["dev+run", "prod+run", "local"])
def test_namespaces_go_last(stack: str) -> None:
    """Everything namespaced waits for its namespace, so the namespace is deleted after it."""
    result = planned(stack)
    namespaces = {
        r.inputs["metadata"]["name"]: r.urn for r in result.by_type("kubernetes:core/v1:Namespace")
    }
    checked = 0
    for resource in result.resources:
        namespace = (resource.inputs.get("metadata") or {}).get("namespace")
        if resource.type.startswith("kubernetes:") and namespace in namespaces:
            assert namespaces[namespace] in transitive_dependencies(result, resource), resource.name
            checked += 1
    assert checked > 0


PROTECTED_IN_PROD = {
    # The account name's random suffix: a new one would mean a new account.
    ("random:index/randomString:RandomString", "aksray-storage-suffix"),
    ("azure-native:resources:ResourceGroup", "aksray-storage-rg"),
    ("azure-native:storage:StorageAccount", "aksray-storage-account"),
    ("azure-native:storage:BlobServiceProperties", "aksray-storage-blob-service"),
    ("azure-native:storage:BlobContainer", "aksray-storage-datasets"),
    ("azure-native:storage:BlobContainer", "aksray-storage-models"),
    # Each team's own container: its checkpoints, adapters and results.
    *(
        ("azure-native:storage:BlobContainer", f"aksray-storage-{team}-data")
        for team in ("nlp", "vision", "serving", "training")
    ),
}


@pytest.mark.parametrize("stack", ["dev", "prod", "local"])
def test_protected_resources_depend_only_on_protected_resources(stack: str) -> None:
    """Replacing an unprotected dependency (a changed or `--replace`d input) would force the
    protected resource that uses it to be replaced: Pulumi refuses that, but only after it has
    created the new dependency. Protected all the way down, it stops at the first step."""
    result = planned(stack)
    by_urn = result.by_urn()
    for resource in result.resources:
        if not resource.protect:
            continue
        for urn in transitive_dependencies(result, resource):
            dependency = by_urn[urn]
            if dependency.custom and not dependency.type.startswith("pulumi:providers:"):
                assert dependency.protect, f"{resource.name} depends on {dependency.name}"


@pytest.mark.parametrize(
    ("stack", "protected"), [("prod", PROTECTED_IN_PROD), ("dev", set()), ("local", set())]
)
def test_only_prod_data_survives_destroy(stack: str, protected: set[tuple[str, str]]) -> None:
    result = planned(stack)
    assert {(r.type, r.name) for r in result.resources if r.protect} == protected
    # Nothing is silently left behind in Azure or the cluster either, but KubeRay's CRDs where
    # the stack installs the operators: deleting a CRD deletes every object of its kind, and
    # Helm, which installed them before the stack did, never deletes them either
    # (components/chart_crds.py). On AKS they go with the cluster.
    retained = [r.name for r in result.resources if r.retain_on_delete]
    installs = result.settings.operators.install
    assert retained == (
        [f"aksray-operators-kuberay-operator-crd-{crd}" for crd in KUBERAY_CRDS] if installs else []
    )

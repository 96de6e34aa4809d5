"""What docs/multikueue.md says `pulumi destroy --stack multiregion` does follows from the
recorded plan: Pulumi deletes a resource before what it depends on, and nothing is protected."""

from __future__ import annotations

import re

from aksray.offline.runner import PROJECT_ROOT, RecordedResource
from aksray.plan.model.graph import waits_for
from catalog.versions import KUBERAY_CRDS
from tests.support.harness import planned

WORKERS = ("weu", "sce")


def _named(pattern: str) -> list[RecordedResource]:
    return [
        r for r in planned("multiregion").resources if r.custom and re.fullmatch(pattern, r.name)
    ]


def _waits(resource: RecordedResource) -> set[str]:
    """Every resource this one is created after, directly or through others (destroy deletes
    it before all of them)."""
    by_urn = {r.urn: r.name for r in planned("multiregion").resources}
    edges = waits_for(planned("multiregion").resources)
    seen: set[str] = set()
    todo = list(edges[resource.urn])
    while todo:
        urn = todo.pop()
        if urn not in seen:
            seen.add(urn)
            todo.extend(edges[urn])
    return {by_urn[u] for u in seen}


def test_the_multikueue_objects_go_before_the_kubeconfigs_and_those_before_their_worker() -> None:
    kubeconfigs = {f"aksray-multikueue-{w}-kubeconfig" for w in WORKERS}
    objects = _named(r"aksray-multikueue-(admissioncheck|multikueueconfig|multikueuecluster)-.*")
    assert len(objects) == 4
    for resource in objects:
        # A worker's MultiKueueCluster reads its kubeconfig; the config and checks name them all.
        worker = resource.name.removeprefix("aksray-multikueue-multikueuecluster-")
        reads = {f"aksray-multikueue-{worker}-kubeconfig"} if worker in WORKERS else kubeconfigs
        assert reads <= _waits(resource), resource.name
    for worker in WORKERS:
        (secret,) = _named(f"aksray-multikueue-{worker}-kubeconfig")
        assert f"aksray-{worker}-cluster-aks" in _waits(secret)


def test_nothing_of_the_shipped_multiregion_stack_is_kept() -> None:
    """Nothing but KubeRay's CRDs on each cluster (components/chart_crds.py: deleting one deletes
    every object of its kind); the clusters themselves go with the stack."""
    kept = [r for r in planned("multiregion").resources if r.protect or r.retain_on_delete]
    assert [r for r in kept if r.protect] == []
    assert sorted({r.name.rsplit("-crd-", 1)[1] for r in kept}) == sorted(KUBERAY_CRDS)
    assert len(kept) == 3 * len(KUBERAY_CRDS)  # the manager and both workers


def test_the_readme_says_what_destroy_removes_for_every_shipped_stack() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("What `pulumi destroy` removes, per shipped stack:") :]
    table = section[: section.index("\n\n", section.index("|"))]
    rows = re.findall(r"(?m)^\| `([\w-]+)` \|", table)
    assert sorted(rows) == sorted(
        p.name.removeprefix("Pulumi.").removesuffix(".yaml")
        for p in (PROJECT_ROOT / "stacks").glob("Pulumi.*.yaml")
    )

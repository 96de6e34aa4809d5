"""`aksray render` of a stack with `multikueue`: one render per cluster, `<out>/manager/` and
`<out>/<worker>/` (each with `kubernetes/*.yaml` and `resources.json`), since the clusters hold
objects of one name (every team's ClusterQueue, for one)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from aksray.offline.render import write_render
from aksray.offline.runner import RunResult
from aksray.plan.model.multikueue import WORKER_TYPE, resources_under

MANAGER_FOLDER = "manager"


def clusters_of(result: RunResult) -> dict[str, RunResult]:
    """The run split per cluster: the manager's resources, then each worker's."""
    workers = {
        r.name.removeprefix("aksray-"): r.urn for r in result.resources if r.type == WORKER_TYPE
    }
    split = {worker: resources_under(result, urn) for worker, urn in workers.items()}
    taken = {r.urn for resources in split.values() for r in resources}
    manager = [r for r in result.resources if r.urn not in taken]
    return {
        MANAGER_FOLDER: dataclasses.replace(result, resources=manager),
        **{w: dataclasses.replace(result, resources=rs) for w, rs in split.items()},
    }


def write_multikueue_render(result: RunResult, out_dir: Path) -> tuple[int, list[Path]]:
    """Each cluster's render; the number of Kubernetes documents and the resources.json files."""
    count, written = 0, []
    for cluster, part in clusters_of(result).items():
        documents, resources_json = write_render(part, out_dir / cluster)
        count += documents
        written.append(resources_json)
    return count, written

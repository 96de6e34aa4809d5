"""The stack a MultiKueue rehearsal applies through the real Pulumi engine: the user's stack file
as a fleet of existing clusters, each a context of one kubeconfig named after its cluster.

Its organisation tree, quotas, pools, regional workloads and token rotation stay exactly as
written; what only Azure provides is replaced as in the one-cluster rehearsal
(aksray/rehearse/stack.py): the manager and every worker are `mode: existing` on their own
context (a worker's `apiServer` is its control plane's address, which the manager's Kueue
reaches), the operators are the rig's processes and Blob is an existing account by name. The
program is the one `pulumi up` runs for users: it registers every cluster's objects with that
cluster's provider, in its own graph, and Pulumi creates them in that graph's order.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import yaml

from aksray.offline.render import is_kubernetes_object
from aksray.plan.report.multikueue_render import MANAGER_FOLDER, clusters_of
from aksray.rehearse.stack import KEPT_CLUSTER_KEYS, rehearsal_config
from catalog.project import PROJECT
from manifests.ray_pods import WORKLOAD_LABEL
from workloads.catalog import WORKLOADS

if TYPE_CHECKING:
    from aksray.offline.runner import RunResult

MANAGER: Final = "manager"  # the manager's context, control plane and render folder
# Only to check the stack before the rig exists: the rig's addresses replace it in every `up`.
PLACEHOLDER_SERVER: Final = "https://{worker}.rehearsal.invalid:443"


@dataclass
class Submitted:
    """What the rehearsal has set on the stack's workloads so far, as `pulumi config set --path`
    would: each submitted job's `run`, other keys it changed (priority, size), and the
    workloads it took out of `multikueue.regional` (dispatched instead)."""

    runs: dict[str, str] = field(default_factory=dict)
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    unpinned: set[str] = field(default_factory=set)


class UnplayableStackError(Exception):
    """What the rehearsal cannot play as the stack is written; the message says which key."""


def with_runs(workloads: Mapping[str, Any], runs: Mapping[str, str]) -> dict[str, Any]:
    """The stack's `workloads` with `run` set on the named ones (each a RayJob the stack
    enables) and removed from every other: only those are submitted."""
    section = {name: dict(entry or {}) for name, entry in workloads.items()}
    for name in runs:
        entry = section.get(name) or {}
        if entry.get("enabled") is not True or WORKLOADS[name].kind != "RayJob":
            raise UnplayableStackError(f"workloads.{name}: not an enabled RayJob of the stack")
    for name, entry in section.items():
        entry.pop("run", None)
        if name in runs:
            entry["run"] = runs[name]
    return section


def fleet_config(
    stack: Mapping[str, Any], servers: Mapping[str, str], submitted: Submitted
) -> dict[str, Any]:
    """The namespaced config (`config:` of the stack file) of the rehearsal stack: `servers`
    is each worker's API server address, `submitted` what the rehearsal set."""
    own = stack.get("workloads") or {}
    changed = {
        name: {**dict(own.get(name) or {}), **submitted.changes.get(name, {})}
        for name in {*own, *submitted.changes}
    }
    workloads = with_runs(changed, submitted.runs)
    config = rehearsal_config(stack, MANAGER, workloads)
    section = dict(stack.get("multikueue") or {})
    regional = dict(section.get("regional") or {})
    section["regional"] = {k: v for k, v in regional.items() if k not in submitted.unpinned}
    workers = []
    for raw in section.get("workers") or []:
        worker = dict(raw)
        cluster = dict(worker.get("cluster") or {})
        kept = {key: cluster[key] for key in KEPT_CLUSTER_KEYS if key in cluster}
        worker["cluster"] = {**kept, "mode": "existing", "kubeconfigContext": worker["name"]}
        worker["apiServer"] = servers[worker["name"]]
        workers.append(worker)
    section["workers"] = workers
    config[f"{PROJECT}:multikueue"] = section
    return config


def placeholder_servers(stack: Mapping[str, Any]) -> dict[str, str]:
    workers = (stack.get("multikueue") or {}).get("workers") or []
    return {w["name"]: PLACEHOLDER_SERVER.format(worker=w["name"]) for w in workers}


def offline_run(stack: Mapping[str, Any], name: str, runs: Mapping[str, str]) -> RunResult:
    """The program offline on the rehearsal stack (with placeholder worker addresses): what it
    registers, or every problem, before any control plane starts."""
    from aksray.offline.runner import run_program

    config = fleet_config(stack, placeholder_servers(stack), Submitted(dict(runs)))
    with tempfile.TemporaryDirectory(prefix="aksray-multikueue-") as folder:
        path = Path(folder) / f"Pulumi.{name}.yaml"
        path.write_text(yaml.safe_dump({"config": config}), encoding="utf-8")
        return run_program(path, stack=name)


def manager_jobs(result: RunResult) -> dict[str, dict[str, Any]]:
    """The manager's RayJobs by workload, as the program registers them."""
    manager = clusters_of(result)[MANAGER_FOLDER]
    return {
        str((r.inputs["metadata"].get("labels") or {}).get(WORKLOAD_LABEL, "")): dict(r.inputs)
        for r in manager.resources
        if is_kubernetes_object(r) and r.inputs.get("kind") == "RayJob"
    }

"""The stack a rehearsal applies: the user's stack file, pointed at the rig.

Its organisation tree, quotas, pools and workloads stay exactly as written; what only Azure can
provide is replaced: the cluster becomes `mode: existing` on the rig's kubeconfig context, the
operators are the rig's own processes (`operators.install: false`), and Blob storage is an
existing account by name (`storage.existingAccount`) that nothing on the rig ever calls. The
Hugging Face token is dropped: no payload runs. A team that names no member group gets a
stand-in one (`stand_in_group`), so every rehearsal has the RoleBindings a member acts through
(the `team-members` scenario impersonates a user in it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from aksray.stackfile.bounded_yaml import load_stack_yaml
from catalog.project import PROJECT

REHEARSAL_ACCOUNT: Final = "aksrayrehearsal"
KEPT_CLUSTER_KEYS: Final = ("gpuDriver", "systemPool", "cpuPool", "gpuPools")


def stand_in_group(team: str) -> str:
    """The member group a rehearsal gives a team that names none."""
    return f"aksray-rehearsal-{team}-members"


def with_members(scheduling: Mapping[str, Any]) -> dict[str, Any]:
    """The scheduling section, every team that names no member group given a stand-in one."""
    departments = []
    for department in scheduling.get("departments") or []:
        if not isinstance(department, Mapping):
            departments.append(department)
            continue
        teams = [
            {**team, "members": [stand_in_group(str(team["name"]))]}
            if isinstance(team, Mapping) and not team.get("members") and team.get("name")
            else team
            for team in department.get("teams") or []
        ]
        departments.append({**department, "teams": teams})
    return {**scheduling, "departments": departments} if departments else dict(scheduling)


def read_stack_file(path: Path) -> dict[str, Any]:
    """The `config:` mapping with the project prefix removed (`cluster`, `workloads`, ...)."""
    document = load_stack_yaml(path.read_bytes(), str(path)) or {}
    config = document.get("config") or {}
    plain: dict[str, Any] = {}
    for key, value in config.items():
        name = key.split(":", 1)[1] if key.startswith(f"{PROJECT}:") else key
        plain[name] = value
    return plain


def rehearsal_config(
    stack: Mapping[str, Any],
    context: str,
    workloads: Mapping[str, Any] | None = None,
    *,
    monitoring: bool = False,
) -> dict[str, Any]:
    """The namespaced config of the rehearsal stack (what goes under `config:`). `monitoring`:
    the stack's `observability.enabled` is kept, its scrape objects made for a Prometheus
    Operator (the rig then stands in the operator's CRDs); else it is dropped."""
    cluster = dict(stack.get("cluster") or {})
    derived_cluster = {k: cluster[k] for k in KEPT_CLUSTER_KEYS if k in cluster}
    derived_cluster.update({"mode": "existing", "kubeconfigContext": context})
    # Every rehearsal gets a stand-in account, so any workload a scenario starts is admissible;
    # nothing on the rig ever calls it.
    storage = dict(stack.get("storage") or {})
    derived_storage: dict[str, Any] = {"enabled": True, "existingAccount": REHEARSAL_ACCOUNT}
    if "containers" in storage:
        derived_storage["containers"] = storage["containers"]
    # The rig's operators are its own processes, with no chart: nothing to install, from no
    # source (`operators.chartSource` is refused without `install`).
    operators = {
        k: v
        for k, v in (stack.get("operators") or {}).items()
        if k not in ("install", "metrics", "chartSource")
    }
    operators["install"] = False
    config: dict[str, Any] = {
        "cluster": derived_cluster,
        "storage": derived_storage,
        "operators": operators,
        "scheduling": with_members(stack.get("scheduling") or {}),
        "workloads": dict(workloads if workloads is not None else stack.get("workloads") or {}),
    }
    if monitoring and (stack.get("observability") or {}).get("enabled") is True:
        config["observability"] = {"enabled": True, "prometheusOperator": True}
    return {f"{PROJECT}:{key}": value for key, value in config.items()}


def stack_workloads(stack: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: dict(entry or {}) for name, entry in (stack.get("workloads") or {}).items()}

"""A controller of a running rig moved to another version, as one `pulumi up` moves an operator.

On AKS the upgrade is one `pulumi up`: the stack's KubeRay CRD resources are applied with the
new chart's schemas (server-side, forced), then `helm upgrade` of each release rolls its
operator to the new image (Kueue's CRDs, which its chart keeps as templates, are upgraded by
Helm with the release), KubeRay's release before Kueue's (components/operators.py). The rig runs
the operators as host processes, with no Helm and no chart: it does the same in the same order,
one controller at a time: the old process stopped (SIGTERM, as a Deployment's old pod is), every
CRD of the controller's new version applied over the live one the way the stack's CRD resources
apply theirs (server-side apply, forced), and the new version started, with its webhooks.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from aksray.rehearse.rig.controlplane import ControlPlane, apply_crds
from aksray.rehearse.rig.processes import RigError


def restart_at(
    plane: ControlPlane,
    controller: ModuleType,
    version: str | None,
    options: Mapping[str, Any] | None = None,
) -> str:
    """Move `controller` (a module of controllers/) to `version` (None: the rig's own build),
    with `options` (its entry of Launch.options) where they change too; one line for the
    timeline, with the time it took."""
    launch = plane.launch
    if launch is None:
        raise RigError("this rig keeps no record of how its controllers started")
    name = str(controller.NAME)
    was = launch.versions.get(name) or plane.tools.versions[controller.BUILD.pin]
    now = version or plane.tools.versions[controller.BUILD.pin]
    t0 = time.monotonic()
    clean = plane.supervisor.stop(name)
    files = (
        controller.crds(plane.tools.data, version) if version else controller.crds(plane.tools.data)
    )
    count = apply_crds(plane.kube, plane.supervisor, files, update=True)
    versions = {k: v for k, v in launch.versions.items() if k != name}
    if version:
        versions[name] = version
    plane.launch = dataclasses.replace(
        launch, versions=versions, options={**launch.options, **(options or {})}
    )
    controller.start(plane.launch)
    stopped = "stopped" if clean else "killed after its grace period"
    return (
        f"{was} {stopped}, its {count} CRDs applied at {now} (server-side, forced), {now} "
        f"started: {time.monotonic() - t0:.1f}s"
    )

"""The operators a change upgrades, played on the rig as restarts.

On AKS a change to an operator's release (its chart source, its values: Kueue's Configuration
when monitoring is switched on) is a `helm upgrade`, which rolls the operator's pod. The rig has
no Helm and no release: where the plan on AKS updates the Kueue or KubeRay release, the rig
restarts that controller (KubeRay first, as `pulumi up` orders the releases), Kueue with the
Configuration the new release gets, at the version it runs. Microsoft's registry ships the same
versions from the same source, so a chart source switch is, on the rig, these restarts alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any, Final

from aksray.plan.change.model import ChangePlan
from aksray.rehearse.rig.controllers import kuberay, kueue
from aksray.rehearse.rig.controlplane import ControlPlane
from aksray.rehearse.rig.upgrade import restart_at
from catalog.versions import KUBERAY_OPERATOR, KUEUE
from manifests.helm_values import kueue_manager_config
from settings.model import Settings

RELEASE_TYPE: Final = "kubernetes:helm.sh/v3:Release"
# In the order `pulumi up` upgrades them (Kueue's release depends on KubeRay's).
RELEASED: Final[tuple[tuple[str, ModuleType], ...]] = (
    (KUBERAY_OPERATOR.release, kuberay),
    (KUEUE.release, kueue),
)


def kueue_configuration(settings: Settings) -> dict[str, Any]:
    """The Configuration the stack's Kueue release gets (as written, monitoring included)."""
    return kueue_manager_config(
        metrics=settings.observability.enabled, pods_ready=settings.scheduling.pods_ready
    )


def upgraded_releases(plan: ChangePlan) -> list[tuple[str, list[str]]]:
    """(release name, changed input paths) of every Helm release the plan updates in place."""
    return [
        (str(c.inputs.get("name", c.name)), [p.path for p in c.paths])
        for c in plan.changes
        if c.type == RELEASE_TYPE and c.action == "update"
    ]


def restart_upgraded(
    plane: ControlPlane, plan: ChangePlan, settings: Settings
) -> Iterator[tuple[str, str]]:
    """Restart each rig controller whose release the plan upgrades, one after the other;
    (controller, timeline line) as each is back."""
    upgraded = dict(upgraded_releases(plan))
    for release, controller in RELEASED:
        if release not in upgraded:
            continue
        version = plane.launch.versions.get(controller.NAME) if plane.launch else None
        options = {kueue.NAME: kueue_configuration(settings)} if controller is kueue else None
        line = restart_at(plane, controller, version, options)
        paths = ", ".join(upgraded[release][:4])
        yield controller.NAME, f"as `helm upgrade` of its release rolls it ({paths}): {line}"

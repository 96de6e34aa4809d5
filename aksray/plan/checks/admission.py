"""What the admission policies ask of a cluster the stack does not install the operators on."""

from __future__ import annotations

from aksray.plan.checks.findings import Findings
from aksray.plan.model.plan import Plan
from manifests.access.admission import KUBERAY_USER


def check_kuberay_identity(plan: Plan, out: Findings) -> None:
    """The policies let one identity create GPU pods and RayClusters in team namespaces:
    KubeRay's, as the stack's own release runs it. A cluster's own KubeRay under another
    service account would see every Ray pod of the teams refused."""
    operators = plan.settings.operators
    # A new AKS cluster rendered to YAML gets the stack's charts installed by hand (the
    # render-only warning says so), with their KubeRay as the policies expect.
    new_cluster = plan.settings.cluster.mode == "aks"
    if operators.install or operators.kuberay_service_account is not None or new_cluster:
        return
    out.warning(
        "operators.install",
        f"the admission policies let only {KUBERAY_USER} create GPU pods and RayClusters in "
        "team namespaces: run the cluster's KubeRay operator as that service account (the "
        "chart's default: release kuberay-operator in kuberay-system), or every Ray pod of "
        "the teams is refused; declare it with operators.kuberayServiceAccount "
        "(<namespace>/<name>)",
    )

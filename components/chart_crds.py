"""The CRDs a chart keeps in `crds/`, registered by the stack so that `pulumi up` upgrades them.

Helm installs a chart's `crds/` folder on the first install only and never upgrades or deletes
it. The GPU Operator and KAI upgrade theirs in pre-upgrade hooks and Kueue keeps its CRDs in
`templates/`, which Helm upgrades with the release; KubeRay's chart has neither. So a KubeRay
version bump would leave the old schemas in place (the old ones prune any field the new operator
writes). Instead the stack renders the very chart its release installs, through the Kubernetes
provider's own `kubernetes:helm:template` (the same chart reference, version and repository, so
Microsoft's registry and upstream alike), and registers each CRD of the chart as a resource:

- applied server-side with force (`pulumi.com/patchForce`): the live CRDs of a cluster Helm
  installed first belong to Helm's field manager, and the stack takes them over in place;
- kept on delete (`retainOnDelete`): deleting a CRD deletes every object of its kind, so neither
  `pulumi destroy` nor a rename may do it (Helm never deletes them either);
- before the release, which installs none itself (`skipCrds`): an upgrade brings the schemas to
  the new version before the new operator starts.

`aksray plan` runs offline: the chart is not fetched there, and each CRD's schema shows as the
placeholder of a value known only at deploy.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from catalog.versions import HelmChart
from components.k8s_objects import create_object
from manifests.stack_crds import chart_crd_spec, chart_template_options, stack_crd_manifest

TEMPLATE_INVOKE = "kubernetes:helm:template"


def chart_crds(
    name: str, chart: HelmChart, *, provider: k8s.Provider, parent: pulumi.Resource
) -> list[pulumi.Resource]:
    """One CustomResourceDefinition resource per CRD the catalog lists for `chart`."""
    if not chart.stack_crds:
        return []
    rendered = pulumi.runtime.invoke_output(
        TEMPLATE_INVOKE,
        {"jsonOpts": json.dumps(chart_template_options(chart), sort_keys=True)},
        pulumi.InvokeOutputOptions(provider=provider, parent=parent),
    ).apply(lambda answer: list((answer or {}).get("result") or []))

    def spec(crd: str) -> pulumi.Output[Any]:
        return rendered.apply(lambda objects: chart_crd_spec(objects, chart, crd))

    return [
        create_object(
            f"{name}-{chart.release}-crd-{crd}",
            stack_crd_manifest(crd, spec(crd)),
            pulumi.ResourceOptions(parent=parent, provider=provider, retain_on_delete=True),
        )
        for crd in chart.stack_crds
    ]

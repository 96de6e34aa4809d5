"""The admission policies that keep every GPU in a team namespace behind its queue
(manifests/access/admission.py), registered once for the whole cluster."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.k8s_objects import create_object
from manifests.access.admission import admission_policies, kuberay_user


class AdmissionPolicies(pulumi.ComponentResource):
    """Two ValidatingAdmissionPolicies and their bindings (by object name)."""

    objects: dict[str, pulumi.CustomResource]

    def __init__(
        self,
        name: str,
        *,
        provider: k8s.Provider,
        namespaces: Sequence[pulumi.Resource],
        kuberay_service_account: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`namespaces`: the team namespaces, whose labels the policies read: a binding in
        force before a namespace carries them would refuse that team's every Ray object.
        `kuberay_service_account`: `<namespace>/<name>` the cluster's own KubeRay runs as (the
        one identity that creates GPU pods there); None: the stack's release's."""
        super().__init__("aksray:platform:AdmissionPolicies", name, None, opts)
        self.objects = {}
        for manifest in admission_policies(kuberay_user(kuberay_service_account)):
            kind, object_name = manifest["kind"], manifest["metadata"]["name"]
            binding = kind == "ValidatingAdmissionPolicyBinding"
            self.objects[f"{kind}/{object_name}"] = create_object(
                f"{name}-{object_name}",
                manifest,
                pulumi.ResourceOptions(
                    parent=self, provider=provider, depends_on=list(namespaces) if binding else []
                ),
            )
        self.register_outputs({"policies": sorted(self.objects)})

"""CrossGuard policy pack: `pulumi preview --policy-pack policy` (see README "Policy pack")."""

from platform_policies import POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name="aks-ray-platform",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=POLICIES,
)

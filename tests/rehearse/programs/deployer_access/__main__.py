"""A Pulumi program of one resource, the deployer-access wait (components/deployer_access.py),
asking the API server of the kubeconfig at config `kubeconfigPath`: what the real engine runs in
tests/rehearse/test_deployer_access.py."""

import sys
from pathlib import Path

import pulumi

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))  # the repository

from components.deployer_access import DeployerAccess

config = pulumi.Config()
access = DeployerAccess(
    "access",
    kubeconfig=Path(config.require("kubeconfigPath")).read_text(),
    role_assignment=config.require("roleAssignment"),
)
pulumi.export("accessReviews", access.access_reviews)
pulumi.export("waitedSeconds", access.waited_seconds)

"""The wait for the deployer's access (components/deployer_access.py): where the program puts it,
and how it asks. The real engine runs it against the rig's API server in
tests/rehearse/test_deployer_access.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import run_program
from components.deployer_access import (
    PERMISSION,
    WAIT_S,
    AccessError,
    poll,
)
from components.kube_credentials import CredentialError, current_context, exec_token
from tests.support.harness import P, mutated, one, planned, write_stack

ACCESS = "pulumi-python:dynamic:Resource"
ROLE = "azure-native:authorization:RoleAssignment"
PROVIDER = "pulumi:providers:kubernetes"


def test_it_stands_between_the_deployers_role_and_the_kubernetes_provider() -> None:
    result = planned("prod")
    admin = one(result, ROLE, "aksray-cluster-deployer-admin")
    access = one(result, ACCESS, "aksray-cluster-deployer-access")
    assert access.property_dependencies["role_assignment"] == (admin.urn,)
    assert access.inputs["kubeconfig"] == "[secret]"
    provider = one(result, PROVIDER, "aksray-cluster-k8s")
    assert access.urn in provider.depends_on
    # Every Kubernetes object goes through that provider: none can be created before.
    assert PERMISSION == {
        "verb": "create",
        "group": "apiextensions.k8s.io",
        "resource": "customresourcedefinitions",
    }


@pytest.mark.parametrize(
    "change",
    [
        {"createRoleAssignments": False},  # an admin grants it, before the next up
        {"deployerPrincipalType": "None"},  # granted beforehand, by someone else
        {"renderYamlTo": "out/prod-yaml"},  # rendering asks the API server nothing
    ],
    ids=["admin-grants", "granted-beforehand", "render"],
)
def test_no_wait_where_the_stack_grants_nothing_or_asks_nothing(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    def apply(config: dict[str, Any]) -> None:
        config[P + "cluster"].update(change)
        if "renderYamlTo" in change:
            config[P + "operators"] = {"install": False}

    result = run_program(
        write_stack(tmp_path, mutated("prod", apply), "Pulumi.prod.yaml"), stack="prod"
    )
    assert result.ok, result.problems
    assert result.by_type(ACCESS) == []
    assert planned("dev").by_type(ACCESS) != []  # dev (a User deploys) waits too


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_it_asks_every_ten_seconds_until_allowed() -> None:
    answers = iter([(False, "no RBAC policy matched"), (False, ""), (True, "allowed")])
    clock = _Clock()
    asked, waited = poll(lambda: next(answers), clock=clock, sleep=clock.sleep)
    assert (asked, waited) == (3, 20.0)


def test_a_connection_error_is_not_yet() -> None:
    def ask() -> tuple[bool, str]:
        if clock.now < 30:
            raise ConnectionRefusedError("endpoint settling")
        return True, ""

    clock = _Clock()
    assert poll(ask, clock=clock, sleep=clock.sleep) == (4, 30.0)


def test_it_gives_up_after_fifteen_minutes_with_what_to_check() -> None:
    clock = _Clock()
    with pytest.raises(AccessError) as raised:
        poll(lambda: (False, "no RBAC policy matched"), clock=clock, sleep=clock.sleep)
    assert WAIT_S == 900
    assert str(raised.value) == (
        "the cluster's API server did not allow the deployer to create "
        "customresourcedefinitions within 15 minutes of its role assignment (91 access reviews; "
        "last: no RBAC policy matched). Check the assignment (az role assignment list --scope "
        "<cluster id>) and `kubectl auth can-i create customresourcedefinitions`, then run "
        "pulumi up again"
    )


def _kubeconfig(user: dict[str, Any]) -> dict[str, Any]:
    return {
        "clusters": [{"name": "c", "cluster": {"server": "https://aks.example:443"}}],
        "users": [{"name": "other", "user": {}}, {"name": "me", "user": user}],
        "contexts": [
            {"name": "first", "context": {"cluster": "c", "user": "other"}},
            {"name": "aks", "context": {"cluster": "c", "user": "me"}},
        ],
        "current-context": "aks",
    }


def test_the_current_context_and_an_exec_plugins_token_as_kubectl_reads_them() -> None:
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "status": {"token": "t0k"}}
    plugin = {
        "command": sys.executable,
        "args": ["-c", "import json, os; print(os.environ['CREDENTIAL'])"],
        "env": [{"name": "CREDENTIAL", "value": json.dumps(credential)}],
    }
    cluster, user = current_context(_kubeconfig({"exec": plugin}))
    assert cluster == {"server": "https://aks.example:443"}
    assert exec_token(user["exec"]) == "t0k"


def test_a_failing_credential_plugin_says_so() -> None:
    plugin = {"command": sys.executable, "args": ["-c", "import sys; sys.exit('az login first')"]}
    with pytest.raises(CredentialError, match="credential plugin\\) failed: az login first"):
        exec_token(plugin)

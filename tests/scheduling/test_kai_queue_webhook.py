"""KAI's queue webhook on the first `pulumi up`: every KAI Queue waits for a Job that proves the
webhook serves.

KAI v0.17.0's operator registers its queue ValidatingWebhookConfiguration (failure policy Fail)
after Helm's wait has ended, and pulumi-kubernetes 4.25.0 retries a create only when the API or
object is not found: a Queue created in that gap fails `pulumi up`. The Job (the provider awaits
a Job until it completes) closes the gap; these tests read its edges and its exact objects, and
run its script against a stand-in `kubectl` that plays the apiserver's answers in order.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from aksray.offline.runner import RecordedResource, RunResult
from tests.support.harness import one, planned, transitive_dependencies

RELEASE = "kubernetes:helm.sh/v3:Release"
JOB = "kubernetes:batch/v1:Job"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
KAI_QUEUE = "kubernetes:scheduling.run.ai/v2:Queue"
WAIT = "aksray-operators-kai-queue-webhook"
INSTALLING = ("dev", "prod", "dev+run", "prod+run")
DENIED = 'admission webhook "queue-validation.kai.scheduler" denied the request'


def job(result: RunResult) -> RecordedResource:
    return one(result, JOB, WAIT)


def container(result: RunResult) -> dict[str, Any]:
    (only,) = job(result).inputs["spec"]["template"]["spec"]["containers"]
    assert isinstance(only, dict)
    return only


def env(result: RunResult) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container(result)["env"]}


# --------------------------------------------------------------------------------------------
# Ordering
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", INSTALLING)
def test_every_kai_queue_waits_for_the_webhook_job(stack: str) -> None:
    result = planned(stack)
    wait = job(result).urn
    queues = result.by_type(KAI_QUEUE)
    assert queues
    for queue in queues:
        assert wait in queue.depends_on, queue.name


@pytest.mark.parametrize("stack", INSTALLING)
def test_the_job_runs_after_kai_with_its_rights_and_before_nothing_kai_serves(stack: str) -> None:
    result = planned(stack)
    wait = job(result)
    kai = one(result, RELEASE, "aksray-operators-kai-scheduler")
    account = one(result, SERVICE_ACCOUNT, f"{WAIT}-account")
    binding = one(result, BINDING, f"{WAIT}-binding")
    namespace = one(
        result, "kubernetes:core/v1:Namespace", "aksray-operators-kai-scheduler-namespace"
    )
    assert {kai.urn, account.urn, binding.urn} <= set(wait.depends_on)
    assert namespace.urn in transitive_dependencies(result, wait)
    assert wait.provider_urn == kai.provider_urn
    # Destroy runs the edges backwards: queues, then the Job, then KAI; nothing waits on a Queue.
    by_urn = result.by_urn()
    assert not [u for u in transitive_dependencies(result, wait) if by_urn[u].type == KAI_QUEUE]
    assert wait.urn not in transitive_dependencies(result, kai)


def test_no_job_when_the_stack_installs_no_kai() -> None:
    result = planned("local")
    assert result.settings.operators.install is False
    assert result.by_type(JOB) == []
    assert result.by_type(CLUSTER_ROLE) == []


# --------------------------------------------------------------------------------------------
# The objects
# --------------------------------------------------------------------------------------------


def test_the_job_is_pinned_bounded_and_on_the_cpu_pool() -> None:
    result = planned("dev")
    manifest = job(result).inputs
    assert manifest["metadata"]["namespace"] == "kai-scheduler"
    assert manifest["metadata"]["annotations"] == {
        # Awaited past its own deadline, so the Job's own failure is what `pulumi up` reports;
        # a failed Job is replaced (run again) by the next `pulumi up`.
        "pulumi.com/timeoutSeconds": "660",
        "pulumi.com/replaceUnready": "true",
    }
    spec = manifest["spec"]
    assert spec["activeDeadlineSeconds"] == 600
    assert spec["backoffLimit"] == 2
    assert "ttlSecondsAfterFinished" not in spec  # a deleted Job would be re-created by refresh
    template = spec["template"]
    # A KAI upgrade changes the template: the Job is replaced and waits again before any Queue.
    assert template["metadata"]["labels"]["aksray.io/kai-version"] == "v0.17.0"
    pod = template["spec"]
    assert pod["serviceAccountName"] == WAIT
    assert pod["restartPolicy"] == "Never"
    assert pod["nodeSelector"] == {"kubernetes.azure.com/agentpool": "cpu"}
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65534,
        "runAsGroup": 65534,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    box = container(result)
    assert box["image"] == "registry.k8s.io/kubectl:v1.35.0"
    assert box["command"][:2] == ["/bin/bash", "-c"]
    assert box["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert box["volumeMounts"] == [{"name": "home", "mountPath": "/home/probe"}]
    assert pod["volumes"] == [{"name": "home", "emptyDir": {}}]
    assert env(result)["HOME"] == "/home/probe"


def test_the_probes_are_one_queue_the_webhook_refuses_and_one_it_admits() -> None:
    values = env(planned("dev"))
    assert values["KAI_QUEUE_WEBHOOK"] == "queue-validation.kai.scheduler"
    refused = json.loads(values["QUEUE_WITHOUT_RESOURCES"])
    admitted = json.loads(values["QUEUE_WITH_RESOURCES"])
    for probe in (refused, admitted):
        assert probe["apiVersion"] == "scheduling.run.ai/v2"
        assert probe["kind"] == "Queue"
        assert probe["metadata"] == {"name": "aksray-webhook-probe"}
        assert "parentQueue" not in probe["spec"]  # no parent: nothing else for it to check
    # KAI's webhook (not the CRD schema, which leaves it optional) refuses a Queue without it.
    assert "resources" not in refused["spec"]
    assert set(admitted["spec"]["resources"]) == {"cpu", "gpu", "memory"}


def test_the_job_may_only_dry_run_queue_creates() -> None:
    result = planned("dev")
    role = one(result, CLUSTER_ROLE, f"{WAIT}-role").inputs
    assert role["rules"] == [
        {"apiGroups": ["scheduling.run.ai"], "resources": ["queues"], "verbs": ["create"]}
    ]
    binding = one(result, BINDING, f"{WAIT}-binding").inputs
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": role["metadata"]["name"],
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": WAIT, "namespace": "kai-scheduler"}
    ]
    account = one(result, SERVICE_ACCOUNT, f"{WAIT}-account").inputs
    assert account["metadata"]["name"] == WAIT
    assert account["metadata"]["namespace"] == "kai-scheduler"


# --------------------------------------------------------------------------------------------
# The script, against a stand-in kubectl
# --------------------------------------------------------------------------------------------

# Each call prints the next answer of the list (the last one repeats) and logs its input.
FAKE_KUBECTL = """#!/bin/bash
n=$(cat "$STATE/count" 2>/dev/null || echo 0)
echo $((n + 1)) > "$STATE/count"
echo "$*" >> "$STATE/args"
cat >> "$STATE/stdin"; echo >> "$STATE/stdin"
mapfile -t answers < "$STATE/answers"
last=$(( ${#answers[@]} - 1 )); i=$(( n < last ? n : last ))
IFS='|' read -r code text <<< "${answers[$i]}"
echo "$text"; exit "$code"
"""


def run_script(tmp_path: Path, answers: list[tuple[int, str]]) -> tuple[int, str, Path]:
    result = planned("dev")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(FAKE_KUBECTL)
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "answers").write_text("".join(f"{c}|{t}\n" for c, t in answers))
    environment = {
        **env(result),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "STATE": str(tmp_path),
        "PROBE_INTERVAL_SECONDS": "0",
    }
    done = subprocess.run(
        container(result)["command"], env=environment, capture_output=True, text=True, timeout=30,
        check=False,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr, tmp_path


def test_the_script_waits_until_the_webhook_itself_answers(tmp_path: Path) -> None:
    code, output, state = run_script(
        tmp_path,
        [
            # No webhook registered yet: the invalid Queue passes (a dry run, nothing stored).
            (0, "queue.scheduling.run.ai/aksray-webhook-probe created (server dry run)"),
            # Registered, its server not listening yet.
            (1, 'Error from server (InternalError): Internal error occurred: failed calling '
                'webhook "queue-validation.kai.scheduler": connection refused'),
            (1, f"Error from server: error when creating \"STDIN\": {DENIED}: resources must "
                "be specified"),
            (0, "queue.scheduling.run.ai/aksray-webhook-probe created (server dry run)"),
        ],
    )  # fmt: skip
    assert code == 0, output
    calls = (state / "args").read_text().splitlines()
    assert len(calls) == 4
    assert all(c == "create --dry-run=server -o name -f -" for c in calls)
    sent = [json.loads(line) for line in (state / "stdin").read_text().splitlines() if line]
    assert ["resources" in q["spec"] for q in sent] == [False, False, False, True]
    assert "waiting for KAI's queue webhook" in output


def test_the_script_fails_when_the_webhook_refuses_a_valid_queue(tmp_path: Path) -> None:
    code, output, _ = run_script(
        tmp_path,
        [
            (1, f"error: {DENIED}: resources must be specified"),
            (1, 'Error from server (Forbidden): queues.scheduling.run.ai is forbidden'),
        ],
    )  # fmt: skip
    assert code != 0
    assert "forbidden" in output

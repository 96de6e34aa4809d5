"""Scaling within quota: the endpoint's Serve replicas and batch inference's GPU workers grow
and shrink between a minimum and a maximum, each step admitted by Kueue as a workload slice.

The rendered objects are asserted exactly: the elastic-job annotation Kueue 0.19 reads, the
Ray autoscaler (enableInTreeAutoscaling, its sidecar at the size Kueue counts), the worker
group's bounds, the scheduling gate on every pod template, Serve's autoscaling_config, and the
feature gate in Kueue's configuration."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path
from typing import Any

import yaml

from aksray.offline.runner import RunResult, run_program
from manifests import ray_pods
from tests.support.harness import assert_rejected, mutated, one, planned, with_runs, write_stack
from workloads.catalog import WORKLOADS

RAY_JOB = "kubernetes:ray.io/v1:RayJob"
RAY_SERVICE = "kubernetes:ray.io/v1:RayService"
RELEASE = "kubernetes:helm.sh/v3:Release"
P = "aks-ray-platform:"
GATE = [{"name": "kueue.x-k8s.io/elastic-job"}]
AUTOSCALER = {
    "upscalingMode": "Default",
    "idleTimeoutSeconds": 60,
    "resources": {
        "requests": {"cpu": "500m", "memory": "512Mi"},
        "limits": {"memory": "512Mi", "cpu": "500m"},
    },
    # The sidecar runs the Ray image as its own user, like the Ray containers
    # (manifests/pod_security.py).
    "securityContext": {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    },
    # Its Kubernetes API token, mounted into the sidecar alone
    # (tests/manifests/access/test_autoscaler.py).
    "volumeMounts": [
        {
            "name": "autoscaler-api-token",
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "readOnly": True,
        }
    ],
}


def _manifest(result: RunResult, workload: str) -> dict[str, Any]:
    kind = RAY_JOB if WORKLOADS[workload].kind == "RayJob" else RAY_SERVICE
    inputs: dict[str, Any] = one(result, kind, f"aksray-workloads-{workload}").inputs
    return inputs


def _cluster(manifest: dict[str, Any]) -> dict[str, Any]:
    key = "rayClusterSpec" if manifest["kind"] == "RayJob" else "rayClusterConfig"
    cluster: dict[str, Any] = manifest["spec"][key]
    return cluster


def _templates(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    cluster = _cluster(manifest)
    return [cluster["headGroupSpec"]["template"]] + [
        g["template"] for g in cluster.get("workerGroupSpecs", [])
    ]


def _settings(result: RunResult, name: str) -> Any:
    return next(w for w in result.settings.workloads if w.name == name)


def _run(mutate: Any) -> RunResult:
    folder = Path(tempfile.mkdtemp(prefix="aksray-scale-"))
    return run_program(write_stack(folder, with_runs(mutated("prod", mutate))))


def test_the_endpoint_autoscales_between_its_replicas_as_one_elastic_workload() -> None:
    manifest = _manifest(planned("prod+run"), "llm-serve")
    assert manifest["metadata"]["annotations"] == {"kueue.x-k8s.io/elastic-job": "true"}
    cluster = _cluster(manifest)
    assert cluster["enableInTreeAutoscaling"] is True
    assert cluster["autoscalerOptions"] == AUTOSCALER
    (group,) = cluster["workerGroupSpecs"]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (2, 2, 8)
    for template in _templates(manifest):
        assert template["spec"]["schedulingGates"] == GATE
    serve = yaml.safe_load(manifest["spec"]["serveConfigV2"])
    (llm,) = serve["applications"][0]["args"]["llm_configs"]
    # One Serve replica per GPU worker, between the same bounds.
    assert llm["deployment_config"] == {
        "autoscaling_config": {"min_replicas": 2, "max_replicas": 8, "target_ongoing_requests": 32}
    }
    assert llm["engine_kwargs"]["tensor_parallel_size"] == 1


def test_batch_inference_grows_into_idle_gpus_as_one_elastic_job() -> None:
    manifest = _manifest(planned("prod+run"), "vllm-batch")
    assert manifest["metadata"]["annotations"] == {"kueue.x-k8s.io/elastic-job": "true"}
    cluster = _cluster(manifest)
    assert cluster["enableInTreeAutoscaling"] is True
    assert cluster["autoscalerOptions"] == AUTOSCALER
    (group,) = cluster["workerGroupSpecs"]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (1, 1, 8)
    for template in _templates(manifest):
        assert template["spec"]["schedulingGates"] == GATE
    # Kueue still needs the cluster deleted after the job: elastic does not change that.
    assert manifest["spec"]["shutdownAfterJobFinishes"] is True
    args = shlex.split(manifest["spec"]["entrypoint"])
    assert args[args.index("--min-workers") + 1 :][:3] == ["1", "--max-workers", "8"]


def test_kueue_counts_the_autoscaler_sidecar_in_the_head_and_the_minimum_first() -> None:
    result = planned("prod+run")
    settings = _settings(result, "llm-serve")
    head, workers = ray_pods.pod_sets(WORKLOADS["llm-serve"], settings)
    assert (head.cpu_millis, head.memory_bytes) == (2500, 8 * 2**30 + 512 * 2**20)
    assert (workers.count, workers.total_gpus) == (2, 2)
    _head, biggest = ray_pods.pod_sets(WORKLOADS["llm-serve"], settings, at_max=True)
    assert (biggest.count, biggest.total_gpus) == (8, 8)


def test_fixed_workloads_stay_fixed_gangs() -> None:
    result = planned("prod+run")
    for name in ("aurora-finetune", "qwen-lora", "model-stage"):
        manifest = _manifest(result, name)
        # No elastic-job annotation (model-stage carries Pulumi's wait: test_stage_order.py).
        assert "kueue.x-k8s.io/elastic-job" not in manifest["metadata"].get("annotations", {})
        cluster = _cluster(manifest)
        assert cluster["enableInTreeAutoscaling"] is False
        assert "autoscalerOptions" not in cluster
        for template in _templates(manifest):
            assert "schedulingGates" not in template["spec"]


def test_equal_bounds_are_a_fixed_size() -> None:
    def fixed(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"].update(minReplicas=3, maxReplicas=3)
        config[f"{P}workloads"]["vllm-batch"].update(minWorkers=2)
        del config[f"{P}workloads"]["vllm-batch"]["maxWorkers"]

    result = _run(fixed)
    serve = _manifest(result, "llm-serve")
    assert "annotations" not in serve["metadata"]
    (group,) = _cluster(serve)["workerGroupSpecs"]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (3, 3, 3)
    llm = yaml.safe_load(serve["spec"]["serveConfigV2"])["applications"][0]["args"]
    assert llm["llm_configs"][0]["deployment_config"] == {"num_replicas": 3}
    batch = _manifest(result, "vllm-batch")  # maxWorkers defaults to minWorkers
    assert _cluster(batch)["enableInTreeAutoscaling"] is False
    (group,) = _cluster(batch)["workerGroupSpecs"]
    assert (group["minReplicas"], group["maxReplicas"]) == (2, 2)


def test_kueue_runs_with_elastic_workload_slices() -> None:
    for stack in ("dev", "prod"):
        release = one(planned(stack), RELEASE, "aksray-operators-kueue").inputs
        values = release["values"]
        config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
        assert config["featureGates"] == {"ElasticJobsViaWorkloadSlices": True}
        # Kueue refuses gates given both as flags and in the configuration.
        assert "featureGates" not in values["controllerManager"]


def test_scale_bounds_are_validated(tmp_path: Path) -> None:
    def below(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"].update(minReplicas=3, maxReplicas=2)

    run = assert_rejected(tmp_path, mutated("prod", below), "workloads.llm-serve.maxReplicas")
    assert "below minReplicas (3)" in run.output

    def zero(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["vllm-batch"]["minWorkers"] = 0

    assert_rejected(tmp_path, mutated("prod", zero), "workloads.vllm-batch.minWorkers")

    def wrong_key(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"]["maxWorkers"] = 4

    run = assert_rejected(tmp_path, mutated("prod", wrong_key), "workloads.llm-serve.maxWorkers")
    assert "maxReplicas" in run.output


# --------------------------------------------------------------------------------------------
# aksray plan: minimum and maximum
# --------------------------------------------------------------------------------------------


def _summary(result: RunResult) -> dict[str, Any]:
    from aksray.plan.model.graph import critical_path
    from aksray.plan.model.plan import plan
    from aksray.plan.report.summary import summary

    return summary(plan(result), critical_path(result))


def _findings(result: RunResult) -> Any:
    from aksray.plan.checks.run import run_checks
    from aksray.plan.model.plan import plan

    return run_checks(plan(result))


def test_plan_shows_minimum_and_maximum_gpus_and_the_demand_they_make() -> None:
    data = _summary(planned("prod"))
    rows = {w["workload"]: w for w in data["workloads"]}
    got = {
        name: (w["gangGpus"], w["maxGpus"], w["elastic"], w["maxAdmissibleWorkers"])
        for name, w in rows.items()
    }
    assert got == {
        "aurora-finetune": (1, 1, False, None),
        "qwen-lora": (4, 4, False, None),
        "vllm-batch": (1, 8, True, None),
        "llm-serve": (2, 8, True, None),
        "model-stage": (0, 0, False, None),
    }
    # Idle: the endpoint's 2-GPU minimum fills one 4-GPU A100 node, billed whole; worst case:
    # 1 + 4 + 8 + 8 GPUs; the pools hold 8 x 4 A100 + 4 x 8 H100 + 16 x 1 spot A100.
    assert data["gpuDemand"] == {
        "idleNodes": 1,
        "idleGpus": 4,
        "worstCaseGpus": 21,
        "poolGpus": 80,
    }
    from aksray.plan.report.summary import summary_lines

    text = "\n".join(summary_lines(data))
    assert "3 / 2 (max 8 gpus)" in text
    assert "GPU demand: 4 GPU(s) on 1 node(s) billed while idle" in text


def test_a_maximum_that_never_fits_the_quota_is_a_warning_naming_what_fits() -> None:
    def too_big(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"]["maxReplicas"] = 9  # serving holds 8 per flavor

    findings = _findings(_run(too_big))
    assert findings.errors == []
    (warning,) = [w for w in findings.warnings if w.path == "workloads.llm-serve.maxReplicas"]
    assert warning.message.startswith("llm-serve may scale to 9 GPU workers (9 GPUs), but team ")
    assert "can admit at most 8 of them at once" in warning.message
    assert "Lower maxReplicas to 8" in warning.message
    assert [w for w in _findings(planned("prod+run")).warnings if "may scale" in w.message] == []


def test_the_minimum_is_the_gang_that_must_be_admissible() -> None:
    def too_small_quota(config: dict[str, Any]) -> None:
        config[f"{P}workloads"]["llm-serve"].update(minReplicas=9, maxReplicas=9)

    findings = _findings(_run(too_small_quota))
    assert any(e.message.startswith("llm-serve can never be admitted") for e in findings.errors), (
        findings.errors
    )

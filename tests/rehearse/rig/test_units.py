"""The rehearsal's pure parts: nodes, Kueue wiring, the stack it applies, the stand-in dashboard.

The rig itself (real controllers) is tested by `make rehearse-test`; these pin the inputs it
builds from the stack and the answers it gives KubeRay.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT
from aksray.rehearse import objects as o
from aksray.rehearse.rig.controllers.kueue import (
    framework_path_pattern,
    rig_kueue_config,
    rig_webhooks,
)
from aksray.rehearse.rig.dashboard import (
    DashboardState,
    HeadHosts,
    StandInDashboard,
    head_from_host,
)
from aksray.rehearse.rig.nodes import cluster_pools, daemon_set_pods, node_object
from aksray.rehearse.rig.toolchain import read_env_file
from aksray.rehearse.stack import REHEARSAL_ACCOUNT, read_stack_file, rehearsal_config
from catalog.node_overhead import GPU_NODE_DAEMON_SETS
from catalog.versions import KUBERAY_VERSION

ROOT = PROJECT_ROOT


def test_rig_versions_are_the_served_pins() -> None:
    pins = read_env_file(ROOT / "scripts" / "rig" / "versions.env")
    assert pins["KUEUE_VERSION"] == "v0.19.2"
    # The rig runs the KubeRay the platform ships (the proxy serves v1.6.2's source).
    assert pins["KUBERAY_VERSION"] == pins["KUBERAY_SHIPPED_VERSION"] == f"v{KUBERAY_VERSION}"
    assert pins["KUBERNETES_VERSION"].startswith("v1.34.")
    assert pins["KUBERNETES_STAGING_VERSION"] == "v0." + pins["KUBERNETES_VERSION"][3:]


def dev_cluster() -> Any:
    from aksray.offline.runner import run_program

    return run_program(ROOT / "stacks" / "Pulumi.dev.yaml", stack="dev").settings.cluster


def test_dev_a100_node_has_the_aks_allocatable_and_the_gpu_taint() -> None:
    pools = {p.pool: p for p in cluster_pools(dev_cluster())}
    assert (pools["a100"].count, pools["cpu"].count, pools["system"].count) == (5, 3, 1)
    node = node_object(pools["a100"], 0, "r1")
    assert node["metadata"]["name"] == "aks-a100-10000000-vmss000000"
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.azure.com/agentpool"] == "a100"
    assert labels["node.kubernetes.io/instance-type"] == "Standard_NC24ads_A100_v4"
    assert labels["nvidia.com/gpu.count"] == "1"
    # The numbers `aksray plan` uses: 24 vCPU, 220 GiB (221504Mi as the kernel reports it), 1 GPU.
    assert node["status"]["capacity"] == {
        "cpu": "24000m",
        "memory": f"{221504 * 1024}Ki",
        "pods": "250",
        "ephemeral-storage": "256Gi",
        "nvidia.com/gpu": "1",
    }
    assert node["status"]["allocatable"] == {
        "cpu": "23660m",
        "memory": f"{216354 * 1024}Ki",  # less 5050Mi kube-reserved and 100Mi eviction
        "pods": "250",
        "ephemeral-storage": "256Gi",
        "nvidia.com/gpu": "1",
    }
    assert node["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]


def test_each_gpu_node_runs_the_daemon_sets_requests_as_bound_pods() -> None:
    """One pod per daemon set of an AKS GPU node, bound to it, tolerating its taints, with the
    daemon set's requests (425m and 814Mi in all); none on a CPU node."""
    pools = {p.pool: p for p in cluster_pools(dev_cluster())}
    pods = daemon_set_pods(pools["a100"], 2, "r1")
    node = "aks-a100-10000000-vmss000002"
    assert [p["metadata"]["name"] for p in pods] == [
        f"{d.name}-{node}" for d in GPU_NODE_DAEMON_SETS
    ]
    assert {p["spec"]["nodeName"] for p in pods} == {node}
    assert {p["metadata"]["namespace"] for p in pods} == {"kube-system"}
    assert all(p["metadata"]["labels"]["aksray.io/rehearsal"] == "r1" for p in pods)
    assert all(p["spec"]["tolerations"] == [{"operator": "Exists"}] for p in pods)
    requests = [p["spec"]["containers"][0]["resources"]["requests"] for p in pods]
    assert sum(o.amount("cpu", r["cpu"]) for r in requests) == 425
    assert sum(o.amount("memory", r["memory"]) for r in requests) == 814 * 2**20
    assert daemon_set_pods(pools["cpu"], 0, "r1") == []


def test_system_node_keeps_critical_addons_only_and_cpu_node_has_no_taint() -> None:
    pools = {p.pool: p for p in cluster_pools(dev_cluster())}
    assert node_object(pools["system"], 0, "r")["spec"]["taints"][0]["key"] == "CriticalAddonsOnly"
    cpu = node_object(pools["cpu"], 0, "r")
    assert cpu["spec"]["taints"] == []
    assert "nvidia.com/gpu" not in cpu["status"]["allocatable"]


WEBHOOKS = """
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mutating-webhook-configuration}
webhooks:
- name: mrayjob.kb.io
  clientConfig: {service: {name: svc, namespace: system, path: /mutate-ray-io-v1-rayjob}}
- name: mpod.kb.io
  clientConfig: {service: {name: svc, namespace: system, path: /mutate--v1-pod}}
- name: mworkload.kb.io
  clientConfig:
    service: {name: svc, namespace: system, path: /mutate-kueue-x-k8s-io-v1beta2-workload}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: validating-webhook-configuration}
webhooks:
- name: vraycluster.kb.io
  clientConfig: {service: {name: svc, namespace: system, path: /validate-ray-io-v1-raycluster}}
- name: vrayservice.kb.io
  clientConfig: {service: {name: svc, namespace: system, path: /validate-ray-io-v1-rayservice}}
"""


def test_only_the_webhooks_of_managed_kinds_are_registered_on_a_loopback_url(
    tmp_path: Path,
) -> None:
    manifest = tmp_path / "webhooks.yaml"
    manifest.write_text(WEBHOOKS)
    mutating, validating = rig_webhooks(
        manifest, ["ray.io/rayjob", "ray.io/rayservice"], "https://127.0.0.1:9443", b"CA"
    )
    assert mutating["metadata"] == {"name": "kueue-mutating-webhook-configuration"}
    assert [h["name"] for h in mutating["webhooks"]] == ["mrayjob.kb.io", "mworkload.kb.io"]
    assert mutating["webhooks"][0]["clientConfig"] == {
        "url": "https://127.0.0.1:9443/mutate-ray-io-v1-rayjob",
        "caBundle": "Q0E=",
    }
    # raycluster is not a managed framework: its webhook is not registered.
    assert [h["name"] for h in validating["webhooks"]] == ["vrayservice.kb.io"]
    assert not framework_path_pattern("batch/job").search("/mutate-ray-io-v1-rayjob")


def test_kueue_runs_with_the_platform_configuration_on_loopback(tmp_path: Path) -> None:
    from manifests.helm_values import kueue_manager_config
    from settings.defaults import DEFAULT_PODS_READY_TIMEOUT_MINUTES, DEFAULT_REQUEUE_LIMIT
    from settings.model import PodsReady

    pods_ready = PodsReady(DEFAULT_PODS_READY_TIMEOUT_MINUTES, DEFAULT_REQUEUE_LIMIT)
    platform = kueue_manager_config(metrics=False, pods_ready=pods_ready)
    config = rig_kueue_config(platform, tmp_path, 9443, 18081)
    assert config["integrations"] == platform["integrations"]
    assert config["manageJobsWithoutQueueName"] is False
    assert config["webhook"] == {"port": 9443, "host": "127.0.0.1", "certDir": str(tmp_path)}
    assert config["internalCertManagement"] == {"enable": False}
    assert config["leaderElection"] == {"leaderElect": False}
    # The platform's gates (elastic workloads) stay; the rig only turns the visibility API off.
    assert config["featureGates"] == {
        "ElasticJobsViaWorkloadSlices": True,
        "VisibilityOnDemand": False,
    }


def test_the_rehearsal_stack_keeps_the_organisation_and_replaces_azure() -> None:
    stack = read_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml")
    config = rehearsal_config(stack, "aksray-rehearse")
    cluster = config["aks-ray-platform:cluster"]
    assert cluster["mode"] == "existing"
    assert cluster["kubeconfigContext"] == "aksray-rehearse"
    assert cluster["gpuPools"] == stack["cluster"]["gpuPools"]
    assert "kubernetesVersion" not in cluster
    assert config["aks-ray-platform:storage"]["existingAccount"] == REHEARSAL_ACCOUNT
    assert config["aks-ray-platform:operators"] == {"install": False}
    # The organisation as written, with a stand-in member group for a team that names none.
    (department,) = config["aks-ray-platform:scheduling"]["departments"]
    (team,) = stack["scheduling"]["departments"][0]["teams"]
    assert department["teams"] == [{**team, "members": ["aksray-rehearsal-team-a-members"]}]
    assert config["aks-ray-platform:workloads"] == stack["workloads"]
    assert not any(k.endswith(("location", "huggingfaceToken")) for k in config)


def test_head_service_host_names_the_namespace_and_service() -> None:
    assert head_from_host("qwen-lora-ab12-head-svc.team-a.svc.rehearse.invalid:8265") == (
        "team-a",
        "qwen-lora-ab12-head-svc",
    )


def _free_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def dashboard() -> Any:
    state = DashboardState(timing=lambda _ns, _job: (0.3, False))
    ports = (_free_port("127.0.100.12"), _free_port("127.0.100.13"))
    server = StandInDashboard("127.0.100.12", "127.0.100.13", state, ports)
    yield state, f"http://127.0.100.12:{ports[0]}", f"http://127.0.100.13:{ports[1]}"
    server.close()


def call(method: str, url: str, host: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Host": host})
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_job_submitted_the_way_kuberay_does_runs_then_succeeds(dashboard: Any) -> None:
    _, base, _ = dashboard
    host = "raycluster-x-head-svc.team-a.svc.rehearse.invalid:8265"
    # KubeRay's HTTPMode: a status call first (404 -> it submits), then polls.
    assert call("GET", f"{base}/api/jobs/qwen-lora-1-abc", host)[0] == 404
    code, body = call(
        "POST",
        f"{base}/api/jobs/",
        host,
        {"submission_id": "qwen-lora-1-abc", "entrypoint": "python -m x"},
    )
    assert (code, body) == (200, {"job_id": "qwen-lora-1-abc", "submission_id": "qwen-lora-1-abc"})
    assert call("POST", f"{base}/api/jobs/", host, {"submission_id": "qwen-lora-1-abc"})[0] == 500
    assert call("GET", f"{base}/api/jobs/qwen-lora-1-abc", host)[1]["status"] == "PENDING"
    # The same id in another namespace is another head: unknown there.
    assert (
        call("GET", f"{base}/api/jobs/qwen-lora-1-abc", host.replace("team-a", "team-b"))[0] == 404
    )
    deadline = time.monotonic() + 5
    status = ""
    while time.monotonic() < deadline and status != "SUCCEEDED":
        status = call("GET", f"{base}/api/jobs/qwen-lora-1-abc", host)[1]["status"]
        time.sleep(0.1)
    assert status == "SUCCEEDED"
    info = call("GET", f"{base}/api/jobs/qwen-lora-1-abc", host)[1]
    assert info["end_time"] >= info["start_time"]


def test_serve_applications_report_running_once_deployed(dashboard: Any) -> None:
    _, base, serve = dashboard
    host = "llm-serve-head-svc.serving.svc.rehearse.invalid:8265"
    config = {
        "applications": [
            {"name": "llm", "import_path": "x:app", "deployments": [{"name": "LLMServer"}]}
        ]
    }
    assert call("PUT", f"{base}/api/serve/applications/", host, config)[0] == 200
    details = call("GET", f"{base}/api/serve/applications/?api_type=declarative", host)[1]
    assert details["applications"]["llm"]["status"] == "RUNNING"
    assert details["applications"]["llm"]["deployments"]["LLMServer"]["status"] == "HEALTHY"
    assert call("GET", f"{serve}/-/healthz", host)[0] == 200


def test_head_hosts_file_grows_in_place(tmp_path: Path) -> None:
    (tmp_path / "hosts").write_text("127.0.0.1 localhost\n")
    hosts = HeadHosts(tmp_path, "127.0.100.2", "rehearse.invalid")
    inode = (tmp_path / "hosts").stat().st_ino
    hosts.update([("team-a", "x-head-svc")])
    hosts.update([("team-b", "y-head-svc")])
    assert (tmp_path / "hosts").read_text().splitlines() == [
        "127.0.0.1 localhost",
        "127.0.100.2 x-head-svc.team-a.svc.rehearse.invalid",
        "127.0.100.2 y-head-svc.team-b.svc.rehearse.invalid",
    ]
    assert (tmp_path / "hosts").stat().st_ino == inode  # bound over /etc: never replaced


def test_admission_reads_flavors_and_usage_per_pod_set() -> None:
    workload = yaml.safe_load(
        """
metadata: {name: w, namespace: team-a, ownerReferences: [{kind: RayJob, name: qwen-lora-x}]}
status:
  conditions: [{type: QuotaReserved, status: "True"}, {type: Admitted, status: "True"}]
  admission:
    clusterQueue: team-a
    podSetAssignments:
    - {name: head, flavors: {cpu: cpu, memory: cpu}, resourceUsage: {cpu: "2", memory: 8Gi}}
    - name: gpu
      flavors: {cpu: a100, memory: a100, nvidia.com/gpu: a100}
      resourceUsage: {cpu: "48", memory: 384Gi, nvidia.com/gpu: "4"}
"""
    )
    adm = o.admission(workload)
    assert adm is not None
    assert adm.cluster_queue == "team-a"
    assert adm.flavors == {"head": "cpu", "gpu": "a100"}
    assert adm.usage[("a100", "nvidia.com/gpu")] == 4
    assert adm.usage[("cpu", "cpu")] == 2000
    assert o.is_admitted(workload)
    assert o.owner(workload) == ("RayJob", "qwen-lora-x")


def test_the_timeline_says_where_the_workers_and_the_head_were_admitted() -> None:
    from aksray.rehearse.observer import admitted_detail
    from aksray.rehearse.record import TimelineEvent

    adm = o.Admission("team-a", {"head": "cpu", "gpu": "a100"}, {})
    event = TimelineEvent(12.34, "qwen-lora", "admitted", admitted_detail(adm))
    assert event.line() == "t=+12.3s qwen-lora admitted on a100 (team-a; head on cpu)"
    long = TimelineEvent(1.0, "x", "evicted", "y" * 500)
    assert len(long.line(width=50)) < 80
    assert long.as_json()["detail"] == "y" * 500


@pytest.mark.parametrize(
    ("stack", "workers", "noted"),
    [
        # One team, a pool of 2 one-GPU nodes: the 4-worker default can never be admitted.
        (ROOT / "tests" / "stacks" / "kai-demo.yaml", 2, True),
        (ROOT / "stacks" / "Pulumi.dev.yaml", 4, False),  # the stack's own count fits
    ],
)
def test_the_node_scenarios_train_a_gang_the_team_is_admitted(
    stack: Path, workers: int, noted: bool
) -> None:
    from aksray.offline.runner import run_program
    from aksray.rehearse.scenarios.context import Context, first_gpu_team, training_that_fits
    from aksray.rehearse.stack import stack_workloads

    settings = run_program(stack).settings
    ctx = Context(
        settings, observer=None, apply=None, set_nodes=None, set_run_time=None,  # type: ignore[arg-type]
        stack_workloads=stack_workloads(read_stack_file(stack)),
    )  # fmt: skip
    entry = training_that_fits(ctx, first_gpu_team(ctx))
    assert (entry["enabled"], entry["run"]) == (True, "rehearse-1")
    assert entry.get("workers") == workers
    assert bool(ctx.notes) is noted


def test_every_scenario_the_cli_offers_has_its_module_and_every_module_is_offered() -> None:
    import importlib
    import pkgutil

    from aksray.rehearse import scenarios

    for name in scenarios.SCENARIOS:
        assert callable(importlib.import_module(scenarios.module_name(name)).play), name
    playing = {
        m.name for m in pkgutil.iter_modules(scenarios.__path__)
        if hasattr(importlib.import_module(f"{scenarios.__name__}.{m.name}"), "play")
    }  # fmt: skip
    assert playing == {scenarios.module_name(n).rsplit(".", 1)[1] for n in scenarios.SCENARIOS}


def test_a_head_with_token_auth_takes_writes_only_with_its_token(dashboard: Any) -> None:
    state, base, _ = dashboard
    host = "qwen-lora-x-head-svc.team-a.svc.rehearse.invalid:8265"
    job = {"submission_id": "qwen-lora-1-abc", "entrypoint": "python -m x"}
    state.tokens[("team-a", "qwen-lora-x-head-svc")] = "s3cret"
    assert call("POST", f"{base}/api/jobs/", host, job)[0] == 401
    assert call("DELETE", f"{base}/api/jobs/qwen-lora-1-abc", host)[0] == 401
    assert state.refused == 2
    # Reads stay open, as on Ray's dashboard; KubeRay's header opens writes.
    assert call("GET", f"{base}/api/jobs/qwen-lora-1-abc", host)[0] == 404
    request = urllib.request.Request(
        f"{base}/api/jobs/", data=json.dumps(job).encode(), method="POST",
        headers={"Host": host, "x-ray-authorization": "Bearer s3cret"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200
    # A head without token auth (another cluster) is unaffected.
    other = host.replace("qwen-lora-x", "aurora-y")
    assert call("POST", f"{base}/api/jobs/", other, {"submission_id": "aurora-1"})[0] == 200


def test_the_token_secret_is_named_after_the_cluster_unless_it_names_one() -> None:
    from aksray.rehearse.invariants.ray_token_required import cluster_token_secret

    def cluster(auth: Any) -> dict[str, Any]:
        return {"metadata": {"name": "qwen-lora-x"}, "spec": {"authOptions": auth}}

    assert cluster_token_secret(cluster({"mode": "token"})) == "qwen-lora-x"
    assert cluster_token_secret(cluster({"mode": "token", "secretName": "mine"})) == "mine"
    assert cluster_token_secret(cluster({"mode": "disabled"})) is None
    assert cluster_token_secret({"metadata": {"name": "x"}, "spec": {}}) is None


def test_the_rig_keeps_sampling_while_pulumi_up_waits() -> None:
    """A `pulumi up` that awaits a RayJob (model-stage's waitFor) only ends if the rig keeps the
    operator's hosts file current meanwhile: sampling goes on until the up returns."""
    import time as clock

    from aksray.rehearse.run import sample_while

    class CountingObserver:
        samples = 0

        def sample(self) -> None:
            self.samples += 1

    observer = CountingObserver()

    def up() -> float:
        clock.sleep(0.45)
        return 12.5

    assert sample_while(observer.sample, up, interval=0.1) == 12.5
    assert observer.samples >= 3


def test_a_rehearsals_folder_name_is_a_valid_node_label_value(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The run folder's name labels the rehearsal's Nodes; a name ending in mkdtemp's `_` made
    the apiserver refuse the first Node (422)."""
    import re
    import tempfile

    from aksray.rehearse.rig.controlplane import rig_run_dir

    label_value = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    names = [rig_run_dir().name for _ in range(200)]
    assert all(label_value.match(name) and len(name) <= 63 for name in names)


def test_polling_stops_when_the_sample_holds_and_samples_once_past_the_deadline() -> None:
    from aksray.rehearse.record import poll_until

    answers = iter([False, False, True])
    assert poll_until(lambda: next(answers), timeout=5, interval=0)
    taken: list[float] = []

    def never() -> bool:
        taken.append(time.monotonic())
        return False

    started = time.monotonic()
    assert not poll_until(never, timeout=0.05, interval=0.01)
    assert taken[-1] - started > 0.05  # the last sample comes after the deadline

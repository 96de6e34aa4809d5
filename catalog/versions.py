"""Every pinned version in one table: Helm charts, images and the API versions we write.

Nothing else in the project spells a chart version, an image tag or a CRD API version; builders
and components import them from here. A chart is never resolved to "latest": each release names
its exact version.

How each version string was checked (charts publish their own formats):

- GPU Operator: NVIDIA packages the chart with the git tag as the chart version, `v` included
  (gpu-operator `.github/workflows/release-rc-assets.yaml` at v26.7.0: `helm package --version
  "${RELEASE_TAG}"`; NVIDIA's published chart index lists e.g. `version: v25.3.4`). So `v26.7.0`.
  The chart's `appVersion` pins the operator image `nvcr.io/nvidia/gpu-operator:v26.7.0`.
- KubeRay: `Chart.yaml` at ray-operator/v1.6.2 says `version: 1.6.2`, published as-is to the Helm
  repository. 1.6.2, not the newer 1.7.0: Kueue 0.19.2 is built against ray-operator v1.6.2 (its
  go.mod) and admits a RayService by flipping `rayClusterConfig.suspend`, which 1.6.1 and later
  apply to an existing RayCluster in place, while 1.7.0 passes `suspend` to the RayCluster only
  when it creates it (an endpoint admitted after that never starts); 1.7.0 adds only fields the
  platform does not write (`networkPolicy`, `tlsOptions`, `historyServerOptions`, ingress and
  GCS-storage options, RayService `spec.suspend`). It is also the version the rehearsal rig
  builds (the Go module proxy refuses v1.7.0) and the one Microsoft's registry ships.
- Kueue: `hack/helm-chart-package.sh` at v0.19.2 strips the leading `v` for the chart
  (`chart_version="${GIT_TAG/#v/}"` -> `0.19.2`) and rewrites the image to
  `registry.k8s.io/kueue/kueue:v0.19.2` with pull policy IfNotPresent.
- KAI Scheduler: `Chart.yaml` at the tag says `0.0.0`; the release workflow
  (`.github/workflows/push-artifacts.yaml` at v0.17.0) packages with
  `--version/--app-version ${GITHUB_REF_NAME}`, the tag itself, so the OCI tag is `v0.17.0`
  (with `v`), and replaces the `global.registry` placeholder `registry/local/kai-scheduler` by
  `ghcr.io/kai-scheduler/kai-scheduler`. The project moved from the NVIDIA GitHub
  organisation; the v0.20.x tags there are retracted and must never be installed.
- Ray image: `rayproject/ray-llm` carries Ray with the `llm` extra (vLLM included) on CUDA. Tag
  `2.58.0-py312-cu130` = Ray 2.58.0 (whose `ray[llm]` pins vLLM 0.26.0), Python 3.12, CUDA 13.0
  (NVIDIA driver 580 or newer on the GPU nodes). Every payload is written against Ray 2.58.0:
  `ray.data.llm.build_processor` / `vLLMEngineProcessorConfig`, `ray.serve.llm.build_openai_app`,
  `LLMConfig.lora_config.dynamic_lora_loading_path` with `azure://` paths. The payload test
  environment (workloads/requirements-test.txt) pins the same Ray version, and `RAY_VERSION` is
  what the RayCluster specs declare.
- kubectl image: `registry.k8s.io/kubectl` is the Kubernetes project's own kubectl image, tagged
  with the Kubernetes release; since Kubernetes 1.28 it is built on `debian-base` with bash
  (kubernetes `build/server-image/kubectl/Dockerfile`). Its minor follows the cluster's default
  `kubernetesVersion` (kubectl supports one minor either side of the apiserver).
- Microsoft's builds (`operators.chartSource: mcr`): Microsoft's registry
  `oci://mcr.microsoft.com/aks/ai-runtime/helm` ships chart `kueue` 0.19.2 and chart
  `kuberay-operator` 1.6.2, as Azure/taugrid's `charts/taugrid/Chart.yaml` pins them (commit
  0702318), with the images `mcr.microsoft.com/oss/v2/kueue/kueue:v0.19.2` and
  `mcr.microsoft.com/oss/v2/kuberay/operator:v1.6.2` set through the charts' own image values
  (taugrid's values.yaml). So both sources install the same Kueue/KubeRay pair, the one the
  conformance tests and the rehearsal check. Microsoft publishes no GPU Operator or KAI Scheduler
  chart there (the AKS docs install the GPU Operator from NVIDIA's repository; KAI has no
  Microsoft build), so both keep their upstream charts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

OCI_PREFIX: Final = "oci://"


@dataclass(frozen=True)
class HelmChart:
    """One pinned chart and where its release goes."""

    release: str  # the Helm release name
    chart: str  # the chart's name in its repository
    version: str  # exactly as the chart repository publishes it
    repository: str  # an https chart repository, or an oci:// registry path without the chart
    namespace: str  # the namespace the release (and the stack) owns
    # CRDs the chart keeps in `crds/` with nothing that upgrades them: Helm installs that folder
    # on the first install only, so the stack registers them itself (components/chart_crds.py)
    stack_crds: tuple[str, ...] = ()

    @property
    def is_oci(self) -> bool:
        return self.repository.startswith(OCI_PREFIX)

    @property
    def chart_ref(self) -> str:
        """What Helm is told to install: the full OCI reference, or the chart name in the repo."""
        return f"{self.repository}/{self.chart}" if self.is_oci else self.chart

    @property
    def repository_url(self) -> str | None:
        """The https chart repository; None for an OCI chart (its reference says it all)."""
        return None if self.is_oci else self.repository


GPU_OPERATOR: Final = HelmChart(
    release="gpu-operator",
    chart="gpu-operator",
    version="v26.7.0",
    repository="https://helm.ngc.nvidia.com/nvidia",
    namespace="gpu-operator",
)
# The one Kueue/KubeRay pair every chart source installs (see the module docstring).
KUEUE_VERSION: Final = "0.19.2"
KUBERAY_VERSION: Final = "1.6.2"

# KubeRay's chart keeps its CRDs in `crds/` only, with no hook to upgrade them (the GPU Operator
# and KAI upgrade theirs in pre-upgrade hooks; Kueue's are templates, which Helm upgrades):
# these are the files of that folder at 1.6.2, in both sources' charts.
KUBERAY_CRDS: Final = (
    "rayclusters.ray.io",
    "raycronjobs.ray.io",
    "rayjobs.ray.io",
    "rayservices.ray.io",
)

KUBERAY_OPERATOR: Final = HelmChart(
    release="kuberay-operator",
    chart="kuberay-operator",
    version=KUBERAY_VERSION,
    repository="https://ray-project.github.io/kuberay-helm/",
    namespace="kuberay-system",
    stack_crds=KUBERAY_CRDS,
)
KUEUE: Final = HelmChart(
    release="kueue",
    chart="kueue",
    version=KUEUE_VERSION,
    repository="oci://registry.k8s.io/kueue/charts",
    namespace="kueue-system",
)
# The service account the KubeRay chart runs its operator as (values.yaml `serviceAccount.name`,
# the same in Microsoft's build): the one identity that creates Ray pods in team namespaces.
KUBERAY_OPERATOR_SERVICE_ACCOUNT: Final = "kuberay-operator"
KAI_SCHEDULER: Final = HelmChart(
    release="kai-scheduler",
    chart="kai-scheduler",
    version="v0.17.0",
    repository="oci://ghcr.io/kai-scheduler/kai-scheduler",
    namespace="kai-scheduler",
)
CHARTS: Final = (GPU_OPERATOR, KUBERAY_OPERATOR, KUEUE, KAI_SCHEDULER)

# Microsoft's builds of KubeRay and Kueue (see the module docstring): same releases, same
# namespaces, same versions, Microsoft's registry and images.
MCR_HELM_REGISTRY: Final = "oci://mcr.microsoft.com/aks/ai-runtime/helm"
MCR_KUBERAY_OPERATOR: Final = HelmChart(
    release=KUBERAY_OPERATOR.release,
    chart="kuberay-operator",
    version=KUBERAY_VERSION,
    repository=MCR_HELM_REGISTRY,
    namespace=KUBERAY_OPERATOR.namespace,
    stack_crds=KUBERAY_CRDS,
)
MCR_KUEUE: Final = HelmChart(
    release=KUEUE.release,
    chart="kueue",
    version=KUEUE_VERSION,
    repository=MCR_HELM_REGISTRY,
    namespace=KUEUE.namespace,
)

# Which release installs the CRDs of an API group: a custom resource must wait for it.
CRD_GROUP_RELEASES: Final[dict[str, str]] = {
    "nvidia.com": GPU_OPERATOR.release,
    "resource.nvidia.com": GPU_OPERATOR.release,
    "nfd.k8s-sigs.io": GPU_OPERATOR.release,  # its bundled Node Feature Discovery chart
    "ray.io": KUBERAY_OPERATOR.release,
    "kueue.x-k8s.io": KUEUE.release,
    "scheduling.run.ai": KAI_SCHEDULER.release,
    "kai.scheduler": KAI_SCHEDULER.release,
}


def release_for_api_version(api_version: str) -> str | None:
    """The release that installs the CRD of `api_version`; None for built-in APIs."""
    group = api_version.rpartition("/")[0]
    return CRD_GROUP_RELEASES.get(group)


def chart_for_api_version(api_version: str) -> HelmChart | None:
    """The upstream chart whose release installs the CRD of `api_version`; None for built-in."""
    release = release_for_api_version(api_version)
    return next((chart for chart in CHARTS if chart.release == release), None)


# Namespaces KAI's chart creates for itself (resource-reservation pods for GPU sharing, and the
# node-scale adjuster's scaling pods); teams must not use them either.
KAI_RESOURCE_RESERVATION_NAMESPACE: Final = "kai-resource-reservation"
KAI_SCALE_ADJUST_NAMESPACE: Final = "kai-scale-adjust"


@dataclass(frozen=True)
class Image:
    repository: str
    tag: str

    def __str__(self) -> str:
        return f"{self.repository}:{self.tag}"


# Images set explicitly in the values, each equal to what the published chart already uses, so
# the rendered values say exactly what runs. Their tags follow the chart versions (each project
# tags its images with its release tag), so bumping a chart above bumps its image too.
KUEUE_IMAGE: Final = Image("registry.k8s.io/kueue/kueue", f"v{KUEUE.version}")
KUBERAY_OPERATOR_IMAGE: Final = Image("quay.io/kuberay/operator", f"v{KUBERAY_OPERATOR.version}")
MCR_KUEUE_IMAGE: Final = Image("mcr.microsoft.com/oss/v2/kueue/kueue", f"v{MCR_KUEUE.version}")
MCR_KUBERAY_OPERATOR_IMAGE: Final = Image(
    "mcr.microsoft.com/oss/v2/kuberay/operator", f"v{MCR_KUBERAY_OPERATOR.version}"
)
# KAI names every component image `<registry>/<component>:<tag>`.
KAI_REGISTRY: Final = "ghcr.io/kai-scheduler/kai-scheduler"
KAI_IMAGE_TAG: Final = KAI_SCHEDULER.version

# The image of the Job that waits for KAI's queue webhook (manifests/kai_webhook.py).
KUBECTL_IMAGE: Final = Image("registry.k8s.io/kubectl", "v1.35.0")

ChartSource = Literal["upstream", "mcr"]
CHART_SOURCES: Final[tuple[ChartSource, ...]] = ("upstream", "mcr")


@dataclass(frozen=True)
class ChartSet:
    """The four charts one `operators.chartSource` installs, with the images set in their values."""

    source: ChartSource
    gpu_operator: HelmChart
    kuberay: HelmChart
    kueue: HelmChart
    kai: HelmChart
    kuberay_image: Image
    kueue_image: Image

    @property
    def charts(self) -> tuple[HelmChart, ...]:
        return (self.gpu_operator, self.kuberay, self.kueue, self.kai)


CHART_SETS: Final[dict[ChartSource, ChartSet]] = {
    "upstream": ChartSet(
        "upstream",
        GPU_OPERATOR,
        KUBERAY_OPERATOR,
        KUEUE,
        KAI_SCHEDULER,
        KUBERAY_OPERATOR_IMAGE,
        KUEUE_IMAGE,
    ),
    "mcr": ChartSet(
        "mcr",
        GPU_OPERATOR,
        MCR_KUBERAY_OPERATOR,
        MCR_KUEUE,
        KAI_SCHEDULER,
        MCR_KUBERAY_OPERATOR_IMAGE,
        MCR_KUEUE_IMAGE,
    ),
}

# The Ray image every head and worker runs (see the module docstring).
RAY_VERSION: Final = "2.58.0"
# Docker Hub's repository of the image (`docker.io/rayproject/ray-llm`; no `library/` prefix: not
# an official image), and the image every Ray pod pulls without `cluster.imageCache`.
RAY_IMAGE_REPOSITORY: Final = "rayproject/ray-llm"
RAY_IMAGE: Final = f"{RAY_IMAGE_REPOSITORY}:{RAY_VERSION}-py312-cu130"
# The user the rayproject images run as: `ray`, uid 1000, primary group `users` (gid 100), set by
# the images' base Dockerfile (`useradd ... ray --uid 1000 --gid 100`, then `USER 1000`). vLLM,
# CUDA and every Ray process run as that user; the GPUs reach the container through the device
# plugin, which needs no root in it.
RAY_IMAGE_UID: Final = 1000
RAY_IMAGE_GID: Final = 100

# API versions of the objects we write. Kueue v0.19 stores v1beta2; v1beta1 is deprecated and
# names the ClusterQueue cohort field `cohort` instead of `cohortName`.
KUEUE_API_VERSION: Final = "kueue.x-k8s.io/v1beta2"
KUEUE_CONFIG_API_VERSION: Final = "config.kueue.x-k8s.io/v1beta2"
KAI_API_VERSION: Final = "scheduling.run.ai/v2"
RAY_API_VERSION: Final = "ray.io/v1"
# ValidatingAdmissionPolicy and its binding: GA since Kubernetes 1.30
# (manifests/access/admission.py).
ADMISSION_API_VERSION: Final = "admissionregistration.k8s.io/v1"
RBAC_API_VERSION: Final = "rbac.authorization.k8s.io/v1"

# Scrape objects (manifests/scrape.py): AKS's managed Prometheus agent reads only its own
# group; a cluster's own Prometheus Operator reads the upstream one.
AZURE_MONITOR_SCRAPE_API_VERSION: Final = "azmonitoring.coreos.com/v1"
PROMETHEUS_OPERATOR_API_VERSION: Final = "monitoring.coreos.com/v1"
# Azure Managed Grafana's Grafana major version (Microsoft.Dashboard/grafana 2024-10-01).
GRAFANA_MAJOR_VERSION: Final = "11"

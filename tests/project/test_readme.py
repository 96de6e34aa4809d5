"""The README states what the code does: its version table, its defaults and its links cannot
drift from catalog/ and settings/defaults.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import pytest

from aksray.offline.runner import PROJECT_ROOT
from catalog.versions import CHARTS, RAY_IMAGE
from settings import defaults
from workloads.catalog import WORKLOADS

README: Final = PROJECT_ROOT / "README.md"
DOCS: Final = sorted((PROJECT_ROOT / "docs").glob("*.md"))


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _table(section: str) -> list[list[str]]:
    """The rows of the first table in a section, cells stripped (header and rule left out)."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def _code(cell: str) -> str:
    match = re.fullmatch(r"`([^`]*)`", cell)
    assert match, f"{cell!r} is not one `code` span"
    return match.group(1)


def test_the_chart_table_is_the_catalog() -> None:
    rows = _table(_section(README.read_text(), "Cluster software"))
    assert [[_code(cell) for cell in row] for row in rows] == [
        [chart.release, chart.chart, chart.version, chart.repository, chart.namespace]
        for chart in CHARTS
    ]


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.name)
def test_every_ray_image_named_is_the_pinned_one(path: Path) -> None:
    named = set(re.findall(r"rayproject/ray-llm:[\w.-]+", path.read_text()))
    assert named <= {RAY_IMAGE}


def _yaml(value: object) -> str:
    """A default as the configuration reference writes it (YAML flow style)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    return str(value)


def _expected_defaults() -> dict[str, str]:
    d = defaults
    window = d.DEFAULT_MAINTENANCE_WINDOW
    qwen_workers = sum(group.replicas for group in WORKLOADS["qwen-lora"].workers)
    return {
        "location": d.DEFAULT_LOCATION,
        "cluster.mode": d.DEFAULT_CLUSTER_MODE,
        "cluster.kubernetesVersion": f'"{d.DEFAULT_KUBERNETES_VERSION}"',
        "cluster.gpuDriver": d.DEFAULT_GPU_DRIVER,
        "cluster.systemPool": f"{{vmSize: {d.DEFAULT_SYSTEM_POOL.vm_size}, "
        f"count: {d.DEFAULT_SYSTEM_POOL.count}}}",
        "cluster.cpuPool": f"{{vmSize: {d.DEFAULT_CPU_POOL.vm_size}, "
        f"minCount: {d.DEFAULT_CPU_POOL.min_count}, maxCount: {d.DEFAULT_CPU_POOL.max_count}}}",
        "cluster.renderYamlTo": f'"{d.DEFAULT_RENDER_YAML_TO}"',
        "cluster.localAccounts": _yaml(d.DEFAULT_LOCAL_ACCOUNTS),
        "cluster.deployerPrincipalType": d.DEFAULT_DEPLOYER_PRINCIPAL_TYPE,
        "cluster.createRoleAssignments": _yaml(d.DEFAULT_CREATE_ROLE_ASSIGNMENTS),
        "cluster.maintenanceWindow": f"{{dayOfWeek: {window.day_of_week}, startTime: "
        f'"{window.start_time}", durationHours: {window.duration_hours}, utcOffset: '
        f'"{window.utc_offset}", intervalWeeks: {window.interval_weeks}}}',
        "storage.enabled": _yaml(d.DEFAULT_STORAGE_ENABLED),
        "storage.containers": _yaml(d.DEFAULT_CONTAINERS),
        "storage.protect": _yaml(d.DEFAULT_STORAGE_PROTECT),
        "...teams[].overQuotaWeight": str(d.DEFAULT_OVER_QUOTA_WEIGHT),
        "scheduling.queueingStrategy": d.DEFAULT_QUEUEING_STRATEGY,
        "scheduling.allowOvercommit": _yaml(d.DEFAULT_ALLOW_OVERCOMMIT),
        "scheduling.podsReadyTimeoutMinutes": str(d.DEFAULT_PODS_READY_TIMEOUT_MINUTES),
        "scheduling.requeueLimit": str(d.DEFAULT_REQUEUE_LIMIT),
        "workloads.qwen-lora.workers": str(qwen_workers),
        "workloads.vllm-batch.loraAdapter": _yaml(d.DEFAULT_LORA_ADAPTER),
        "workloads.llm-serve.loraAdapter": _yaml(d.DEFAULT_LORA_ADAPTER),
        "workloads.model-stage.revision": d.DEFAULT_MODEL_REVISION,
        "workloads.llm-serve.minReplicas": str(d.DEFAULT_MIN_WORKERS),
        "workloads.vllm-batch.minWorkers": str(d.DEFAULT_MIN_WORKERS),
        "operators.install": _yaml(d.DEFAULT_OPERATORS_INSTALL),
        "operators.gpuSharing": _yaml(d.DEFAULT_GPU_SHARING),
        "observability.enabled": _yaml(d.DEFAULT_OBSERVABILITY_ENABLED),
        "observability.grafana": _yaml(d.DEFAULT_GRAFANA),
        "observability.prometheusOperator": _yaml(d.DEFAULT_PROMETHEUS_OPERATOR),
        "operators.chartSource": d.DEFAULT_CHART_SOURCE,
    }


def test_the_configuration_reference_gives_the_settings_defaults() -> None:
    rows = _table(_section(README.read_text(), "Configuration reference"))
    documented = {_code(row[0]): row[1] for row in rows}
    expected = _expected_defaults()
    assert {key: documented.get(key) for key in expected} == {
        key: f"`{value}`" for key, value in expected.items()
    }
    gpu_pools = next(row[2] for row in rows if row[0] == "`cluster.gpuPools[]`")
    assert f"`minCount` default `{defaults.DEFAULT_GPU_POOL_MIN_COUNT}`" in gpu_pools
    assert f"`spot` default `{_yaml(defaults.DEFAULT_GPU_POOL_SPOT)}`" in gpu_pools


def test_the_quick_start_and_the_operator_path() -> None:
    text = README.read_text()
    assert "make install && .venv/bin/aksray plan --stack dev" in text
    assert "\nmake test " in text
    headings = re.findall(r"(?m)^## (.+)$", text)
    for heading in (
        "Quick start",
        "Architecture",
        "Prerequisites",
        "The offline planner",
        "Configuration reference",
        "Deploying",
        "Tearing down",
        "Troubleshooting",
    ):
        assert heading in headings
    contents = _section(text, "Contents")
    assert [h for h in headings if h != "Contents"] == [
        h for h in headings if f"(#{_anchor(h)})" in contents
    ]
    assert len(text.splitlines()) <= 550


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.name)
def test_every_relative_link_resolves(path: Path) -> None:
    text = path.read_text()
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if "://" in target:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(target)
        elif anchor:
            headings = re.findall(r"(?m)^#+ (.+)$", linked.read_text())
            if anchor not in {_anchor(h) for h in headings}:
                broken.append(target)
    assert broken == []


def test_the_summary_example_is_what_plan_prints_for_dev() -> None:
    section = (PROJECT_ROOT / "docs" / "planner.md").read_text()
    block = re.search(r"```\n(Pools \(.*?)```\n", section, re.DOTALL)
    assert block, "docs/planner.md shows dev's summary in a code block"
    plan = (PROJECT_ROOT / "tests" / "golden" / "dev" / "plan.txt").read_text()
    assert block.group(1) == plan[plan.index("Pools (") :]


# The engine's cold build time, measured on 2 cores (17 min quiet, 54 min busy): said one way
# wherever it is said, with the Go caches it leaves outside the repository.
ENGINE_COLD = "17-54 min"
ENGINE_MEASURED = {ENGINE_COLD, "17 min", "54 min"}  # the range and its two measurements
ENGINE_TIME_FILES: Final = (
    "README.md",
    "Makefile",
    ".ci/run",
    "docs/development.md",
    "scripts/engine/README.md",
    "scripts/engine/bootstrap.sh",
    "scripts/engine/e2e.sh",
    "scripts/engine/pulumi.sh",
    "aksray/rehearse/rig/toolchain.py",
)
_DURATION = re.compile(r"\d+(?:-\d+)?\s*min(?:utes)?\b|tens of minutes|half an hour|an hour")


@pytest.mark.parametrize("name", ENGINE_TIME_FILES)
def test_the_engine_build_time_is_given_one_way(name: str) -> None:
    text = (PROJECT_ROOT / name).read_text()
    assert ENGINE_COLD in text
    for line in text.splitlines():
        # A line about building the engine: every duration on it is the one figure.
        if re.search(r"\bengine\b", line, re.IGNORECASE) and re.search(r"\bcold\b", line):
            found = [d for d in _DURATION.findall(line) if "rig" not in line.split(d)[0][-30:]]
            assert set(found) <= ENGINE_MEASURED, line
    if name in ("README.md", "docs/development.md", "scripts/engine/README.md"):
        prose = " ".join(text.split())
        assert re.search(
            r"about 8 GB of Go (module and build )?caches outside the repository", prose
        )


def test_the_stack_list_is_the_stack_folder() -> None:
    rows = _table(_section(README.read_text(), "Architecture"))
    (cell,) = [row[1] for row in rows if row[0] == "`stacks/`"]
    listed = set(re.findall(r"`(Pulumi\.[\w-]+\.yaml)`", cell))
    assert listed == {p.name for p in (PROJECT_ROOT / "stacks").glob("Pulumi.*.yaml")}


def test_the_rehearsal_names_every_scenario() -> None:
    from aksray.rehearse.multikueue import MULTIKUEUE_SCENARIO
    from aksray.rehearse.scenarios import SCENARIOS

    section = " ".join(_section(README.read_text(), "Rehearsal on the real controllers").split())
    named = re.findall(r"`([a-z]+(?:-[a-z]+)*)`", section)
    assert [n for n in named if n in {*SCENARIOS, MULTIKUEUE_SCENARIO, "all"}] == [
        *SCENARIOS,
        "all",
        MULTIKUEUE_SCENARIO,
        MULTIKUEUE_SCENARIO,
    ]

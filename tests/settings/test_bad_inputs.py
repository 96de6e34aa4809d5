"""A corpus of broken stack files, and a fuzzer over the dev stack: never a traceback.

Each file in tests/bad_inputs/ names, in its first line `# expect: <path>`, the config path (or
the file itself) that its error must name.
"""

from __future__ import annotations

import codecs
import copy
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aksray.offline.runner import PROJECT_ROOT, run_program
from aksray.stackfile.reader import StackFileError
from settings.errors import PER_KIND
from tests.support.harness import cli, stack_document
from tests.support.scripts import load_script

CORPUS = sorted((PROJECT_ROOT / "tests" / "bad_inputs").glob("*.yaml"))


def _expected_path(file: Path) -> str:
    data = file.read_bytes()
    # Files in other encodings (the cases of encoding mistakes) still say what they expect.
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    first = data.decode("utf-16" if utf16 else "latin-1").splitlines()[0]
    assert first.startswith("# expect: "), f"{file.name} must start with '# expect: <path>'"
    return first[len("# expect: ") :].strip()


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 25


@pytest.mark.parametrize("file", CORPUS, ids=[f.stem for f in CORPUS])
def test_broken_stack_file_is_refused_cleanly(file: Path) -> None:
    expected = _expected_path(file)
    run = cli("plan", "--config", file)
    assert run.code == 1, run.output
    assert "Traceback" not in run.output and "internal error" not in run.output
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), run.stderr
    if ".yaml" in expected:  # a problem with the file itself, before any config key
        assert any(f"{expected}: " in line for line in lines), run.stderr
    else:
        assert any(line.startswith(f"error: {expected}: ") for line in lines), run.stderr
    try:
        result = run_program(file)
    except StackFileError:
        return  # the file never reached the program
    assert result.problems and result.resources == []


# ---- fuzzing: mutate the dev stack anywhere, in any way --------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            "a100",
            "cpu",
            "team-a",
            "default",
            "64Gi",
            "500m",
            "Standard_D8ds_v6",
            "existing",
            "aks",
            "inference",
            "",
            "1.35",
        ]
    ),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=8), children, max_size=3),
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def _mutated_dev(draw: st.DrawFn) -> dict[str, Any]:
    document = stack_document("dev")
    config = document["config"]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [p for p in _paths(config) if p]
        path = draw(st.sampled_from(paths))
        parent: Any = config
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=10))] = draw(_VALUES)
        else:
            parent.append(draw(_VALUES))
    return copy.deepcopy(document)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(document=_mutated_dev())
def test_fuzzed_dev_stack_never_crashes(tmp_path: Path, document: dict[str, Any]) -> None:
    stack = tmp_path / "Pulumi.fuzz.yaml"
    try:
        stack.write_text(yaml.safe_dump(document))
    except yaml.YAMLError:
        stack.write_text(json.dumps(document))
    run = cli("plan", "--config", stack)
    assert run.code in (0, 1), run.output
    assert "Traceback" not in run.output and "internal error" not in run.output, run.output
    lines = run.stderr.splitlines()
    # One line per finding: errors (exit 1) and warnings (exit 0) of the checks.
    assert all(line.startswith(("error: ", "warning: ")) for line in lines), run.stderr
    assert any(line.startswith("error: ") for line in lines) == (run.code == 1), run.stderr


# ---- input far beyond any stack: bounded messages, memory and time -----------------------------

HUGE = "k" * 200_000  # a key this long must be an explicit one (`? key`): YAML allows 1024


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (f"  ? aks-ray-platform:{HUGE}\n  : 1\n", "k" * 60),
        (f"  aks-ray-platform:cluster:\n    ? {HUGE}\n    : 1\n", "cluster." + "k" * 60),
        (f"  ? {HUGE}:location\n  : x\n", "k" * 60),
        (f"  ? aks-ray-platform:cluster.{HUGE}\n  : 1\n", "cluster." + "k" * 52),
        (f"  aks-ray-platform:location: {HUGE}\n", "location"),
        (f"  aks-ray-platform:c:\n    ? {HUGE}\n    : 1\n    ? {HUGE}\n    : 2\n", "Pulumi.huge"),
        (f"  aks-ray-platform:scheduling:\n    departments: [{{name: {HUGE}}}]\n", "scheduling"),
    ],
    ids=["setting", "key in a section", "namespace", "flat path", "value", "twice", "name"],
)
def test_a_200000_character_key_or_value_is_echoed_in_a_bounded_line(
    tmp_path: Path, body: str, path: str
) -> None:
    stack = tmp_path / "Pulumi.huge.yaml"
    stack.write_text(f"config:\n{body}")
    run = cli("plan", "--config", stack)
    assert run.code == 1, run.output
    lines = run.stderr.splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), run.stderr[:500]
    assert max(len(line) for line in lines) < 600, [len(line) for line in lines]
    assert any(line.startswith(f"error: {path}") for line in lines) or any(
        f"/{path}" in line for line in lines
    ), run.stderr[:500]


def _many_teams(tmp_path: Path, teams: int, edit: Any) -> Path:
    document = load_script("bench_stack").generate_stack(teams)
    edit(document["config"])
    stack = tmp_path / f"Pulumi.teams{teams}.yaml"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    stack.write_text(yaml.dump(document, Dumper=dumper, sort_keys=False))
    return stack


def _plan_limited(
    stack: Path, memory: int, seconds: int
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`aksray plan` in its own process, its address space limited to `memory` bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "aksray.cli.main", "plan", "--config", str(stack)],
        cwd=PROJECT_ROOT,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=seconds,
        check=False,
    )
    return done, time.monotonic() - started


GIB = 1024**3


def _pools_of(config: dict[str, Any], gpu_nodes: int) -> None:
    cluster = config["aks-ray-platform:cluster"]
    cluster["cpuPool"]["maxCount"] = 1000  # AKS's most
    # 10,000 teams' Blob grants would pass Azure's 4,000 role assignments per subscription
    # (refused on its own: tests/components/test_blob_isolation.py); here an admin grants them.
    cluster["createRoleAssignments"] = False
    for pool in cluster["gpuPools"]:
        pool["maxCount"] = gpu_nodes


def test_10000_teams_beyond_their_pools_are_refused_within_1_gib_and_bounded_time(
    tmp_path: Path,
) -> None:
    def shrink_pools(config: dict[str, Any]) -> None:
        _pools_of(config, 10)

    done, seconds = _plan_limited(_many_teams(tmp_path, 10_000, shrink_pools), GIB, 300)
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stdout == ""
    assert [line.split(": ", 2)[1] for line in done.stderr.splitlines()] == [
        "cluster.cpuPool.maxCount",
        "cluster.gpuPools[0].maxCount",
        "cluster.gpuPools[1].maxCount",
    ]
    assert all(line.startswith("error: ") and len(line) < 3000 for line in done.stderr.splitlines())
    assert seconds < 120, seconds  # about 4 s of CPU; the bound leaves room for a loaded machine


def test_10000_teams_with_a_mistake_each_print_a_few_lines_and_a_count(tmp_path: Path) -> None:
    def negative_quotas(config: dict[str, Any]) -> None:
        _pools_of(config, 1000)
        for department in config["aks-ray-platform:scheduling"]["departments"]:
            for team in department["teams"]:
                team["quota"]["a100"]["gpu"] = -1

    done, _ = _plan_limited(_many_teams(tmp_path, 10_000, negative_quotas), GIB, 300)
    assert done.returncode == 1, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    path = "scheduling.departments[{}].teams[{}].quota.a100.gpu"
    assert [line.split(": ", 2)[1] for line in lines[:PER_KIND]] == [
        path.format(0, team) for team in range(PER_KIND)
    ]
    assert lines[PER_KIND:] == [
        f"error: {path.format('i', 'i')}: {10_000 - PER_KIND:,} more like the above at this "
        "path (other list entries), not shown"
    ]

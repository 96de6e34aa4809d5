"""A RayJob's name (`<workload>-<digest>`) is the same in every process that builds it: each
`pulumi up` is a new Python process, and a name that changed would replace (re-run) the job."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aksray.offline.runner import PROJECT_ROOT
from manifests.ray import digest

BUILD = """
from manifests.ray import ray_job
from settings.model import WorkloadSettings
from tests.support.harness import planned
from workloads.catalog import WORKLOADS, payload_files, requirements

settings = planned("dev").settings
spec = WORKLOADS["vllm-batch"]
workload = next(w for w in settings.workloads if w.name == "vllm-batch")
team = settings.scheduling.team(workload.team)
files = payload_files(spec)
job = ray_job(spec, workload, team, files=files, requirements=requirements(spec),
              hf_token=False, storage_account="acct")
print(job["metadata"]["name"])
"""


def _name(seed: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", BUILD],
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONHASHSEED": seed},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_a_job_with_several_options_has_one_name_whatever_the_hash_seed() -> None:
    names = {_name(seed) for seed in ("1", "2", "3")}
    assert len(names) == 1, names


def test_a_digest_reads_a_set_as_its_sorted_members() -> None:
    assert digest({"o": frozenset({"b", "a", "c"})}) == digest({"o": "frozenset({'a', 'b', 'c'})"})
    # One member or none: as Python always wrote it, so those jobs keep the names they had.
    assert digest({"o": frozenset({"workers"})}) == digest({"o": "frozenset({'workers'})"})
    assert digest({"o": frozenset()}) == digest({"o": "frozenset()"})


NAMES = """
import json, sys
from tests.support.harness import planned
kinds = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")
resources = planned(sys.argv[1] + "+run").resources
print(json.dumps(sorted(r.inputs["metadata"]["name"] for r in resources if r.type in kinds)))
"""


def _names(stack: str, seed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", NAMES, stack],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_job_is_named_alike_whatever_the_string_hashing(stack: str) -> None:
    first, second = _names(stack, "1"), _names(stack, "2")
    assert first == second
    assert any(name.startswith("vllm-batch-") for name in first)

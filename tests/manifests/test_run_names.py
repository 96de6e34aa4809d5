"""A RayJob's name (`<workload>-<digest>`) is the same in every process that builds it: each
`pulumi up` is a new Python process, and a name that changed would replace (re-run) the job."""

from __future__ import annotations

import os
import subprocess
import sys

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

"""A job's name (`<workload>-<run id>`) is the same in every process that runs the program.

The run id digests the workload's spec, among it sets (its `options`); written as `str()` of a
frozenset, their order followed the process's string hashing, so every `pulumi up` (a new
process) named vllm-batch anew and replaced it, running the batch again (seen on the rig: the
engine's preview replaced it where `aksray plan --since` said same).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aksray.offline.runner import PROJECT_ROOT
from manifests.ray import digest

NAMES = """
import json, sys
from tests.support.harness import planned
kinds = ("kubernetes:ray.io/v1:RayJob", "kubernetes:ray.io/v1:RayService")
resources = planned(sys.argv[1] + "+run").resources
print(json.dumps(sorted(r.inputs["metadata"]["name"] for r in resources if r.type in kinds)))
"""


def names(stack: str, seed: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", NAMES, stack],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_job_is_named_alike_whatever_the_string_hashing(stack: str) -> None:
    first, second = names(stack, "1"), names(stack, "2")
    assert first == second
    assert any(name.startswith("vllm-batch-") for name in first)


def test_a_set_digests_as_its_sorted_members() -> None:
    assert digest({"o": frozenset({"b", "a", "c"})}) == digest({"o": ["a", "b", "c"]})

"""Counts a reader takes on trust stay true: how many Ray workloads (payloads) and how many jobs
the README, docs/ and the stack files' comments say there are is what the catalog of workloads
holds, and a stack comment that calls a workload elastic is about one the stack runs elastic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aksray.offline.runner import PROJECT_ROOT, run_program
from tests.support.golden import DOC_COPIES
from workloads.catalog import WORKLOADS

NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
}  # fmt: skip
_NUMBER = "|".join([*NUMBERS, r"\d+"])
# "five Ray workloads", "Four Ray payloads", "the three jobs", "4 RayJobs".
COUNTED = re.compile(rf"\b({_NUMBER}) (?:Ray )?(workloads|payloads|jobs|RayJobs)\b", re.I)
# "vllm-batch is elastic", "llm-serve and vllm-batch are elastic".
ELASTIC = re.compile(r"\b([a-z][\w-]*(?:,? (?:and )?[a-z][\w-]*)*) (?:is|are) elastic\b")
TEXTS = sorted(
    [
        PROJECT_ROOT / "README.md",
        *(PROJECT_ROOT / "docs").glob("*.md"),
        *(PROJECT_ROOT / "stacks").glob("Pulumi.*.yaml"),
    ]
)
EXPECTED = {
    "workloads": len(WORKLOADS),
    "payloads": len(WORKLOADS),
    "jobs": sum(spec.kind == "RayJob" for spec in WORKLOADS.values()),
    "rayjobs": sum(spec.kind == "RayJob" for spec in WORKLOADS.values()),
}


def _prose(path: Path) -> str:
    """The file less its copies of the plan's output (`make golden` writes them): a plan counts
    the stack's workloads, which the golden tests hold, not the catalog's."""
    text = path.read_text(encoding="utf-8")
    for name, begin, end, _source, _start in DOC_COPIES:
        if path == PROJECT_ROOT / name:
            first = text.index(begin) + len(begin)
            last = text.index(end, first)
            # Blank lines in its place keep the line numbers of what follows.
            text = text[:first] + "\n" * text.count("\n", first, last) + text[last:]
    return text


def _count(word: str) -> int:
    return NUMBERS[word.lower()] if word.lower() in NUMBERS else int(word)


def test_the_catalog_holds_five_workloads_four_of_them_jobs() -> None:
    assert (EXPECTED["workloads"], EXPECTED["jobs"]) == (5, 4)


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_every_count_of_workloads_and_jobs_is_the_catalogs(path: Path) -> None:
    wrong = [
        f"line {number}: {found.group(0)!r} (the catalog has {EXPECTED[found.group(2).lower()]})"
        for number, line in enumerate(_prose(path).splitlines(), 1)
        for found in COUNTED.finditer(line)
        if _count(found.group(1)) != EXPECTED[found.group(2).lower()]
    ]
    assert wrong == []


@pytest.mark.parametrize("stack", ["dev", "prod", "local"])
def test_a_workload_a_stack_comment_calls_elastic_is_elastic_there(stack: str) -> None:
    path = PROJECT_ROOT / "stacks" / f"Pulumi.{stack}.yaml"
    comments = " ".join(
        line.split("#", 1)[1].strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if "#" in line
    )
    named = {
        name
        for found in ELASTIC.finditer(comments)
        for name in re.split(r",? (?:and )?|, ", found.group(1))
        if name in WORKLOADS
    }
    elastic = {w.name for w in run_program(path, stack=stack).settings.workloads if w.elastic}
    assert named <= elastic, f"called elastic but fixed: {sorted(named - elastic)}"


def test_the_objects_make_e2e_compares_are_the_local_stacks() -> None:
    """docs/development.md says how many objects `make e2e` compares: every Kubernetes object
    the local stack registers (what `aksray render` writes and the provider renders)."""
    from tests.support.harness import planned

    objects = [
        r
        for r in planned("local").resources
        if r.type.startswith("kubernetes:") and not r.type.startswith("kubernetes:helm.sh/")
    ]
    guide = (PROJECT_ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    assert f"and compares {len(objects)} objects." in guide

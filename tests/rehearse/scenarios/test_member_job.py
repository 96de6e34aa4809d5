"""What the `team-members` scenario sends is what docs/teams.md tells a member to write, and
the refusals the page lists are the policies' own words."""

from __future__ import annotations

import re

import yaml

from aksray.offline.runner import PROJECT_ROOT
from aksray.rehearse.scenarios.member_job import member_ray_job, member_rights
from manifests.access.admission import admission_policies
from settings.access.teams import allowed_priorities
from tests.support.harness import planned

PAGE = (PROJECT_ROOT / "docs" / "teams.md").read_text(encoding="utf-8")


def test_the_rayjob_of_docs_teams_is_the_one_the_rehearsal_submits() -> None:
    section = PAGE.split("## Submit a RayJob", 1)[1]
    example = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    dev = planned("dev")
    team = dev.settings.scheduling.team("team-a")
    assert "train" in allowed_priorities(team, dev.settings.workloads)
    assert example == member_ray_job(team, "train")


def test_the_refusals_the_page_lists_are_the_policies_words() -> None:
    rows = PAGE.split("## What is refused", 1)[1].split("\n## ", 1)[0]
    table = [line.split(" | ") for line in rows.splitlines() if line.startswith("| ")][1:]
    quoted = [re.fullmatch(r"`([^`]+)`", row[1]).group(1) for row in table]  # type: ignore[union-attr]
    assert len(quoted) == 8
    texts = [
        (v.get("message") or v["messageExpression"]).replace("\\'", "'")
        for policy in admission_policies()
        if policy["kind"] == "ValidatingAdmissionPolicy"
        for v in policy["spec"]["validations"]
    ]
    for words in quoted:
        start = words.removesuffix("...").removesuffix(" (...)").split(" ... ")[0].rstrip(": ,")
        assert any(start in text for text in texts), words


def test_a_member_may_use_its_namespace_and_nothing_more() -> None:
    team = planned("prod").settings.scheduling.team("nlp")
    rights = member_rights(team, "vision")
    assert [r.what for r in rights if r.allowed] == [
        "create rayjobs.ray.io in nlp",
        "delete rayservices.ray.io in nlp",
        "list workloads.kueue.x-k8s.io in nlp",
        "get pods/log in nlp",
        "create pods/portforward in nlp",
    ]
    assert {r.namespace for r in rights if not r.allowed} == {"nlp", "vision"}

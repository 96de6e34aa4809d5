"""docs/ci.md: its pipeline runs `aksray plan` on every pull request and `pulumi preview` after
it, keeps the whole plan as an artifact the comment links to, its plan step works as written,
and its rendered comment is what the plan prints."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT

DOC = PROJECT_ROOT / "docs" / "ci.md"
GOLDEN = PROJECT_ROOT / "tests" / "golden" / "dev" / "plan.md"


def _workflow() -> dict[Any, Any]:
    block = re.search(r"```yaml\n(.*?)```\n", DOC.read_text(), re.DOTALL)
    assert block
    document = yaml.safe_load(block.group(1))
    assert isinstance(document, dict)
    return document


def _step(job: dict[str, Any], name: str) -> dict[str, Any]:
    return next(step for step in job["steps"] if step.get("name") == name)


def test_the_pipeline_plans_every_pull_request_then_previews() -> None:
    workflow = _workflow()
    assert set(workflow[True]) == {"pull_request"}  # YAML 1.1 reads the key `on` as true
    plan, preview = workflow["jobs"]["plan"], workflow["jobs"]["preview"]
    runs = [step.get("run", step.get("uses", "")) for step in plan["steps"]]
    assert runs[:3] == ["actions/checkout@v4", "actions/setup-python@v5", "make install"]
    step = _step(plan, "Plan")
    assert "--format markdown" in step["run"]
    # The whole plan goes to a file the job keeps; the comment links to the run that keeps it.
    assert '--full-plan "$RUNNER_TEMP/plan-full-$STACK.md"' in step["run"]
    assert '--full-plan-link "$RUN_URL"' in step["run"]
    # The change since the base branch's stack file comes first; that needs its history.
    assert step["env"]["BASE"] == "origin/${{ github.base_ref }}"
    assert '--since "$BASE:stacks/Pulumi.$STACK.yaml"' in step["run"]
    assert plan["steps"][0]["with"] == {"fetch-depth": 0}
    assert step["env"]["RUN_URL"] == (
        "${{ github.server_url }}/${{ github.repository }}/actions/runs/${{ github.run_id }}"
    )
    kept = _step(plan, "Keep the whole plan")
    assert kept["uses"] == "actions/upload-artifact@v4"
    assert kept["with"] == {
        "name": "plan-full-${{ matrix.stack }}.md",
        "path": "${{ runner.temp }}/plan-full-${{ matrix.stack }}.md",
    }
    comment = _step(plan, "Comment the plan")
    assert comment["with"]["path"] == "${{ runner.temp }}/plan.md"
    names = [s.get("name") for s in plan["steps"]]
    assert names.index("Keep the whole plan") < names.index("Fail when a check failed")
    assert plan["permissions"]["pull-requests"] == "write"
    assert _step(plan, "Fail when a check failed")["if"] == "steps.plan.outputs.code != '0'"
    assert preview["needs"] == "plan"
    pulumi = next(s for s in preview["steps"] if str(s.get("uses", "")).startswith("pulumi/"))
    assert pulumi["with"]["command"] == "preview"
    assert preview["permissions"]["id-token"] == "write"
    # Every action is pinned to a major version, never a branch.
    uses = [s["uses"] for job in (plan, preview) for s in job["steps"] if "uses" in s]
    assert all(re.fullmatch(r"[\w./-]+@v\d+", u) for u in uses), uses


def _run_plan_step(tmp_path: Path, **env: str) -> str:
    """The pipeline's Plan step as written, for the dev stack; what it wrote to GITHUB_OUTPUT."""
    script = _step(_workflow()["jobs"]["plan"], "Plan")["run"]
    outputs = tmp_path / "github-output"
    environment = {
        **os.environ,
        "STACK": "dev",
        "RUN_URL": "https://github.com/owner/repo/actions/runs/1",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(outputs),
        **env,
    }
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=PROJECT_ROOT,
        env=environment,
        check=False,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    return outputs.read_text()


def test_the_plan_step_works_as_written(tmp_path: Path) -> None:
    assert _run_plan_step(tmp_path) == "code=0\n"
    assert (tmp_path / "plan.md").read_text() == GOLDEN.read_text()
    # dev's comment leaves nothing out: the whole plan is the comment, and it links to nothing.
    assert (tmp_path / "plan-full-dev.md").read_text() == GOLDEN.read_text()
    assert "Shortened" not in GOLDEN.read_text()


def test_the_plan_step_shows_the_change_since_the_base(tmp_path: Path) -> None:
    """With the base's stack file in git (HEAD standing in for origin/main here), the comment
    opens with the change, then the plan as before."""
    if (
        subprocess.run(
            ["git", "cat-file", "-e", "HEAD:stacks/Pulumi.dev.yaml"],
            cwd=PROJECT_ROOT,
            check=False,
            capture_output=True,
        ).returncode
        != 0
    ):
        pytest.skip("not a git checkout with the dev stack committed")
    assert _run_plan_step(tmp_path, BASE="HEAD") == "code=0\n"
    comment = (tmp_path / "plan.md").read_text()
    assert comment.startswith("## aksray plan: the change from `HEAD:stacks/Pulumi.dev.yaml`\n")
    assert comment.endswith(GOLDEN.read_text())


def test_the_rendered_comment_is_what_the_plan_prints() -> None:
    text = DOC.read_text()
    example = text.split("<!-- plan.md of dev: begin -->\n")[1].split(
        "<!-- plan.md of dev: end -->"
    )[0]
    assert example == GOLDEN.read_text()

"""`aksray plan --format markdown` at any organisation's size: the comment fits a GitHub
pull-request comment, every Mermaid block is one Mermaid draws, nothing is lost without a word,
and `--full-plan FILE` holds the whole plan.

The stacks are the benchmark's (scripts/bench_stack.py): 10 teams a department, each team with
quota on two GPU pools and the CPU pool, the four workloads on the first teams. Every team but
those four holds quota nothing in the stack uses: one warning each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from aksray.plan.report.folding import COMMENT_BUDGET, COMMENT_LIMIT
from tests.support import mermaid
from tests.support.harness import CliRun, cli, write_stack
from tests.support.scripts import load_script

LINK = "https://github.com/owner/repo/actions/runs/1"
WHERE = f"[plan-full.md]({LINK})"
SIZES = (10, 100, 1000)


@dataclass(frozen=True)
class Planned:
    teams: int
    run: CliRun  # the comment is its stdout
    full: str  # what --full-plan wrote

    @property
    def comment(self) -> str:
        return self.run.stdout


_PLANNED: dict[int, Planned] = {}


def _plan(teams: int, tmp_path_factory: pytest.TempPathFactory) -> Planned:
    if teams in _PLANNED:
        return _PLANNED[teams]
    folder = tmp_path_factory.mktemp(f"teams-{teams}")
    document = load_script("bench_stack").generate_stack(teams)
    stack = write_stack(folder, document, f"Pulumi.teams-{teams}.yaml")
    full = folder / "out" / "plan-full.md"  # its folder is created
    run = cli(
        "plan", "--config", stack, "--format", "markdown",
        "--full-plan", full, "--full-plan-link", LINK,
    )  # fmt: skip
    assert run.code == 0, run.stderr
    _PLANNED[teams] = Planned(teams, run, full.read_text(encoding="utf-8"))
    return _PLANNED[teams]


@pytest.fixture(params=SIZES, ids=[f"{n}-teams" for n in SIZES])
def planned(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Planned:
    """The benchmark's stack of 10, 100 and 1000 teams, planned once each."""
    return _plan(request.param, tmp_path_factory)


def _cluster_queue_rows(text: str) -> int:
    return len(re.findall(r"^\| team-\d{4} \| dept-\d{3} \| (?:cpu|a100|h100) \|", text, re.M))


_MORE_LIKE = re.compile(r": ([\d,]+) more like the above")


def _warnings(teams: int) -> int:
    """Unused quota (every team but the four that run the workloads), and Docker Hub's pull
    limit once the two GPU pools (a node each per team) can add more than 10 nodes."""
    return max(0, teams - 4) + (1 if 2 * teams > 10 else 0)


def test_the_comment_fits_a_pull_request_comment(planned: Planned) -> None:
    assert len(planned.comment) - 1 <= COMMENT_BUDGET < COMMENT_LIMIT
    assert planned.comment.endswith("\n") and "\n\n\n" not in planned.comment


def test_every_mermaid_block_is_one_mermaid_draws(planned: Planned) -> None:
    for text in (planned.comment, planned.full):
        blocks = mermaid.blocks(text)
        assert blocks
        for block in blocks:
            assert mermaid.problems(block) == [], block[:200]
        # Every fence is closed, every fold too.
        assert text.count("```") == 2 * len(blocks)
        assert text.count("<details>") == text.count("</details>") > 0


def test_the_summary_line_and_every_warning_are_accounted_for(planned: Planned) -> None:
    warnings = _warnings(planned.teams)
    comment, full = planned.comment.splitlines(), planned.full.splitlines()
    assert comment[:3] == full[:3]
    assert comment[2].endswith(f"checks passed: 0 errors, {warnings} warnings**")
    listed = sum(line.startswith("- **warning** ") for line in comment)
    more = re.search(r"^- … and (\d+) more \(0 errors, (\d+) warnings\)", planned.comment, re.M)
    left_out = int(more.group(1)) if more else 0
    assert listed + left_out == warnings
    # The whole plan lists every one; stderr shows a few per config path and counts the rest.
    assert sum(line.startswith("- **warning** ") for line in full) == warnings
    stderr = planned.run.stderr.splitlines()
    counted = sum(int(m.group(1).replace(",", "")) for m in map(_MORE_LIKE.search, stderr) if m)
    assert sum(_MORE_LIKE.search(line) is None for line in stderr) + counted == warnings


def test_ten_teams_fit_whole(tmp_path_factory: pytest.TempPathFactory) -> None:
    planned = _plan(10, tmp_path_factory)
    assert planned.comment == planned.full
    assert "Shortened" not in planned.comment
    tree = mermaid.blocks(planned.comment)[0]
    assert sum(label.startswith("team ") for label in mermaid.labels(tree).values()) == 10


def test_a_hundred_teams_are_summarised_per_department(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    planned = _plan(100, tmp_path_factory)
    lines = planned.comment.splitlines()
    assert lines[4] == (
        "*Shortened to fit a pull-request comment (65,536 characters at most): the queues, KAI "
        f"queues and organisation chart per department, not per team. The whole plan: {WHERE}.*"
    )
    tree = mermaid.blocks(planned.comment)[0]
    labels = list(mermaid.labels(tree).values())
    assert len(labels) == 11 and labels[1] == (
        "department dept-000<br/>Kueue cohort dept-000<br/>10 teams, together:"
        "<br/>cpu: cpu 80, memory 320Gi<br/>a100: gpu 40<br/>h100: gpu 80"
    )
    assert "| dept-009 | dept-009 | 10 | 120 | cpu: cpu 80, memory 320Gi; a100: gpu 40; " in (
        planned.comment
    )
    # The whole plan has every team: its chart (110 edges) and its ClusterQueues.
    full_tree = mermaid.blocks(planned.full)[0]
    assert len(mermaid.edges(full_tree)) == 110
    assert _cluster_queue_rows(planned.full) == 100 * 3  # a row per team and flavor


def test_a_thousand_teams_keep_the_summary_and_say_what_they_leave_out(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    planned = _plan(1000, tmp_path_factory)
    notice = planned.comment.splitlines()[4]
    listed = sum(line.startswith("- **warning** ") for line in planned.comment.splitlines())
    assert notice == (
        "*Shortened to fit a pull-request comment (65,536 characters at most): the queues, KAI "
        "queues and organisation chart per department, not per team; the organisation chart "
        "left out; every table cut to its first 1 rows; "
        f"{listed} of {_warnings(1000)} errors and warnings listed. The whole plan: {WHERE}.*"
    )
    # The Blob containers table keeps a row per team's own container (1,002 rows) in the
    # per-department view too: the tables are cut.
    assert listed > 100  # the warnings keep most of the room
    assert "Left out of this comment for room: the whole plan draws it." in planned.comment
    # Team by team Mermaid would refuse the chart (1000 teams + 100 departments = 1,100 edges):
    # the whole plan draws it per department, and says why.
    assert (
        "Drawn per department: team by team, the chart has 1,100 edges, more than the 500 "
        "Mermaid draws (maxEdges)."
    ) in planned.full
    full_tree = mermaid.blocks(planned.full)[0]
    assert len(mermaid.edges(full_tree)) == 100
    assert _cluster_queue_rows(planned.full) == 1000 * 3
    assert _cluster_queue_rows(planned.comment) == 0


def test_the_whole_plan_is_written_where_asked_or_one_line_says_why_not(tmp_path: Path) -> None:
    full = tmp_path / "plan.md"
    run = cli("plan", "--stack", "dev", "--format", "markdown", "--full-plan", full)
    assert run.code == 0 and full.read_text() == run.stdout
    run = cli("plan", "--stack", "dev", "--format", "markdown", "--full-plan", tmp_path)
    assert run.code == 1 and run.stdout == ""
    assert run.stderr.splitlines() == [
        f"error: --full-plan {tmp_path}: cannot write there (Is a directory); name a file to write"
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--full-plan", "x.md"], "--full-plan needs --format markdown"),
        (["--json", "--full-plan", "x.md"], "--full-plan needs --format markdown"),
        (["--format", "markdown", "--full-plan-link", LINK], "--full-plan-link needs --full-plan"),
    ],
)
def test_full_plan_options_need_the_markdown_comment(args: list[str], message: str) -> None:
    run = cli("plan", "--stack", "dev", *args)
    assert run.code == 2 and message in run.stderr and run.stdout == ""

"""`aksray plan --format markdown`, the pull-request comment: its summary line's numbers, its
tables, its errors and warnings, and Mermaid blocks that parse (tests/support/mermaid.py)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from aksray.plan.model.cost import monthly_cost
from aksray.plan.model.graph import critical_path
from aksray.plan.model.plan import plan
from aksray.plan.report.folding import COMMENT_BUDGET
from aksray.plan.report.markdown import full_plan_reference, invalid_markdown, plan_markdown
from aksray.plan.report.mermaid import MAX_EDGES, MAX_TEXT_SIZE, Flowchart, label
from aksray.plan.report.summary import summary
from aksray.plan.report.tables import markdown_cell
from catalog.prices import HOURS_PER_MONTH, REGIONAL, USD_PER_HOUR
from catalog.vm_sizes import VM_SIZES
from tests.support import mermaid
from tests.support.harness import STACKS, P, cli, mutated, planned, write_stack
from tests.support.mermaid import limit_problems as support_limits

SUMMARY = re.compile(
    r"\*\*(?P<resources>\d+) resources? to create · at most (?P<gpus>\d+) GPUs? · "
    r"(?P<cost>at most \$(?P<usd>[\d,]+) a month (?:if every pool ran full \(estimate\)|for the "
    r"priced pools if they ran full \(estimate; not counted, no price in the table: "
    r"(?P<unpriced>[a-z0-9, ]+)\))|no nodes of its own \(an existing cluster\)) · "
    r"checks (?P<verdict>passed|failed): (?P<errors>\d+) errors?, (?P<warnings>\d+) warnings?\*\*"
)
HEADINGS = [
    "## aksray plan: `{stack}`",
    "### Errors and warnings",
    "### Organisation and quotas",
    "### Summary",
    "#### Pools (node allocatable = VM size minus AKS reservations)",
    "#### Queues (Kueue ClusterQueue per team, one cohort per department)",
    "#### KAI queues (placement only: the quota is Kueue's, above; KAI actions: allocate)",
    "#### Workloads (staged: planned and checked, submitted once "
    "workloads.&lt;name&gt;.run is set)",
    "#### Pod sets (flavor: what Kueue assigns on an empty cluster, the pool of that name)",
    "### Deploy critical path",
]


def _markdown(stack: str) -> str:
    run = cli("plan", "--stack", stack, "--format", "markdown")
    assert run.code == 0, run.stderr
    return run.stdout


def _cells(row: str) -> list[str]:
    assert row.startswith("| ") and row.endswith(" |"), row
    return re.split(r"(?<!\\)\|", row[1:-1])


def _tables(text: str) -> list[list[str]]:
    """Each run of table lines."""
    found: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                found.append([])
            found[-1].append(line)
        previous = line
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_the_comment_has_its_parts_in_order_and_well_formed_tables(stack: str) -> None:
    text = _markdown(stack)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    expected = [h.format(stack=stack) for h in HEADINGS]
    assert [h for h in headings if h in expected] == expected
    if stack != "local":
        assert headings[-2:] == ["### Cost estimate", "#### Every pool at its largest, all month"]
    tables = _tables(text)
    # local has no Blob storage: no containers table and no cost table
    assert len(tables) == (5 if stack == "local" else 7)
    for rows in tables:
        width = len(_cells(rows[0]))
        assert rows[1] == "|" + "---|" * width
        assert all(len(_cells(row)) == width for row in rows[2:]), rows
    assert text.endswith("\n") and "\n\n\n" not in text


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_summary_line_adds_up(stack: str) -> None:
    result = planned(stack)
    line = _markdown(stack).splitlines()[2]
    found = SUMMARY.fullmatch(line)
    assert found, line
    settings = plan(result).settings
    gpus = sum(pool.max_count * VM_SIZES[pool.vm_size].gpus for pool in settings.cluster.gpu_pools)
    assert int(found["resources"]) == len(result.resources)
    assert int(found["gpus"]) == gpus
    # Only the GPU sizes are priced: the system and CPU pools are named as unpriced.
    expected = sum(
        USD_PER_HOUR[pool.vm_size] * pool.max_count * HOURS_PER_MONTH
        for pool in settings.cluster.gpu_pools
    )
    assert found["usd"] == f"{expected:,.0f}"
    assert found["unpriced"] == "system, cpu"
    assert (found["verdict"], found["errors"], found["warnings"]) == ("passed", "0", "0")


def test_dev_costs_at_most_five_a100_nodes_all_month() -> None:
    cost = monthly_cost(plan(planned("dev")).settings)
    assert cost["region"] == "eastus2"
    assert [(p["pool"], p["vmSize"], p["nodesAtMost"]) for p in cost["pools"]] == [
        ("system", "Standard_D4ds_v6", 1),
        ("cpu", "Standard_D8ds_v6", 3),
        ("a100", "Standard_NC24ads_A100_v4", 5),
    ]
    a100 = cost["pools"][2]
    assert (a100["usdPerNodeHour"], a100["priceRegion"]) == (3.673, "eastus")
    assert a100["usdPerMonthAtMost"] == pytest.approx(3.673 * 5 * 730)
    assert cost["usdPerMonthAtMost"] == a100["usdPerMonthAtMost"]
    assert cost["unpriced"] == ["system", "cpu"]
    assert monthly_cost(plan(planned("local")).settings)["createsNodes"] is False


def test_every_price_is_for_a_known_vm_size() -> None:
    assert set(USD_PER_HOUR) <= set(VM_SIZES)
    assert all(VM_SIZES[size].gpus for size in USD_PER_HOUR)
    assert {size for size, _ in REGIONAL} <= set(VM_SIZES)
    assert all(price > 0 for price in [*USD_PER_HOUR.values(), *REGIONAL.values()])


def _failing(tmp_path: Path) -> tuple[Any, str]:
    def break_it(config: dict[str, Any]) -> None:
        config[P + "workloads"]["qwen-lora"]["workers"] = 6  # more GPUs than team-a ever has
        config[P + "cluster"]["gpuPools"][0]["minCount"] = 1  # an idle GPU node: a warning

    run = cli(
        "plan", "--config", write_stack(tmp_path, mutated("dev", break_it)), "--format", "markdown"
    )
    return run, run.stdout


def test_failed_checks_are_listed_with_their_paths(tmp_path: Path) -> None:
    run, text = _failing(tmp_path)
    assert run.code == 1
    found = SUMMARY.fullmatch(text.splitlines()[2])
    assert found and found["verdict"] == "failed" and int(found["errors"]) >= 1
    section = text.split("### Errors and warnings\n\n")[1].split("\n\n")[0].splitlines()
    errors = [line for line in section if line.startswith("- **error** ")]
    warnings = [line for line in section if line.startswith("- **warning** ")]
    assert len(errors) == int(found["errors"]) and len(warnings) == int(found["warnings"])
    assert any(line.startswith("- **error** `workloads.qwen-lora.workers`: ") for line in errors)
    assert any("`cluster.gpuPools[0].minCount`" in line for line in warnings)
    # stderr still carries one line per problem, as in every format.
    assert len(run.error_lines) == len(errors)


def test_a_stack_that_does_not_validate_gets_a_comment_saying_why(tmp_path: Path) -> None:
    def misspell(config: dict[str, Any]) -> None:
        config[P + "cluster"]["gpuPools"][0]["vmsize"] = "x"

    path = write_stack(tmp_path, mutated("dev", misspell))
    run = cli("plan", "--config", path, "--format", "markdown")
    assert run.code == 1
    lines = run.stdout.splitlines()
    assert lines[2] == "**The configuration does not validate: 1 error; nothing was planned.**"
    assert lines[4].startswith("- **error** cluster.gpuPools[0].vmsize: unknown key")
    assert run.error_lines[0].startswith("error: cluster.gpuPools[0].vmsize: unknown key")


@pytest.mark.parametrize("stack", STACKS)
def test_the_mermaid_blocks_parse_and_draw_the_tree_and_the_path(stack: str) -> None:
    text = _markdown(stack)
    tree, path = mermaid.blocks(text)
    assert mermaid.problems(tree) == [] and mermaid.problems(path) == []
    data = planned(stack)
    queues = plan(data).settings.scheduling.teams
    tree_labels = mermaid.labels(tree)
    teams = [i for i, lbl in tree_labels.items() if lbl.startswith("team ")]
    assert sorted(tree_labels[i].split("<br/>")[0] for i in teams) == sorted(
        f"team {team.name}" for team in queues
    )
    # Every team hangs off its department, every department off the stack.
    parents = {target: source for source, target in mermaid.edges(tree)}
    assert all(tree_labels[parents[i]].startswith("department ") for i in teams)
    chain = critical_path(data)
    path_labels = mermaid.labels(path)
    assert [lbl.split("<br/>")[0] for lbl in path_labels.values()] == chain.names
    ids = list(path_labels)
    assert mermaid.edges(path) == list(itertools.pairwise(ids))


def test_prod_s_tree_shows_quotas_and_limits() -> None:
    tree = mermaid.blocks(_markdown("prod"))[0]
    nlp = next(lbl for lbl in mermaid.labels(tree).values() if lbl.startswith("team nlp"))
    assert nlp.split("<br/>")[2:] == [
        "cpu: cpu 16, memory 64Gi",
        "a100: gpu 12; borrows at most gpu 8; lends at most gpu 4",
        "a100spot: gpu 8; borrows at most gpu 8",
    ]


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("flowchart TD\n  n0[unquoted (parenthesis)]", "neither a node nor an edge"),
        ('flowchart TD\n  end["a reserved id"]', "reserved word"),
        ('flowchart TD\n  n0["a"]\n  n0 --> n1', "no line above defines"),
        ('flowchart TD\n  n0["a"]\n  n0["b"]', "defined twice"),
        ('flowchart TD\n  n0["issue #12"]', "starts no entity code"),
        ('flowchart TD\n  n0["a <b>bold</b> move"]', "outside <br/>"),
        ('flowchart TD\n  n0["`markdown`"]', "backtick"),
        ('graph TD\n  n0["a"]', "not a flowchart header"),
        ('flowchart TD\n  n0["a"] --> n1["b"]', "neither a node nor an edge"),
    ],
)
def test_the_checker_refuses_what_is_outside_the_subset(block: str, problem: str) -> None:
    found = mermaid.problems(block)
    assert found and problem in found[0], found


def test_labels_escape_what_would_break_the_chart() -> None:
    written = label('team "a" #1 <b> & `x`', "second   line")
    assert written == '"team #34;a#34; #35;1 #60;b#62; #38; #96;x#96;<br/>second line"'
    assert mermaid.problems(f"flowchart TD\n  n0[{written}]") == []


def test_cells_escape_pipes_and_tags_but_not_inside_code() -> None:
    assert markdown_cell("a | b <name> `x <y> | z`") == "a \\| b &lt;name&gt; `x <y> \\| z`"


# --------------------------------------------------------------------------------------------
# Mermaid's limits, and what the plan does past them
# --------------------------------------------------------------------------------------------


def test_a_chart_is_refused_past_mermaid_s_edge_and_text_limits() -> None:
    chart = Flowchart()
    root = chart.node("root")
    for _ in range(MAX_EDGES):
        chart.edge(root, root)
    assert chart.refusal() is None and support_limits("\n".join(chart.lines)) == []
    chart.edge(root, root)
    assert chart.refusal() == "501 edges, more than the 500 Mermaid draws (maxEdges)"
    assert support_limits("\n".join(chart.lines)) == ["501 edges: Mermaid refuses more than 500"]
    text = Flowchart()
    text.node("x" * (MAX_TEXT_SIZE - len('flowchart TD\n  n0[""]')))
    assert text.text_size() == MAX_TEXT_SIZE and text.refusal() is None
    # Mermaid counts JavaScript characters: one emoji is two.
    text.lines[-1] = text.lines[-1].replace("x", "\U0001f600", 1)
    assert text.text_size() == MAX_TEXT_SIZE + 1
    assert text.refusal() == "50,001 characters, more than the 50,000 Mermaid reads (maxTextSize)"
    assert support_limits("\n".join(text.lines)) == [
        "50001 characters: Mermaid draws at most 50000"
    ]


def _synthetic(teams: int, per_department: int, name_length: int) -> dict[str, Any]:
    """dev's summary with `teams` made-up teams in its organisation."""
    result = planned("dev")
    data = dict(summary(plan(result), critical_path(result)))
    data["queues"] = [
        {
            "team": f"t{i:05d}".ljust(name_length, "x"),
            "department": f"d{i // per_department:04d}",
            "cohort": f"d{i // per_department:04d}",
            "namespace": f"t{i:05d}",
            "localQueue": f"t{i:05d}",
            "flavors": [
                {
                    "flavor": "a100",
                    "nominal": {"cpu": "8", "memory": "64Gi", "gpu": 1},
                    "borrowingLimit": None,
                    "lendingLimit": None,
                }
            ],
            "kai": {"queue": f"t{i:05d}", "parent": f"d{i // per_department:04d}"},
        }
        for i in range(teams)
    ]
    return data


def _whole(data: dict[str, Any]) -> str:
    checks: dict[str, list[Any]] = {"errors": [], "warnings": []}
    cost = monthly_cost(plan(planned("dev")).settings)
    return plan_markdown(
        "x", resources=1, data=data, checks=checks, notes=[], cost=cost, budget=None
    )


def test_a_chart_too_long_for_mermaid_is_drawn_per_department() -> None:
    # 400 teams of long names: 404 edges, but more text than Mermaid reads.
    text = _whole(_synthetic(400, 100, 60))
    tree = mermaid.blocks(text)[0]
    assert mermaid.problems(tree) == []
    assert [lbl.split("<br/>")[0] for lbl in mermaid.labels(tree).values()] == [
        "stack x", "department d0000", "department d0001", "department d0002", "department d0003"
    ]  # fmt: skip
    assert re.search(
        r"^Drawn per department: team by team, the chart has [\d,]+ characters, more than the "
        r"50,000 Mermaid reads \(maxTextSize\)\.$",
        text,
        re.MULTILINE,
    )


def test_a_chart_mermaid_refuses_even_per_department_is_left_out_saying_why() -> None:
    text = _whole(_synthetic(501, 1, 6))
    assert len(mermaid.blocks(text)) == 1  # the critical path alone
    assert (
        "The organisation chart (501 departments, 501 teams) is left out: Mermaid would refuse "
        "it, team by team and per department: 501 edges, more than the 500 Mermaid draws "
        "(maxEdges)."
    ) in text


def test_an_invalid_stack_s_comment_counts_the_errors_it_has_no_room_for() -> None:
    problems = [f"scheduling.departments[0].teams[{i}].name: {'x' * 200}" for i in range(1000)]
    text = invalid_markdown("big", problems)
    assert len(text) - 1 <= COMMENT_BUDGET
    lines = text.splitlines()
    listed = sum(line.startswith("- **error** ") for line in lines)
    assert 0 < listed < 1000
    assert lines[-1] == (
        f"- … and {1000 - listed} more ({1000 - listed} errors, 0 warnings): the whole plan "
        "lists every one, `aksray plan --format markdown --full-plan FILE` writes it"
    )
    assert invalid_markdown("big", problems, budget=None).count("- **error** ") == 1000


def test_the_link_to_the_whole_plan() -> None:
    assert full_plan_reference("plan-full.md", "https://x/runs/1") == (
        "[plan-full.md](https://x/runs/1)"
    )
    assert full_plan_reference("plan full.md", "out/plan full.md") == (
        "[plan full.md](<out/plan full.md>)"
    )

"""scripts/bench_plan.py: the table it prints and the README block it writes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from aksray.offline.runner import PROJECT_ROOT
from tests.support.scripts import load_script

ROOT = PROJECT_ROOT


def _bench() -> Any:
    return load_script("bench_plan")


def _row(stack: str, median: float) -> dict[str, Any]:
    return {
        "stack": stack, "runs": 5, "median_s": median, "min_s": median, "max_s": median,
        "cpu_s": median, "peak_rss_mib": 80.0, "load_before": "0.10 0.20 0.30",
        "load_after": "0.20 0.20 0.30",
    }  # fmt: skip


def test_the_readme_block_is_replaced_and_nothing_else(tmp_path: Path) -> None:
    bench = _bench()
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\nbefore\n{bench.README_START}\nold\n{bench.README_END}\nafter\n")
    rows = [_row("local", 0.5), _row("local: pulumi preview", 3.0), _row("10 teams", 1.0),
            _row("100 teams", 1.9)]  # fmt: skip
    bench.write_readme(rows, readme)
    text = readme.read_text()
    assert text.startswith("# x\nbefore\n") and text.endswith(f"{bench.README_END}\nafter\n")
    assert "old" not in text
    assert "| local: pulumi preview | 5 | 3.00 | 3.00..3.00 | 3.00 | 80 |" in text
    assert "6.0x faster than `pulumi preview`" in text
    assert "100 teams take 1.9x the 10-team time" in text


def test_a_readme_without_the_block_is_refused(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# x\n")
    with pytest.raises(SystemExit, match="no benchmark block"):
        _bench().write_readme([_row("prod", 1.0)], readme)


def test_one_timed_run_reports_wall_cpu_and_memory() -> None:
    bench = _bench()
    burn = [sys.executable, "-c", "sum(range(3_000_000))"]
    row = bench.bench("burn", burn, runs=2)
    assert row["runs"] == 2 and 0 < row["cpu_s"] <= row["max_s"] + 0.05
    assert row["min_s"] <= row["median_s"] <= row["max_s"] and row["peak_rss_mib"] > 1


def test_the_readme_shows_the_latest_measured_table() -> None:
    bench = _bench()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split(bench.README_START, 1)[1].split(bench.README_END, 1)[0]
    assert block.lstrip().startswith("Measured 20")  # a date, written by make bench
    rows = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    names = [row.split("|")[1].strip() for row in rows[1:]]
    assert {"prod", "dev", "local", "10 teams", "100 teams"} <= set(names)


def test_the_resources_per_team_the_development_guide_states(tmp_path: Path) -> None:
    """docs/development.md says what every generated team brings; count it (a department of
    10 teams adds its cohort and KAI parent queue)."""
    from aksray.offline.runner import run_program

    counts = []
    for teams in (10, 20):
        path = tmp_path / f"Pulumi.bench{teams}.yaml"
        path.write_text(yaml.safe_dump(load_script("bench_stack").generate_stack(teams)))
        result = run_program(path, stack=f"bench{teams}")
        assert result.ok, result.problems
        counts.append(len(result.resources))
    per_team = (counts[1] - counts[0] - 2) // 10
    assert counts[1] - counts[0] - 2 == per_team * 10
    guide = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    assert f"({per_team} resources per team)" in guide

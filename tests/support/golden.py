"""What `aksray plan` and `aksray render` print for the project's stacks, as files.

The golden copies under tests/golden/<stack>/ are what a user sees: the plan as text, as JSON
and as Markdown, and every file `aksray render` writes. `make golden` rewrites them from the
current code; tests/project/test_golden.py compares byte for byte, so a change to any output shows
in
the diff of the commit that made it. Two copies in the docs follow: docs/planner.md's dev summary
and docs/ci.md's rendered dev comment (`make golden` rewrites them too; tests keep them equal).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from pathlib import Path

from aksray.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
STACKS = ("dev", "prod", "local")


def _stdout_of(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(argv)
    return out.getvalue()


def outputs(stack: str) -> dict[str, bytes]:
    """Every output of one stack by its path under tests/golden/<stack>/."""
    files = {
        "plan.txt": _stdout_of(["plan", "--stack", stack]).encode(),
        "plan.json": _stdout_of(["plan", "--stack", stack, "--json"]).encode(),
        "plan.md": _stdout_of(["plan", "--stack", stack, "--format", "markdown"]).encode(),
    }
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "render"
        _stdout_of(["render", "--stack", stack, "--out", str(out)])
        for path in sorted(out.rglob("*")):
            if path.is_file():
                files[f"render/{path.relative_to(out).as_posix()}"] = path.read_bytes()
    return files


def stored(stack: str) -> dict[str, bytes]:
    folder = GOLDEN / stack
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def write(stack: str) -> int:
    folder = GOLDEN / stack
    shutil.rmtree(folder, ignore_errors=True)
    files = outputs(stack)
    for name, content in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return len(files)


# (file, text that starts the copy, text that ends it, golden file and where its copy starts)
DOC_COPIES = (
    ("docs/planner.md", "```\nPools (", "```\n", "dev/plan.txt", "Pools ("),
    (
        "docs/ci.md",
        "<!-- plan.md of dev: begin -->\n",
        "<!-- plan.md of dev: end -->",
        "dev/plan.md",
        "",
    ),
)


def sync_docs() -> list[str]:
    """Rewrite the docs' copies of golden outputs; the files changed."""
    changed = []
    for name, begin, end, source, start in DOC_COPIES:
        path = ROOT / name
        text = path.read_text()
        output = (GOLDEN / source).read_text()
        first = text.index(begin) + len(begin) - len(start)
        last = text.index(end, first + len(start))
        updated = text[:first] + output[output.index(start) :] + text[last:]
        if updated != text:
            path.write_text(updated)
            changed.append(name)
    return changed


if __name__ == "__main__":
    for name in STACKS:
        print(f"golden: {name}: {write(name)} files")
    for name in sync_docs():
        print(f"golden: rewrote the copy in {name}")

"""The shell blocks of README.md and docs/*.md, and where each of them runs.

Every fenced `bash` or `sh` block there carries a marker on the line above its fence,
`<!-- shell: NAME -->` (GitHub does not show it). `PLACES` says, for each `<file>#<name>`, where
it runs and why: here, offline, in the default tier (`tests/project/test_doc_shell.py`, as
written, in a copy of the checkout); with the engine `make engine` builds, in the slow tier
(`make docs-e2e`, `tests/project/test_doc_shell_engine.py`); or nowhere a test can reach (Azure
or a cluster, the rehearsal rig), saying what covers it instead. A block without a marker, a
marker without a row and a row without its block all fail: a new block is placed here, on
review, before it lands.
"""

from __future__ import annotations

import enum
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from aksray.offline.runner import PROJECT_ROOT

DOCUMENTS: Final = (
    "README.md",
    *sorted(f"docs/{p.name}" for p in (PROJECT_ROOT / "docs").glob("*.md")),
)
SHELLS: Final = frozenset({"bash", "sh", "shell", "console"})
# A fence may be indented (a block inside a list item): its body is read less that indent.
_FENCE = re.compile(
    r"(?ms)^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$"
)
_MARKER = re.compile(r"<!-- shell: (?P<name>[a-z0-9-]+) -->[ \t]*\n[ \t]*\Z")


class Where(enum.Enum):
    HERE = "here, offline: the default tier runs it as written"
    ENGINE = "with the engine make engine builds: make docs-e2e runs it"
    AZURE = "needs an Azure subscription or a running cluster"
    RIG = "needs the rehearsal rig"
    ELSEWHERE = "runs elsewhere: each command says where"


# Why a command of a block that otherwise runs is left out here (each checked where it can be).
CI_RUNS_IT: Final = ".ci/run runs it, as written"


@dataclass(frozen=True)
class Place:
    where: Where
    why: str
    # A command of the block (as written, less its comment) -> why this test does not run it.
    not_here: Mapping[str, str] = field(default_factory=dict)


PLACES: Final[dict[str, Place]] = {
    "README.md#quick-start": Place(
        Where.HERE,
        "installs (a no-op after make install) and plans the dev stack offline",
        {"make test": CI_RUNS_IT + " (this test is part of it)"},
    ),
    "README.md#plan": Place(Where.HERE, "the planner is offline: no Azure, no cluster, no network"),
    "README.md#call-endpoint": Place(Where.AZURE, "needs llm-serve running in a cluster"),
    "README.md#deploy": Place(
        Where.ENGINE,
        "the environment as written, then pulumi preview of the local stack (no Azure) with a "
        "local file backend, on a PATH with another Python first",
        {
            "pulumi login": "a state backend is the user's: the test logs in to a local folder",
            "pulumi stack select dev": "dev needs Azure: the test creates the local stack",
            "pulumi up --stack dev": "needs Azure: the test previews the local stack instead",
        },
    ),
    "README.md#policy-pack": Place(
        Where.HERE,
        "creates the pack's virtualenv with the project's Python",
        {
            "policy/venv/bin/pip install -r policy/requirements.txt": "needs the package index "
            "(no test touches the network); tests/project/test_doc_shell.py checks its pins are "
            "the project's",
            "pulumi preview --stack prod --policy-pack policy": "prod needs Azure",
            "pulumi up --stack prod --policy-pack policy": "prod needs Azure",
        },
    ),
    "README.md#destroy": Place(Where.AZURE, "dev is an Azure stack"),
    "docs/aks.md#grants": Place(Where.AZURE, "role assignments in an Azure subscription"),
    "docs/aks.md#keep-data": Place(Where.AZURE, "prod is an Azure stack"),
    "docs/aks.md#release-data": Place(Where.AZURE, "prod is an Azure stack"),
    "docs/changing.md#since": Place(
        Where.HERE,
        "offline, in a git checkout with an origin/main and the two folders it names, aksray on "
        "PATH as the README's deploy line puts it",
    ),
    "docs/development.md#engine": Place(
        Where.ENGINE,
        "make engine (cached: a no-op) and the by-hand engine run of the local stack",
        {"make e2e": CI_RUNS_IT + " where the engine is cached"},
    ),
    "docs/development.md#tests": Place(
        Where.ELSEWHERE,
        "every line is a make target that runs elsewhere",
        {
            "make test": CI_RUNS_IT,
            "make reference": CI_RUNS_IT,
            "make check": "make lint, make typecheck and make test, each of which .ci/run runs",
            "make test-payloads": "installs torch and the payloads' libraries (about 7 GB) from "
            "the package index",
            "make e2e": CI_RUNS_IT + " where the engine is cached",
            "make docs-e2e": CI_RUNS_IT + " where the engine is cached",
            "make rehearse-test": CI_RUNS_IT + " where the rig and the engine are cached",
        },
    ),
    "docs/development.md#policy-exception": Place(Where.AZURE, "dev is an Azure stack"),
    "docs/development.md#bench": Place(
        Where.HERE,
        "writes a generated stack; the timing runs take minutes and rewrite the README's table",
        {
            "make bench": "minutes of timing, and it rewrites the README's table; "
            "tests/project/test_bench.py tests the script's parts",
            ".venv/bin/python scripts/bench_plan.py --stack prod --stack dev": "minutes of "
            "timing (make bench without --preview and --write-readme)",
            ".venv/bin/python scripts/bench_plan.py --teams 1 10 100 --runs 7": "minutes of timing",
        },
    ),
    "docs/multikueue.md#destroy": Place(Where.AZURE, "multiregion is an Azure stack"),
    "docs/rehearsal.md#rehearse": Place(
        Where.RIG,
        "each command starts the rig for minutes; make rehearse-test plays these stacks and "
        "scenarios under .ci/run where the rig is cached, and tests/cli tests the refusals",
    ),
    "docs/rehearsal.md#rehearse-changes": Place(
        Where.RIG,
        "each command starts a rig for minutes; make rehearse-test plays the day-two sequence "
        "and the upgrade (tests/rehearse/change/), and tests/cli tests the refusals",
    ),
    "docs/teams.md#sign-in": Place(
        Where.AZURE, "an AKS cluster with Entra ID; rights proven by team-members"
    ),
    "docs/teams.md#submit": Place(
        Where.AZURE, "a cluster; the same RayJob is submitted as a member by team-members"
    ),
    "docs/teams.md#why-waiting": Place(Where.AZURE, "reads a running cluster"),
    "docs/teams.md#dashboard": Place(Where.AZURE, "a running Ray cluster"),
    "docs/verify.md#verify": Place(
        Where.AZURE,
        "reads a deployed cluster; on the rig by tests/rehearse/test_verify.py",
    ),
    "docs/workloads.md#call-endpoint": Place(Where.AZURE, "needs llm-serve running in a cluster"),
    "docs/workloads.md#token-secret": Place(Where.AZURE, "creates a Secret in a cluster"),
    "docs/workloads.md#start-run": Place(
        Where.AZURE,
        "pulumi up of dev needs Azure; make docs-e2e sets its run label with the real CLI and "
        "plans the result (every `pulumi config set` example of the docs)",
    ),
}


@dataclass(frozen=True)
class Block:
    key: str  # <file>#<marker>; "" when the block has no marker
    file: str
    line: int  # of the opening fence, for messages only
    text: str

    @property
    def commands(self) -> list[str]:
        """Its lines as commands: comments and blank lines dropped, continuations joined."""
        joined = re.sub(r"\s*\\\n\s*", " ", self.text)
        return [c for c in (command_of(line) for line in joined.splitlines()) if c]

    def without(self, commands: Mapping[str, str]) -> str:
        """The block's text as written, less the lines that are one of `commands`."""
        return "".join(
            line for line in self.text.splitlines(keepends=True) if command_of(line) not in commands
        )


def command_of(line: str) -> str:
    """A line less its trailing comment (a `#` after whitespace, outside quotes) and spaces."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].strip()
    return line.strip()


def shell_blocks(root: Path = PROJECT_ROOT) -> list[Block]:
    """Every fenced shell block of README.md and docs/*.md, in file order."""
    blocks = []
    for name in DOCUMENTS:
        text = (root / name).read_text(encoding="utf-8")
        for fence in _FENCE.finditer(text):
            if fence.group("info").strip().split(" ")[0] not in SHELLS:
                continue
            marker = _MARKER.search(text, 0, fence.start())
            key = f"{name}#{marker.group('name')}" if marker else ""
            line = text.count("\n", 0, fence.start()) + 1
            indent = len(fence.group("indent"))
            body = "".join(
                row[indent:] if row[:indent].isspace() else row.lstrip()
                for row in fence.group("body").splitlines(keepends=True)
            )
            blocks.append(Block(key, name, line, body))
    return blocks


def block(key: str) -> Block:
    (found,) = [b for b in shell_blocks() if b.key == key]
    return found


def uv_home() -> Path:
    """Where `make install` put uv: `UV_HOME` as make was given it (a nested make inherits it
    through MAKEFLAGS, as `.ci/run`'s fresh clone passes it), else the checkout's `.cache/uv`."""
    given = re.search(r"(?:^|\s)UV_HOME=(\S+)", os.environ.get("MAKEFLAGS", ""))
    home = Path(given.group(1)) if given else PROJECT_ROOT / ".cache" / "uv"
    return home if home.is_absolute() else PROJECT_ROOT / home


# A test touches no network: uv installs from its cache alone (what `make install` left there).
OFFLINE: Final = {"UV_OFFLINE": "1"}


def checkout_copy(folder: Path, *, install: bool = True) -> Path:
    """A fresh checkout of this one's files (tracked, and new ones git does not ignore), with
    their times, whose `.cache/uv` is the installer `make install` put there (linked): what a
    block writes stays in the copy. `install`: `make install` runs there first, offline, from
    uv's cache (a few seconds), as a user's checkout has it; a block that runs `make` itself
    gets the copy without it. The checkout's own `.venv` is never used: a `make install` in a
    copy must not reinstall it."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = PROJECT_ROOT / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    installer = uv_home()
    if not (installer / "bin" / "uv").is_file():
        raise AssertionError(f"no uv in {installer}: run make install first")
    (folder / ".cache").mkdir()
    os.symlink(installer, folder / ".cache" / "uv")
    if install:
        done = subprocess.run(
            ["make", "install"],
            cwd=folder,
            env={**os.environ, **OFFLINE},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return folder


def run_bash(script: str, cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """A block as written, under `set -euo pipefail`: every command must succeed."""
    return subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + script],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@dataclass(frozen=True)
class ConfigExample:
    """A `pulumi config set` the docs show (in a code span or a block), placeholders aside."""

    file: str
    command: str  # as written, on one line, up to a `&&` or the span's end
    stack: str  # its `--stack`, else dev
    arguments: str  # after `pulumi config set`, less `--stack NAME`

    @property
    def words(self) -> list[str]:
        return shlex.split(self.arguments)

    @property
    def flat(self) -> bool:
        """A dotted or indexed key set without `--path`: one flat key, which the docs show as
        the mistake `aksray plan` refuses, naming the `--path` form."""
        words = self.words
        return not ({"--path", "--secret"} & set(words)) and bool(re.search(r"[.\[]", words[0]))


_CONFIG_SET = re.compile(r"pulumi config set\b(?P<args>[^`&\n]*)")
_SPAN = re.compile(r"(?<!`)`(?P<code>[^`]+)`(?!`)")


def config_examples(root: Path = PROJECT_ROOT) -> list[ConfigExample]:
    """Every `pulumi config set KEY VALUE` of README.md and docs/*.md with no `<placeholder>`,
    once per stack and arguments."""
    found: dict[tuple[str, str], ConfigExample] = {}
    blocks = shell_blocks(root)
    for name in DOCUMENTS:
        text = _FENCE.sub("", (root / name).read_text(encoding="utf-8"))
        codes = [" ".join(span.group("code").split()) for span in _SPAN.finditer(text)]
        codes += [c for b in blocks if b.file == name for c in b.commands]
        for code in codes:
            for match in _CONFIG_SET.finditer(code):
                words = shlex.split(match.group("args"))
                positional = [word for word in words if not word.startswith("--")]
                if len(positional) < 2 or any("<" in word for word in words):
                    continue  # a mention of the command, or a placeholder to fill in
                stack = "dev"
                if "--stack" in words:
                    at = words.index("--stack")
                    stack = words[at + 1]
                    del words[at : at + 2]
                arguments = shlex.join(words)
                command = f"pulumi config set{match.group('args')}".strip()
                found.setdefault((stack, arguments), ConfigExample(name, command, stack, arguments))
    return list(found.values())

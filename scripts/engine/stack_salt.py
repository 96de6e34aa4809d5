"""Keep what a Pulumi secrets provider writes into a stack file out of the tracked stack files.

`pulumi stack init` with the passphrase provider (and the first command on a stack that lacks
it) writes a top-level `encryptionsalt:` line into `stacks/Pulumi.<stack>.yaml`; the cloud
providers write `secretsprovider:` and `encryptedkey:`. Those belong to one engine's state, not
to the project. scripts/engine/pulumi.sh runs every hand-run engine command between

    stack_salt.py restore STACKS_DIR STASH_DIR   # put the stashed lines back for the command
    stack_salt.py stash   STACKS_DIR STASH_DIR   # take them out again, into STASH_DIR

so the engine always finds its salt and a tracked stack file never changes. Only those lines
move; everything else in the file (a `pulumi config set`, say) stays as the command left it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Final

KEYS: Final = ("secretsprovider", "encryptedkey", "encryptionsalt")
# One top-level `key: value` line; Pulumi writes each of these as a plain scalar.
_LINE: Final = re.compile(rf"^(?:{'|'.join(KEYS)}):[^\n]*\n?", re.MULTILINE)


def _stack_files(stacks: Path) -> list[Path]:
    return sorted(stacks.glob("Pulumi.*.yaml"))


def stash(stacks: Path, store: Path) -> list[str]:
    """Move the secrets-provider lines of every stack file into `store`; the files changed."""
    moved: list[str] = []
    for path in _stack_files(stacks):
        text = path.read_text()
        lines = _LINE.findall(text)
        if not lines:
            continue
        store.mkdir(parents=True, exist_ok=True)
        (store / path.name).write_text("".join(line.rstrip("\n") + "\n" for line in lines))
        path.write_text(_LINE.sub("", text))
        moved.append(path.name)
    return moved


def restore(stacks: Path, store: Path) -> list[str]:
    """Put stashed lines back at the top of their stack files (where Pulumi writes them), unless
    the file already has its own; the files changed."""
    restored: list[str] = []
    for path in _stack_files(stacks):
        saved = store / path.name
        if not saved.is_file():
            continue
        text = path.read_text()
        if _LINE.search(text):
            continue
        path.write_text(saved.read_text() + text)
        restored.append(path.name)
    return restored


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("stash", "restore"):
        print("usage: stack_salt.py (stash|restore) STACKS_DIR STASH_DIR", file=sys.stderr)
        return 2
    action = stash if argv[0] == "stash" else restore
    action(Path(argv[1]), Path(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A problem in the stack configuration, and the error that reports all of them at once."""

from __future__ import annotations

from dataclasses import dataclass


def printable(text: str) -> str:
    """One line, whatever a stack file held: control characters are shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return printable(f"{self.path}: {self.message}")


class SettingsError(Exception):
    """Every problem found in the stack configuration, one line each.

    What `pulumi up` sees is the `pulumi.RunError` form (settings/load.py), which the Pulumi
    language host prints without a traceback.
    """

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        lines = "\n".join(f"  {problem}" for problem in self.problems)
        noun = "problem" if count == 1 else "problems"
        super().__init__(f"the stack configuration has {count} {noun}:\n{lines}")

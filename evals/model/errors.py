"""Errors the harness reports to users, and the process exit codes they map to."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes of the `evals` command, documented in docs/cli.md."""

    OK = 0
    GATE_FAILED = 1
    INVALID_INPUT = 2
    HARNESS_FAULT = 3
    INTERRUPTED = 130


@dataclass
class SuiteError(Exception):
    """A suite, config or command-line input the harness cannot use.

    Carries where the problem is (file and line when known) and what to change, so the
    message alone is enough to fix it. Raised before any run starts.
    """

    message: str
    file: str | None = None
    line: int | None = None
    fix: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self.render())

    def render(self) -> str:
        """One readable block: `file:line: message` then the suggested fix."""
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        text = f"{where}{self.message}"
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text

    def __str__(self) -> str:
        return self.render()


class HarnessFault(Exception):
    """A failure of the harness itself (store unreachable, bug), not of the agent or suite."""

"""docs/cli.md names every command and every option the command line accepts, so a user
reading it learns of each one (a new subcommand or flag without its line there fails)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from evals.cli import build_parser

DOCS = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
SYNOPSIS = DOCS.split("```", 2)[1]


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Each leaf command (`run`, `ci pr`, `store prune`, ...) with its parser."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        yield path, parser
        return
    for name, sub in subparsers[0].choices.items():
        yield from _commands(sub, (*path, name))


def _synopsis_lines(command: tuple[str, ...]) -> str:
    """The synopsis entries of `evals COMMAND` (with their continuation lines)."""
    entries = re.split(r"\n(?=evals )", SYNOPSIS)
    prefix = "evals " + " ".join(command) + " "
    return "\n".join(e for e in entries if f"{e.strip()} ".startswith(prefix))


def test_every_command_and_option_is_in_the_synopsis() -> None:
    missing = []
    for command, parser in _commands(build_parser()):
        lines = _synopsis_lines(command)
        if not lines:
            missing.append(" ".join(command))
            continue
        for action in parser._actions:
            names = [o for o in action.option_strings if o not in ("-h", "--help")]
            if names and not any(re.search(rf"(?<![\w-]){o}\b", lines) for o in names):
                missing.append(f"{' '.join(command)} {names[-1]}")
    assert not missing, f"docs/cli.md's synopsis lacks: {', '.join(missing)}"

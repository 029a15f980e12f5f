"""`evals history`: stored evaluations, newest first."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from evals.cli import options, values
from evals.model.errors import ExitCode

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals history` and its options."""
    history = commands.add_parser("history", help="list stored evaluations")
    options.suite_id(history)
    options.env(history, help="only this environment")
    history.add_argument(
        "--limit", type=values.non_negative, default=20, help="list at most N (default 20)"
    )
    options.store(history)
    history.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """List stored evaluations, newest first."""
    from evals.pipeline.history import print_history

    print_history(args.store, suite_id=args.suite, environment=args.env, limit=args.limit)
    return int(ExitCode.OK)

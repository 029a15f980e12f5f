"""`evals compat-check PATH...`: promptfoo and evals run on the same configs, their rows
compared."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from evals.model.errors import ExitCode, SuiteError

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals compat-check` and its options."""
    compat = commands.add_parser(
        "compat-check",
        help="run promptfoo and evals on promptfoo configs and compare their rows",
    )
    compat.add_argument("paths", nargs="+", help="config files or folders holding configs")
    compat.add_argument("--promptfoo", help="promptfoo CLI (default: $EVALS_PROMPTFOO, PATH)")
    compat.add_argument("--goldens", help="folder for promptfoo's trimmed outputs")
    compat.add_argument("--refresh", action="store_true", help="run promptfoo again")
    # not the gate environment: variables set for both tools
    compat.add_argument(
        "--env", action="append", metavar="NAME=VALUE", help="environment for both tools"
    )
    compat.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    compat.add_argument("--verbose", action="store_true", help="list every differing row")
    compat.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run promptfoo and evals on every promptfoo config found; exit 1 when a row differs."""
    from evals.compat.promptfoo_check import check

    env = {}
    for pair in args.env or []:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SuiteError(f"--env takes NAME=VALUE, got {pair!r}", fix="write --env KEY=value")
        env[name] = value
    cli = Path(args.promptfoo or os.environ.get("EVALS_PROMPTFOO") or "promptfoo")
    data = check(
        [Path(p) for p in args.paths],
        cli=cli,
        goldens=Path(args.goldens) if args.goldens else None,
        refresh=args.refresh,
        env=env,
        verbose=args.verbose,
    )
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return int(ExitCode.OK) if data["agreeing"] == data["rows"] else 1

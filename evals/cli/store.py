"""`evals store prune|check`: the results store maintained."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from evals.cli import options, values
from evals.model.errors import ExitCode

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals store prune` and `evals store check`."""
    store = commands.add_parser("store", help="maintain the results store")
    actions = store.add_subparsers(dest="store_command", required=True)
    prune = actions.add_parser(
        "prune", help="keep the newest N evaluations of each suite (and the latest baseline)"
    )
    prune.add_argument("--keep", type=values.positive, required=True, metavar="N")
    options.store(prune)
    prune.set_defaults(handler=_prune)
    check = actions.add_parser(
        "check", help="check that a store is whole and readable (exit 1 when it is not)"
    )
    options.store(check)
    check.set_defaults(handler=_check)


def _prune(args: argparse.Namespace) -> int:
    """Delete all but the newest evaluations of each suite (and compact a SQLite file)."""
    from evals.store import open_store

    store = open_store(args.store)
    try:
        deleted = store.prune(args.keep)
    finally:
        store.close()
    print(f"pruned {len(deleted)} evaluation(s), kept the newest {args.keep} per suite")
    return int(ExitCode.OK)


def _check(args: argparse.Namespace) -> int:
    """Check that a store is whole and readable, changing nothing: exit 0 when it is,
    1 when it is not (a CI job then falls back to an older store)."""
    from evals.store.integrity import check_store

    checked = check_store(args.store)
    print(f"{'ok' if checked.ok else 'unusable'}: {checked.detail}")
    return int(ExitCode.OK if checked.ok else ExitCode.GATE_FAILED)

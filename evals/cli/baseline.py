"""`evals baseline show|accept`: which evaluation is the baseline and why; accepting one
the gates did not choose."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

from evals.cli import options
from evals.model.errors import ExitCode

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals baseline show` and `evals baseline accept`."""
    baseline = commands.add_parser("baseline", help="which evaluation is the baseline and why")
    actions = baseline.add_subparsers(dest="action", required=True)
    shown = actions.add_parser("show", help="the baseline of each suite, and why")
    options.suite_id(shown)
    shown.add_argument("--branch", default="main", help="branch of the nightlies (default main)")
    options.store(shown)
    shown.set_defaults(handler=_show)
    accepted = actions.add_parser(
        "accept", help="make a nightly the gates did not choose the baseline (recorded)"
    )
    accepted.add_argument("id", help="the evaluation's id (`evals history`)")
    accepted.add_argument("--reason", required=True, help="why it is accepted")
    options.actor(accepted, help="who accepts it (default $EVALS_TRIAGE_ACTOR or the user)")
    options.store(accepted)
    accepted.set_defaults(handler=_accept)


def _show(args: argparse.Namespace) -> int:
    """`evals baseline show`: the baseline of each suite, and why it is the baseline."""
    from evals.team import baselines, triage

    with triage.opened(args.store) as store:
        for current in baselines.current_baselines(store, args.suite, args.branch):
            print("\n".join(baselines.describe(current)))
    return int(ExitCode.OK)


def _accept(args: argparse.Namespace) -> int:
    """`evals baseline accept`: a nightly the gates did not choose made the baseline."""
    from evals.team import baselines, triage

    actor = options.actor_of(args)
    with triage.opened(args.store) as store:
        action = baselines.accept_baseline(store, args.id, actor, args.reason, time.time())
    print(
        f"{args.id} is the baseline of {action.suite_id}, accepted by {actor} (action {action.id})"
    )
    return int(ExitCode.OK)

"""`evals regrade EVAL_ID`: a stored evaluation's responses graded again with the suite's
current assertions, without calling agents."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from evals.cli import options

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals regrade` and its options."""
    regrade = commands.add_parser("regrade", help="grade stored runs again, without calling agents")
    regrade.add_argument("evaluation", metavar="EVAL_ID", help="stored evaluation to regrade")
    regrade.add_argument("--suite", help="suite file (default: the one the evaluation ran)")
    options.outputs(regrade)
    options.quiet(regrade)
    options.store(regrade)
    regrade.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Grade a stored evaluation's responses again, store the result, report and gate it."""
    from evals.pipeline.finish import checked_outputs, finish
    from evals.pipeline.regrade import regrade

    outputs = checked_outputs(args.output)
    result = regrade(args.store, args.evaluation, args.suite)
    print(f"stored evaluation {result.meta.id} (regraded {args.evaluation})", file=sys.stderr)
    return finish(
        result,
        outputs,
        quiet=args.quiet,
        html_run_details=args.html_run_details,
        store=args.store,
        on_stored=options.nightly_baseline,
    )

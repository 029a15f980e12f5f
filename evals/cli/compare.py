"""`evals compare [BASELINE] [CANDIDATE]`: two stored evaluations compared, the candidate
gated."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from evals.cli import options

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals compare` and its options."""
    compare = commands.add_parser("compare", help="compare two stored evaluations")
    compare.add_argument(
        "baseline", nargs="?", help="baseline evaluation id (default: the baseline of main)"
    )
    compare.add_argument("candidate", nargs="?", help="candidate evaluation id (default: latest)")
    options.suite_id(compare, help="suite id, to pick defaults")
    compare.add_argument("--baseline-agent", help="agent of the baseline evaluation to compare")
    compare.add_argument("--candidate-agent", help="agent of the candidate evaluation to compare")
    options.env(compare)
    compare.add_argument(
        "--allow-fingerprint-mismatch",
        action="store_true",
        help="compare evaluations of different suite versions on the cases both share "
        "(the differences are listed); agent changes never need it",
    )
    compare.add_argument(
        "--baseline-branch",
        default="main",
        help="branch whose baseline is the default baseline (default main)",
    )
    options.outputs(compare)
    options.quiet(compare)
    options.store(compare)
    compare.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Compare two stored evaluations (baseline then candidate) and gate the candidate."""
    from evals.pipeline.finish import checked_outputs, finish
    from evals.pipeline.history import compare_stored

    outputs = checked_outputs(args.output)
    result = compare_stored(
        args.store,
        baseline_id=args.baseline,
        candidate_id=args.candidate,
        suite=args.suite,
        baseline_agent=args.baseline_agent,
        candidate_agent=args.candidate_agent,
        environment=args.env,
        allow_fingerprint_mismatch=args.allow_fingerprint_mismatch,
        baseline_branch=args.baseline_branch,
    )
    return finish(
        result,
        outputs,
        quiet=args.quiet,
        html_run_details=args.html_run_details,
        store=args.store,
        stored=False,
    )

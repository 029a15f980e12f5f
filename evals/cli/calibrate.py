"""`evals calibrate FILE`: an LLM judge measured against human labels."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evals.cli import options
from evals.model.errors import ExitCode

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals calibrate` and its options."""
    calibration = commands.add_parser("calibrate", help="measure an LLM judge against human labels")
    calibration.add_argument("file", help="calibration file (.yaml with items: or .jsonl)")
    calibration.add_argument("--grader", metavar="PROVIDER_ID", help="judge provider to measure")
    options.concurrency(calibration, help="judge calls in flight at once (default 4)", default=4)
    calibration.add_argument("--min-kappa", type=float, help="fail below this Cohen's kappa")
    calibration.add_argument("--min-accuracy", type=float, help="fail below this agreement")
    calibration.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Measure a judge against human labels; fail when agreement is below the minimums."""
    from evals.analysis.agreement import below_minimum, render_table
    from evals.pipeline.calibration import calibrate

    calibration, rows = calibrate(Path(args.file), args.grader, args.concurrency)
    print(render_table(rows))
    min_kappa = calibration.min_kappa if args.min_kappa is None else args.min_kappa
    min_accuracy = calibration.min_accuracy if args.min_accuracy is None else args.min_accuracy
    problems = below_minimum(rows[-1], min_kappa, min_accuracy)
    for problem in problems:
        print(f"judge below minimum: {problem}", file=sys.stderr)
    return int(ExitCode.GATE_FAILED if problems else ExitCode.OK)

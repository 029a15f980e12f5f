"""`evals validate SUITE`: a suite loaded and checked without running anything."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from evals.cli import options
from evals.model.errors import ExitCode

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals validate` and its options."""
    validate = commands.add_parser("validate", help="check a suite without running it")
    options.suite_path(validate)
    validate.add_argument(
        "--json", action="store_true", help="print the outline and the fingerprints as JSON"
    )
    validate.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Load a suite and report problems without running anything; exit 2 when the suite
    has problems promptfoo would turn into error rows (`Suite.notices`).

    `--json` prints the suite's identity instead: its outline (with the suite and case
    fingerprints) and each agent's fingerprint.
    """
    from evals.gates.feasibility import undecidable_gates
    from evals.suite import load_suite

    suite = load_suite(args.suite)
    from evals.plan.runs import count_plan, plan_size_warning
    from evals.suite.costs import unpriced_agents
    from evals.suite.lint import lint_suite

    repeat = suite.evaluate_options.repeat
    too_big = plan_size_warning(count_plan(suite, repeat), repeat)
    warnings = [
        *suite.warnings,
        *lint_suite(suite),
        *undecidable_gates(suite),
        *unpriced_agents(suite),
        *([too_big] if too_big else []),
    ]
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if suite.notices:
        for notice in suite.notices:
            print(f"error: {notice}", file=sys.stderr)
        print(
            f"{suite.path}: {len(suite.notices)} problem(s): `evals run` runs the suite and makes "
            "each run they touch an error row (or a failed check), as promptfoo does",
            file=sys.stderr,
        )
        return int(ExitCode.INVALID_INPUT)
    if args.json:
        import orjson

        document = {
            "outline": suite.outline().to_dict(),
            "agent_fingerprints": suite.agent_fingerprints,
        }
        print(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
        return int(ExitCode.OK)
    agents = ", ".join(f"{label} ({fp})" for label, fp in suite.agent_fingerprints.items())
    print(
        f"{suite.path}: ok — {len(suite.cases)} cases, {len(suite.prompts)} prompt(s), "
        f"agents: {agents}, suite fingerprint {suite.fingerprint}"
    )
    return int(ExitCode.OK)

"""`evals plan SUITE`: how likely the regression gate is to find a drop, and what a target
needs, before anything runs."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from evals.cli import options
from evals.model.errors import ExitCode, SuiteError

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals plan` and its options."""
    plan = commands.add_parser(
        "plan", help="how likely the regression gate finds a drop, and what a target needs"
    )
    options.suite_path(plan)
    options.env(plan)
    plan.add_argument("--cases", type=int, metavar="N", help="cases (default: the suite's)")
    plan.add_argument(
        "--repeats", type=int, metavar="K", help="repeats (default: the environment's repeat)"
    )
    plan.add_argument(
        "--effect", type=float, metavar="D", help="target drop in pass rate (default 0.10)"
    )
    plan.add_argument(
        "--baseline-rate",
        type=float,
        metavar="P",
        help="baseline pass rate (default: from the store, else 0.7)",
    )
    plan.add_argument(
        "--icc",
        type=float,
        metavar="R",
        help="intra-class correlation of repeats (default: from the store, else 0.4)",
    )
    plan.add_argument(
        "--tolerance",
        type=float,
        metavar="T",
        help="tolerated loss (default: the gates' max_regression, else margin)",
    )
    plan.add_argument("--power", type=float, default=0.8, help="power to aim for (default 0.8)")
    options.store(plan)
    plan.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Print how likely the regression gate is to find a drop, and what a target needs."""
    from evals.analysis.power import (
        build_power_plan,
        existing_store_url,
        latest_estimate,
        render_power_plan,
    )
    from evals.gates.catalog import planned_gate_count
    from evals.suite import load_suite

    suite = load_suite(args.suite)
    store_url = existing_store_url(args.store)
    estimate = latest_estimate(store_url, suite) if store_url else None
    try:
        plan = build_power_plan(
            suite,
            gates=planned_gate_count(suite, args.env),
            environment=args.env,
            cases=args.cases,
            repeats=args.repeats,
            effect=args.effect,
            pass_rate=args.baseline_rate,
            icc=args.icc,
            tolerance=args.tolerance,
            power=args.power,
            estimate=estimate,
        )
    except ValueError as exc:
        raise SuiteError(str(exc), fix="see `evals plan --help` for each option's range") from None
    render_power_plan(plan)
    from evals.gates.feasibility import undecidable

    config = suite.gates.for_environment(args.env)
    for item in undecidable(suite, args.env):
        print(f"cannot decide: {item.sentence(config.on_undetermined or 'warn')}")
    return int(ExitCode.OK)

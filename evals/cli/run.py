"""`evals run`: run a suite against its agents and gate the result."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from evals.cli import options, values
from evals.model.defaults import DEFAULT_RUNS_IN_MEMORY

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals run SUITE` and its options."""
    run = commands.add_parser("run", help="run a suite against its agents and gate the result")
    options.suite_path(run)
    options.outputs(run)
    options.repeat(run, help="runs per (case, agent); default from the suite")
    options.concurrency(run)
    options.timeout(run)
    options.env(run)
    run.add_argument("--tag", "-t", action="append", help="only cases with this tag (repeatable)")
    run.add_argument("--case", action="append", help="only this case id (repeatable)")
    options.agents(run, help="only this agent label (repeatable)")
    run.add_argument(
        "--resume",
        nargs="?",
        const=True,
        type=values.evaluation_id,
        metavar="EVALUATION_ID",
        help="continue an interrupted evaluation (latest one of this suite by default)",
    )
    run.add_argument("--shard", type=values.shard, metavar="I/N", help="run only shard I of N")
    run.add_argument(
        "--shard-wait",
        type=values.seconds,
        default=600.0,
        metavar="S",
        help="with --adaptive and --shard: how long a look waits for the other shards' runs "
        "in the shared store before it fails (default 600)",
    )
    options.until_decided(
        run,
        help="run in stages of cumulative repeats (default 5,10,20) and stop once the gates "
        "are decided; each look spends its share of the build's false-failure budget",
    )
    options.adaptive(run)
    run.add_argument(
        "--look",
        type=values.positive,
        help=argparse.SUPPRESS,  # the look of an adaptive comparison, recorded on each run
    )
    options.evaluation_id(
        run, help="id for the new evaluation, 1 to 64 printable characters (shards share one)"
    )
    run.add_argument(
        "--trace",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="record an OpenTelemetry trace per run (default: on for out-of-process agents)",
    )
    options.seed(
        run, help="mixed into every run's seed: another value draws fresh, reproducible randomness"
    )
    run.add_argument("--no-store", action="store_true", help="do not write the results store")
    run.add_argument(
        "--runs-in-memory",
        type=values.non_negative,
        metavar="N",
        help="an evaluation of fewer runs keeps them in memory for the reports that list "
        "every run; a larger one's are read back from the store (default: the suite's "
        f"reports.runs_in_memory, else {DEFAULT_RUNS_IN_MEMORY}; 0: always from the store)",
    )
    reuse = run.add_mutually_exclusive_group()
    reuse.add_argument(
        "--reuse-baseline",
        action="store_true",
        help="answer the baseline agent from its stored runs when its fingerprint, the suite "
        "and --seed are unchanged, even when its fingerprint cannot see its code (by default "
        "only when it can), behind a drift guard that re-runs a share of them fresh (falls "
        "back to a fresh baseline on drift)",
    )
    reuse.add_argument(
        "--fresh-baseline",
        action="store_true",
        help="run the baseline agent fresh, never from its stored runs (also "
        "gates.reuse_baseline: false)",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    options.quiet(run, help="print nothing but errors")
    run.add_argument(
        "--grader",
        metavar="PROVIDER_ID",
        help="provider for model-graded assertions (over defaultTest.options)",
    )
    options.store(run)
    run.add_argument(
        "--cache",
        nargs="?",
        const=True,
        default=False,
        metavar="PATH",
        help="answer calls an unchanged agent already answered (same request and seed) from "
        "the response cache, .evals/cache/responses.db or PATH (off by default)",
    )
    options.executor(run)
    run.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run a suite, write reports, print the verdict, and exit by the gates."""
    from evals.model.options import RunOptions
    from evals.pipeline.suite_run import RunRequest, run_suite

    _check_contradictions(args)
    return run_suite(
        RunRequest(
            suite=args.suite,
            options=RunOptions(
                repeat=args.repeat,
                concurrency=args.concurrency,
                timeout_s=args.timeout,
                tags=args.tag or None,
                case_ids=args.case or None,
                agents=args.agent or None,
                environment=args.env,
                store_url=args.store,
                use_store=not args.no_store,
                resume=args.resume,
                shard=args.shard,
                progress=not args.quiet and not args.no_progress,
                evaluation_id=args.evaluation_id,
                grader=args.grader,
                trace=args.trace,
                seed=args.seed,
                executor=args.executor,
                ray_address=args.ray_address,
                pass_env=args.pass_env or None,
                cache=bool(args.cache),
                cache_path=args.cache if isinstance(args.cache, str) else None,
            ),
            look=args.look,
            outputs=args.output or (),
            html_run_details=args.html_run_details,
            runs_in_memory=args.runs_in_memory,
            quiet=args.quiet,
            reuse_baseline=args.reuse_baseline,
            fresh_baseline=args.fresh_baseline,
            until_decided=args.until_decided,
            adaptive=args.adaptive,
            look_every=args.look_every,
            pass_reach=args.pass_reach,
            budget_runs=args.budget_runs,
            budget_cost=args.budget_cost,
            shard_wait=args.shard_wait,
            on_stored=options.nightly_baseline,
        )
    )


def _check_contradictions(args: argparse.Namespace) -> None:
    """Refuse contradictory options of `evals run` before anything starts."""
    from evals.model.errors import SuiteError

    if args.resume and args.no_store:
        raise SuiteError(
            "--resume continues an evaluation from the store, and --no-store turns it off",
            fix="drop --no-store to resume, or drop --resume to run without a store",
        )
    options.check_executor(args)
    if args.until_decided and args.adaptive:
        raise SuiteError(
            "--until-decided and --adaptive are two designs of looks",
            fix="choose one: --adaptive looks after every batch and runs only open cases",
        )

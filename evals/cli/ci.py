"""`evals ci pr` and `evals ci nightly`: the two CI jobs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from evals.cli import options, values

if TYPE_CHECKING:
    from evals.cli.options import Commands
    from evals.model.ci import CiOutcome


def add_command(commands: Commands) -> None:
    """`evals ci pr`, `evals ci nightly` and their options."""
    ci = commands.add_parser(
        "ci", help="the CI jobs: a pull request's verdict, the nightly baseline"
    )
    jobs = ci.add_subparsers(dest="ci_command", required=True)
    _add_pr(jobs)
    _add_nightly(jobs)


def _add_pr(jobs: Commands) -> None:
    pr = jobs.add_parser(
        "pr", help="compare the pull request's agents with main's, gate, write the comment"
    )
    options.suite_path(pr)
    options.store(
        pr,
        help="baseline store, read only: the team's store through a read-only role, or the "
        "nightly's SQLite store artifact (never $EVALS_STORE_URL)",
    )
    pr.add_argument(
        "--base", metavar="REF", help="base branch (default origin/$GITHUB_BASE_REF, else main)"
    )
    options.agents(pr, help="compare this agent (default: changed ones)")
    options.repeat(pr, help="repeats per case and agent")
    pr.add_argument(
        "--effect",
        type=float,
        metavar="D",
        help="take the repeats the power plan needs to detect a difference D in pass rate",
    )
    pr.add_argument(
        "--max-repeats", type=values.positive, default=20, help="cap for --effect (default 20)"
    )
    options.until_decided(
        pr,
        help="run in stages of cumulative repeats (default 5,10,20) until the gates decide",
    )
    options.adaptive(pr)
    pr.add_argument(
        "--resume",
        action="store_true",
        help="go on with a stopped job: keep the scratch store in --out and run only the runs "
        "it lacks",
    )
    pr.add_argument(
        "--fresh-baseline",
        action="store_true",
        help="run main's agent fresh in the job, never from the nightly's stored runs or "
        "responses (also gates.environments.pr.reuse_baseline: false)",
    )
    options.seed(pr, help="seed salt (default: the nightly's)", default=None)
    options.evaluation_id(pr, help="id of the pull request's evaluation")
    pr.add_argument("--out", default=".evals/ci", help="output folder (default .evals/ci)")
    pr.add_argument("--nightly-branch", help="branch of the stored nightly (default: the base)")
    pr.add_argument("--report-url", help="link to the HTML report (default: the workflow run)")
    pr.add_argument(
        "--env-cache",
        metavar="DIR",
        help="where main's virtual environments are cached (default $EVALS_ENV_CACHE, else "
        "~/.cache/evals/envs)",
    )
    _add_run_limits(pr)
    pr.set_defaults(handler=_pr)


def _add_nightly(jobs: Commands) -> None:
    nightly = jobs.add_parser(
        "nightly", help="run or merge tonight's evaluation, store it, compare with last night"
    )
    options.suite_path(nightly)
    nightly.add_argument(
        "--shards",
        nargs="+",
        metavar="PATH",
        help="merge these shard stores or .json reports (or folders of them) instead of running",
    )
    nightly.add_argument(
        "--keep", type=values.positive, metavar="N", help="prune the store to N per suite"
    )
    options.evaluation_id(nightly, help="id of tonight's evaluation")
    nightly.add_argument("--out", default=".evals/nightly", help="output folder")
    options.repeat(nightly, help="repeats (default: the nightly's)")
    options.seed(nightly, help="seed salt")
    options.store(nightly)
    options.executor(nightly)
    _add_run_limits(nightly)
    nightly.set_defaults(handler=_nightly)


def _add_run_limits(job: argparse.ArgumentParser) -> None:
    """The options both jobs end with: runs in flight, each run's time, the summary."""
    options.concurrency(job)
    options.timeout(job)
    options.quiet(job)


def _pr(args: argparse.Namespace) -> int:
    """The pull-request job: main's agent against the pull request's, gated and reported."""
    from evals.ci.pr import PrOptions, run_pull_request

    outcome = run_pull_request(
        PrOptions(
            suite=Path(args.suite),
            out=Path(args.out),
            store=args.store,
            base=args.base,
            agents=args.agent,
            repeat=args.repeat,
            effect=args.effect,
            max_repeats=args.max_repeats,
            stages=args.until_decided,
            adaptive=args.adaptive,
            look_every=args.look_every,
            pass_reach=args.pass_reach,
            budget_runs=args.budget_runs,
            budget_cost=args.budget_cost,
            resume=args.resume,
            seed=args.seed,
            evaluation_id=args.evaluation_id,
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            nightly_branch=args.nightly_branch,
            report_url=args.report_url,
            env_cache=Path(args.env_cache) if args.env_cache else None,
            fresh_baseline=args.fresh_baseline,
        )
    )
    return _print_outcome(outcome, Path(args.out), args.quiet)


def _nightly(args: argparse.Namespace) -> int:
    """The nightly job: run or merge the suite, store the baseline, compare with last night."""
    from evals.ci.nightly import NightlyOptions, run_nightly

    options.check_executor(args)
    outcome = run_nightly(
        NightlyOptions(
            suite=Path(args.suite),
            store=args.store,
            shards=args.shards,
            out=Path(args.out),
            keep=args.keep,
            evaluation_id=args.evaluation_id,
            repeat=args.repeat,
            seed=args.seed,
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            executor=args.executor,
            ray_address=args.ray_address,
            pass_env=args.pass_env or None,
        )
    )
    return _print_outcome(outcome, Path(args.out), args.quiet)


def _print_outcome(outcome: CiOutcome, out: Path, quiet: bool) -> int:
    """The job's summary (unless `quiet`) and its one-line verdict; its exit code."""
    if not quiet:
        print((out / "summary.md").read_text(encoding="utf-8"))
    print(f"evals ci {outcome.kind}: {outcome.verdict}; reports in {out}", file=sys.stderr)
    return outcome.exit_code

"""The options several commands share, each defined once here: a command adds one with a
call (`options.env(parser)`), giving its own help text where the option means something
particular there. The values they take are checked by `evals.cli.values`. Beside them,
what those commands do alike with their arguments: refuse `--ray-address` without Ray,
name who acts (`--by`), and apply the nightly baseline rule to an evaluation they stored."""

from __future__ import annotations

import argparse
import getpass
import os
from typing import TYPE_CHECKING, TypeAlias

from evals.cli import values
from evals.model.defaults import DEFAULT_HTML_RUN_DETAILS, DEFAULT_STAGES, GATE_ENVIRONMENTS
from evals.reports.formats import output_help

if TYPE_CHECKING:
    from evals.model.evaluation import EvaluationResult

    Commands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
    """The `evals` command's subcommands, to which each command module adds its own."""


def suite_path(parser: argparse.ArgumentParser) -> None:
    """The suite to load: a file or a folder."""
    parser.add_argument("suite", help="suite YAML file or a directory holding promptfooconfig.yaml")


def suite_id(
    parser: argparse.ArgumentParser, help: str = "only this suite id", required: bool = False
) -> None:
    """`--suite ID`: a stored suite, by its id."""
    parser.add_argument("--suite", required=required, help=help)


def env(parser: argparse.ArgumentParser, help: str = "gate environment") -> None:
    """`--env`: the gate environment whose thresholds, tags and repeats apply."""
    parser.add_argument("--env", choices=list(GATE_ENVIRONMENTS), help=help)


def outputs(parser: argparse.ArgumentParser) -> None:
    """`-o FILE`: report files, their format from the suffix (repeatable); and how many
    runs the HTML report details."""
    parser.add_argument("-o", "--output", action="append", metavar="FILE", help=output_help())
    parser.add_argument(
        "--html-run-details",
        type=values.positive,
        metavar="N",
        help="the most runs the HTML report details; past it, the runs that did not pass "
        f"(default: the suite's reports.html_run_details, else {DEFAULT_HTML_RUN_DETAILS})",
    )


def store(
    parser: argparse.ArgumentParser,
    help: str = "results store (default: $EVALS_STORE_URL or sqlite:///.evals/results.db); "
    "postgresql+psycopg://... for teams",
) -> None:
    """`--store URL`: the results store."""
    parser.add_argument("--store", metavar="URL", help=help)


def quiet(parser: argparse.ArgumentParser, help: str = "do not print the summary") -> None:
    """`--quiet`: no summary on the terminal."""
    parser.add_argument("--quiet", "-q", action="store_true", help=help)


def repeat(parser: argparse.ArgumentParser, help: str) -> None:
    """`--repeat K`: runs per case and agent."""
    parser.add_argument("--repeat", "-r", type=values.positive, help=help)


def concurrency(
    parser: argparse.ArgumentParser,
    help: str = "runs in flight at once",
    default: int | None = None,
) -> None:
    """`--concurrency N`: how many calls are in flight at once."""
    parser.add_argument("--concurrency", "-j", type=values.positive, default=default, help=help)


def timeout(parser: argparse.ArgumentParser) -> None:
    """`--timeout SECONDS`: each run's time limit."""
    parser.add_argument("--timeout", type=values.seconds, metavar="SECONDS", help="per-run timeout")


def seed(parser: argparse.ArgumentParser, help: str, default: int | None = 0) -> None:
    """`--seed N`: the salt mixed into every run's seed."""
    parser.add_argument("--seed", type=int, default=default, help=help)


def evaluation_id(parser: argparse.ArgumentParser, help: str) -> None:
    """`--evaluation-id ID`: an evaluation's id, checked as the store holds it."""
    parser.add_argument("--evaluation-id", type=values.evaluation_id, help=help)


def agents(parser: argparse.ArgumentParser, help: str) -> None:
    """`--agent LABEL`: only these agents (repeatable)."""
    parser.add_argument("--agent", action="append", help=help)


def until_decided(parser: argparse.ArgumentParser, help: str) -> None:
    """`--until-decided [STAGES]`: repeats in stages until the gates decide."""
    parser.add_argument(
        "--until-decided",
        nargs="?",
        const=DEFAULT_STAGES,
        type=values.stages,
        metavar="STAGES",
        help=help,
    )


def adaptive(parser: argparse.ArgumentParser) -> None:
    """--adaptive and its looks, futility and caps (`evals run` and `evals ci pr`)."""
    parser.add_argument(
        "--adaptive",
        nargs="?",
        const=10,
        type=values.positive,
        metavar="MAX",
        help="look after every batch of repeats (up to MAX per case, default 10), stop once "
        "the gates are decided and run only cases an undetermined gate reads",
    )
    parser.add_argument(
        "--look-every",
        type=values.positive,
        default=2,
        metavar="N",
        help="with --adaptive: repeats per case between looks (default 2; the first look is "
        "after N repeats)",
    )
    parser.add_argument(
        "--pass-reach",
        type=float,
        metavar="R",
        help="with --adaptive: stop running for a gate once a pass lies more than R "
        "conditional standard deviations away by the last look (default: the futility reach, "
        "2); 0 saves calls by giving up passes that need a favourable run of data; a gate "
        "still stops only when failing lies beyond the futility reach",
    )
    parser.add_argument(
        "--budget-runs",
        type=values.positive,
        metavar="N",
        help="with --adaptive: never start a look that would take the runs past N "
        "(default: the environment's gates.budget_runs)",
    )
    parser.add_argument(
        "--budget-cost",
        type=float,
        metavar="AMOUNT",
        help="with --adaptive: never start a look whose projected cost would pass AMOUNT "
        "(default: the environment's gates.budget_cost)",
    )


def executor(parser: argparse.ArgumentParser) -> None:
    """`--executor`, `--ray-address`, `--pass-env`: where runs execute."""
    parser.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="where runs execute: this process (default) or a Ray cluster's workers",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="Ray cluster: auto, ray://HOST:10001 (default: a local Ray instance)",
    )
    parser.add_argument(
        "--pass-env",
        action="append",
        metavar="NAME",
        help="hand the environment variable NAME to the Ray workers (repeatable; with the "
        "suite's pass_env:); its value is never stored or logged",
    )


def check_executor(args: argparse.Namespace) -> None:
    """--ray-address only means something with --executor ray."""
    from evals.model.errors import SuiteError

    if args.ray_address and args.executor != "ray":
        raise SuiteError(
            "--ray-address names a Ray cluster, but runs execute in this process",
            fix="add --executor ray, or drop --ray-address",
        )


def actor(
    parser: argparse.ArgumentParser,
    help: str = "who (default: $EVALS_TRIAGE_ACTOR, else the user name)",
) -> None:
    """`--by NAME`: who records a triage action or accepts a baseline."""
    parser.add_argument("--by", help=help)


def actor_of(args: argparse.Namespace) -> str:
    """Who `--by` names, else $EVALS_TRIAGE_ACTOR, else the user's login name."""
    return str(args.by or os.environ.get("EVALS_TRIAGE_ACTOR") or getpass.getuser())


def nightly_baseline(result: EvaluationResult, store: str | None) -> str | None:
    """`evals ci nightly`'s baseline rule for a nightly evaluation `evals run` or `evals
    merge` stored (`evals.ci.nightly.stored_nightly_baseline`), imported only once the
    evaluation is stored."""
    from evals.ci.nightly import stored_nightly_baseline

    return stored_nightly_baseline(result, store)

"""`evals merge OUT SHARD...`: the shards of an evaluation merged into one, stored or
written as a report, and gated."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from evals.cli import options
from evals.model.errors import ExitCode
from evals.reports.formats import output_help

if TYPE_CHECKING:
    from evals.cli.options import Commands


def add_command(commands: Commands) -> None:
    """`evals merge` and its options."""
    merge = commands.add_parser("merge", help="merge the shards of an evaluation into one")
    merge.add_argument(
        "out",
        metavar="OUT",
        help=output_help("store to write (SQLite path or URL) or a report file"),
    )
    merge.add_argument(
        "shards",
        nargs="+",
        metavar="SHARD",
        help="shard results stores (SQLite files or URLs) or shard .json reports",
    )
    merge.add_argument("--suite", help="suite file (default: the one the shards ran)")
    options.evaluation_id(merge, help="merge only this evaluation's shards")
    options.outputs(merge)
    options.quiet(merge)
    merge.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Merge shard stores or shard `.json` reports into one evaluation; store it, gate it.

    An incomplete merge (shards missing) is stored and reported as incomplete, says so on
    stderr even with --quiet, and exits 3 whatever the gates say.
    """
    from evals.pipeline.finish import NOT_STORED, checked_outputs, finish
    from evals.pipeline.merge import merged_into
    from evals.reports.writers import is_report_path

    to_report = is_report_path(args.out)
    outputs = checked_outputs([args.out, *(args.output or [])] if to_report else args.output)
    if not to_report:
        from evals.store.location import check_store_settings

        check_store_settings(args.out, option="OUT")
    into = None if to_report else args.out
    with merged_into(
        args.shards, into, suite_path=args.suite, evaluation_id=args.evaluation_id
    ) as merged:
        result = merged.result
        if not to_report:
            print(
                f"stored evaluation {result.meta.id} ({result.meta.status}) in {args.out}",
                file=sys.stderr,
            )
            if merged.replaced:
                print(merged.replaced, file=sys.stderr)
        code = finish(
            result,
            outputs,
            quiet=args.quiet,
            html_run_details=args.html_run_details,
            store=NOT_STORED if to_report else args.out,
            on_stored=options.nightly_baseline,
        )
    if result.meta.status == "incomplete":
        for warning in result.gates.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        return int(ExitCode.HARNESS_FAULT)
    return code

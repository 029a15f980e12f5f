"""An evaluation's end on the command line: its report files written, its summary and
last block printed, and its exit code. `evals run`, `compare`, `merge` and `regrade` all
end here, whichever way their result was made."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evals.model.evaluation import EvaluationResult
    from evals.model.protocols import ReportSink, StoreSink
    from evals.model.suite import Suite
    from evals.reports.closing import Closing

NOT_STORED = "\0"
"""`finish`'s `store` when the evaluation went to no store (`--no-store`, a report file)."""

StoredHook = Callable[["EvaluationResult", str | None], str | None]
"""What a command does once its evaluation is in its store (`evals ci nightly`'s baseline
rule for a nightly evaluation): a sentence for the last block, or None."""


def checked_outputs(outputs: Sequence[str] | None) -> list[str]:
    """The `-o` files as absolute paths, each checked writable before any run, not after
    (an unknown format, a directory, a path under a file are exit 2)."""
    if not outputs:
        return []
    from evals.reports.writers import checked_report_path

    return [str(checked_report_path(out)) for out in outputs]


def streamed_reports(outputs: Sequence[str] | None) -> list[Path]:
    """The `-o` files written while the evaluation runs: promptfoo's JSON report."""
    from evals.reports.writers import find_format

    return [Path(out) for out in outputs or [] if getattr(find_format(out), "streamed", False)]


def report_settings(
    suite: Suite, html_run_details: int | None = None, runs_in_memory: int | None = None
) -> None:
    """The suite's `reports:` settings with the command line's (those not None) over them."""
    given = {
        name: value
        for name, value in (
            ("html_run_details", html_run_details),
            ("runs_in_memory", runs_in_memory),
        )
        if value is not None
    }
    if given:
        from dataclasses import replace

        suite.reports = replace(suite.reports, **given)


def finish(
    result: EvaluationResult,
    outputs: Sequence[str],
    *,
    quiet: bool = False,
    cache: bool = False,
    html_run_details: int | None = None,
    runs_in_memory: int | None = None,
    report_process: ReportSink | None = None,
    store_process: StoreSink | None = None,
    store: str | None = None,
    stored: bool = True,
    preface: str | None = None,
    on_stored: StoredHook | None = None,
) -> int:
    """Write the reports `outputs` (a report process finishes the JSON report it streamed,
    alongside the other reports and the terminal summary; `html_run_details` and
    `runs_in_memory` over the suite's `reports:` settings), print the summary unless
    `quiet`, the response cache's hits with `cache`, and the last block, and return the
    exit code. `store` is the `--store` value the evaluation was stored with (None:
    $EVALS_STORE_URL or the default; `NOT_STORED`: no store at all), or with `stored`
    false the store the compared evaluations came from; `preface` goes just before the
    last block, and so does what `on_stored` says once the evaluation is in its store.
    The store process is let go once the report is written: it closes the database while
    this process frees the evaluation's objects on its way out."""
    streamed = []
    if report_process is not None:  # written by its process while this one goes on
        report_process.send_finish(result)
        streamed = streamed_reports(outputs)
    # imported once the report process has its work: rich's import is part of the wait
    from evals.reports import write_report
    from evals.reports.terminal import render_body, render_closing, summary_console

    report_settings(result.suite, html_run_details, runs_in_memory)
    for out in outputs:
        if Path(out) not in streamed:
            write_report(Path(out), result)
    console = summary_console()
    if not quiet:
        render_body(result, console)
    if report_process is not None:
        report_process.await_finish()
    if store_process is not None:  # nothing more to store
        store_process.release()
    if on_stored is not None and stored and store != NOT_STORED:
        said = on_stored(result, store)
        preface = "\n".join(p for p in (preface, said) if p) or None
    for out in outputs:
        print(f"wrote {out}", file=sys.stderr)
    if cache:
        from evals.analysis.cells import run_facts
        from evals.run.cache import describe_hits

        print(describe_hits(run_facts(result).cache_hits), file=sys.stderr)
    sys.stderr.flush()
    if not quiet:
        render_closing(result, console, _closing(result, store, stored, preface))
    elif preface:
        print(preface)
    from evals.pipeline.verdict import exit_code

    return exit_code(result)


def _closing(
    result: EvaluationResult, store: str | None, stored: bool, preface: str | None
) -> Closing:
    """The last block's facts: the store (the `--store` value, else $EVALS_STORE_URL or
    the default), how to name it again, and promptfoo's rule for a suite without gates."""
    from evals.pipeline.verdict import rule_sentence
    from evals.reports.closing import Closing
    from evals.store.location import display_location, without_password

    rule = rule_sentence(result)
    if store == NOT_STORED:
        return Closing(rule=rule, preface=preface)
    return Closing(
        store=display_location(store),
        stored=stored,
        store_option=without_password(store) if store else None,
        rule=rule,
        preface=preface,
    )

"""`evals run` below its command line: the store and report processes started early, the
suite loaded, the evaluation run (at once, in stages until decided, or in adaptive looks;
with a stored baseline standing in where it may), then its reports, summary and exit code
(`evals.pipeline.finish`)."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from evals.pipeline.finish import (
    NOT_STORED,
    StoredHook,
    checked_outputs,
    finish,
    report_settings,
    streamed_reports,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evals.model.evaluation import EvaluationResult
    from evals.model.options import EvaluationState, RunOptions
    from evals.model.suite import Suite
    from evals.pipeline.reuse import Prepared
    from evals.reports.json_stream import ReportProcess
    from evals.store.process import StoreProcess


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What `evals run` is told: the suite (a file or a folder), the evaluation's
    `options` as the user set them, the `look` of an adaptive comparison this run is (its
    number recorded on each run: `evals ci pr` runs the base so), the report files
    `outputs` (`html_run_details` and `runs_in_memory` over the suite's `reports:`
    settings), whether to print the summary (`quiet`), whether a stored baseline may
    answer the baseline agent even where its fingerprint cannot see its code
    (`reuse_baseline`) or never (`fresh_baseline`), and how to look: `until_decided`
    (cumulative repeats per stage) or `adaptive` (the most repeats per case), looking every
    `look_every` repeats within `budget_runs` and `budget_cost`, with the pass side's
    futility reach `pass_reach`; a shard of an adaptive run waits at most `shard_wait`
    seconds for the other shards' runs at each look; `on_stored` is what to do once the
    evaluation is in the store (`evals.pipeline.finish.finish`)."""

    suite: str
    options: RunOptions
    look: int | None = None
    outputs: Sequence[str] = ()
    html_run_details: int | None = None
    runs_in_memory: int | None = None
    quiet: bool = False
    reuse_baseline: bool = False
    fresh_baseline: bool = False
    until_decided: tuple[int, ...] | None = None
    adaptive: int | None = None
    look_every: int = 2
    pass_reach: float | None = None
    budget_runs: int | None = None
    budget_cost: float | None = None
    shard_wait: float = 600.0
    on_stored: StoredHook | None = None


def run_suite(request: RunRequest) -> int:
    """Run a suite, write its reports, print the verdict, and return the exit code the
    gates (or promptfoo's rule) decide."""
    store_process = report_process = None
    options = request.options
    # A shard of an adaptive run reports the whole run, written once its last look is decided.
    streams = not (request.adaptive and options.shard) and bool(streamed_reports(request.outputs))
    if options.use_store:
        from evals.store.location import check_store_settings
        from evals.store.process import StoreProcess

        check_store_settings(options.store_url)
        # Started first, before this process imports what the suite and the reports need:
        # it starts up and opens the store on the other core meanwhile, and writes the JSON report
        # too when there is one.
        module = "evals.store.process"
        if streams:
            from evals.reports import STORE_WITH_REPORT as module
        store_process = StoreProcess(options.store_url, module=module)
    try:
        outputs = checked_outputs(request.outputs)
        if streams:
            from evals.reports.json_stream import ReportProcess

            report_process = ReportProcess(streamed_reports(outputs), store_process)
        return _run(replace(request, outputs=outputs), store_process, report_process)
    finally:
        for process in (report_process, store_process):
            if process is not None:
                process.close()


def _print_load_warnings(suite: Suite) -> None:
    """What `evals run` says once about a suite before running it (`evals validate` says
    it too, with its lint)."""
    from evals.suite.costs import unpriced_agents

    for warning in [*suite.notices, *suite.warnings, *unpriced_agents(suite)]:
        print(f"warning: {warning}", file=sys.stderr)


def _listing_reports(outputs: Sequence[str]) -> bool:
    """True when a report of `outputs` other than the streamed JSON lists every run."""
    return len(outputs) > len(streamed_reports(outputs))


def _run(
    request: RunRequest,
    store_process: StoreProcess | None,
    report_process: ReportProcess | None,
) -> int:
    from evals.model.options import EvaluationState
    from evals.pipeline.evaluation import run_evaluation
    from evals.suite import load_suite

    suite = load_suite(request.suite)
    _print_load_warnings(suite)
    report_settings(suite, request.html_run_details, request.runs_in_memory)
    listing = _listing_reports(request.outputs)
    options = replace(
        request.options,
        # reports read every run back from the store; without one, the runs are kept, and
        # a small evaluation's too (each report reads them once, not from the store again)
        keep_records=not request.options.use_store and listing,
        keep_records_below=suite.reports.runs_in_memory if listing else 0,
        store_process=store_process,
        report_process=report_process,
    )
    state = EvaluationState(look=request.look)
    with contextlib.ExitStack() as stack:
        reused = None
        if not request.fresh_baseline:
            from evals.pipeline.reuse import reused_baseline

            stages = request.until_decided
            most = request.adaptive or (stages[-1] if stages else None)
            reused = stack.enter_context(
                reused_baseline(
                    suite, options, most, asked=request.reuse_baseline, look=request.look
                )
            )
            if reused.note and reused.reuse is None and not request.quiet:
                print(reused.note, file=sys.stderr)
            options = reused.options
            state = replace(state, baseline_reuse=reused.reuse)
        if request.adaptive:
            return _run_adaptive(suite, options, state, request, reused)
        if request.until_decided:
            return _run_staged(suite, options, state, request, reused)
        result = run_evaluation(suite, options, state=state)
        return _finish(request, options, result, _reuse_settled(result, reused))


def _finish(
    request: RunRequest, options: RunOptions, result: EvaluationResult, preface: str | None
) -> int:
    """`finish` with the run's reports, its store (or none with `--no-store`) and its
    processes."""
    return finish(
        result,
        request.outputs,
        quiet=request.quiet,
        cache=request.options.cache,  # asked for: a reused baseline answers through it too
        html_run_details=request.html_run_details,
        runs_in_memory=request.runs_in_memory,
        report_process=options.report_process,
        store_process=options.store_process,
        store=options.store_url if options.use_store else NOT_STORED,
        preface=preface,
        on_stored=request.on_stored,
    )


def _reuse_settled(
    result: EvaluationResult, reused: Prepared | None, repeats: int | None = None
) -> str | None:
    """The stored baseline's part in `result` (its gates' report says it too), in words,
    against `repeats` repeats (else the run's) of every agent run fresh; None when no
    stored baseline was looked for."""
    if reused is None or reused.reuse is None:
        return None
    from evals.analysis.cells import run_facts

    reuse = reused.settled(run_facts(result).cache_hits, repeats or result.repeat)
    result.gates.reuse = reuse
    if reuse is None:
        return None
    return "\n".join(line for line in (reuse.headline(), reuse.calls_line()) if line)


def _run_adaptive(
    suite: Suite,
    options: RunOptions,
    state: EvaluationState,
    request: RunRequest,
    reused: Prepared | None,
) -> int:
    """`run --adaptive`: look after every batch, run only cases that can still decide;
    with a stored baseline standing in, the candidate's repeats of each case follow the
    baseline's history (`evals.gates.baseline.allocation`)."""
    from evals.pipeline.adaptive import design_for, run_adaptive

    assert request.adaptive is not None
    config = suite.gates.for_environment(options.environment)
    design = design_for(
        config,
        request.adaptive,
        request.look_every,
        request.pass_reach,
        request.budget_runs,
        request.budget_cost,
    )
    if reused is not None and reused.reuse is not None and not reused.reuse.fell_back:
        from evals.gates.baseline import allocation

        planned = allocation(reused.history, design.last, maximum=design.last)
        state = replace(state, allocation={c: n / design.last for c, n in planned.items()})
    adaptive = run_adaptive(suite, options, design, request.shard_wait, state)
    settled = _reuse_settled(adaptive.result, reused, design.last)
    preface = "\n".join(p for p in (settled, adaptive.describe()) if p)
    return _finish(request, options, adaptive.result, preface)


def _run_staged(
    suite: Suite,
    options: RunOptions,
    state: EvaluationState,
    request: RunRequest,
    reused: Prepared | None,
) -> int:
    """`run --until-decided`: add stages of repeats until the gates are decided."""
    from evals.pipeline.staged import run_until_decided

    assert request.until_decided is not None
    staged = run_until_decided(suite, options, request.until_decided, state)
    settled = _reuse_settled(staged.result, reused, request.until_decided[-1])
    preface = "\n".join(p for p in (settled, staged.describe()) if p)
    return _finish(request, options, staged.result, preface)

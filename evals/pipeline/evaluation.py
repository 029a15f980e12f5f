"""One evaluation end to end: plan, run, store, analyse, gate.

The CLI, the benchmark and the tests all go through `run_evaluation`, so what a user
runs is what is tested. Data flows one way: suite -> plan -> runner -> grades -> store ->
stats -> gates; reports are written by the caller from the returned result.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.analysis.cells import Tally, TallyRules
from evals.common.blas import idle_blas_threads_asleep
from evals.gates.adaptive import settle
from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.gates import GateConfig
from evals.model.options import EvaluationState, RunOptions
from evals.model.plan import PlannedRun
from evals.model.protocols import ReportSink, StoreSink, Tracer
from evals.model.results import RunRecord
from evals.model.suite import Suite, SuiteOutline
from evals.model.summary import BaselineReuse, GateReport, Summary
from evals.model.triage import TriageAction
from evals.plan.runs import build_plan, count_plan, plan_size_warning, refuse_empty_plan
from evals.run.conversation import promptfoo_order, suite_runs_in_order, suite_uses_conversation
from evals.store.stored_runs import StoredRuns
from evals.tracing import run_tracer
from evals.tracing.redact import Redactor

if TYPE_CHECKING:
    from evals.analysis.agreement import Agreement


# The most runs a plan may hold when it must be listed before the first run starts.
LISTED_PLAN_LIMIT = 10_000_000


def _refuse_oversized_listed_plan(suite: Suite, runs: int) -> None:
    """A plan that must be listed up front is refused past LISTED_PLAN_LIMIT runs, before
    anything is stored, rather than exhausting memory while it is built."""
    if runs > LISTED_PLAN_LIMIT:
        raise SuiteError(
            f"this evaluation plans {runs:,} runs, and a plan with group assertions "
            f"(max-score, select-best), _conversation prompts (run in promptfoo's order), "
            f"or adaptive looks is listed before its "
            f"first run: at most {LISTED_PLAN_LIMIT:,} runs",
            file=str(suite.path),
            fix="lower repeat (or --repeat), select fewer cases, or split the suite",
        )


class PlanAgain:
    """A streamed plan that can be read more than once, built anew at each reading (a Ray
    job reads it once for the agents it calls, then for its runs): never listed."""

    def __init__(self, build: Callable[[], Iterator[PlannedRun]]) -> None:
        self.build = build

    def __iter__(self) -> Iterator[PlannedRun]:
        """The plan's runs, from the first."""
        return self.build()


def git_info(cwd: Path) -> tuple[str | None, str | None]:
    """(commit, branch) of the repository holding the suite, from CI variables or git."""
    commit = os.environ.get("GITHUB_SHA") or os.environ.get("CI_COMMIT_SHA")
    branch = os.environ.get("GITHUB_HEAD_REF") or os.environ.get("GITHUB_REF_NAME")
    if commit is None or branch is None:
        try:
            answer = subprocess.run(
                ["git", "rev-parse", "HEAD", "--abbrev-ref", "HEAD"],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=5,
            )
        except (OSError, subprocess.SubprocessError):
            return commit, branch
        lines = answer.stdout.split() if answer.returncode == 0 else []
        if len(lines) == 2:
            commit, branch = commit or lines[0], branch or lines[1]
    return commit, branch


def new_meta(suite: Suite, options: RunOptions, repeat: int) -> EvaluationMeta:
    """Fresh metadata for an evaluation of `suite` with `options`; its config holds the
    effective gate configuration of the environment (`config.gates`).

    `ci_event` is GitHub's event name when the evaluation runs in GitHub Actions.
    """
    commit, branch = git_info(suite.root)
    agents = [
        p.label for p in suite.providers if options.agents is None or p.label in options.agents
    ]
    meta = EvaluationMeta(
        id=options.evaluation_id or uuid.uuid4().hex[:12],
        suite_id=suite.suite_id,
        suite_version=suite.version,
        fingerprint=suite.fingerprint,
        description=suite.description,
        environment=options.environment,
        git_commit=commit,
        git_branch=options.branch or branch,
        started_at=time.time(),
        agents=agents,
        config={
            "repeat": repeat,
            "seed": options.seed,
            "tags": options.tags,
            "cases": options.case_ids,
            "suite_path": str(suite.path),
            "gates": suite.gates.for_environment(options.environment).to_dict(),
        },
        shard=f"{options.shard[0]}/{options.shard[1]}" if options.shard else None,
        outline=suite.outline().to_dict(),
        agent_fingerprints={
            label: fp for label, fp in suite.agent_fingerprints.items() if label in agents
        },
        ci_event=os.environ.get("GITHUB_EVENT_NAME") or None,
    )
    # every field is stored and reported: the outline's cases, tags and metadata, the
    # description, may hold what a suite read through {{ env.X }}
    masked: EvaluationMeta = Redactor(secrets=suite.secrets).scrub(meta)
    return masked


def analyse(
    suite: Suite | SuiteOutline,
    records: Tally | Iterable[RunRecord],
    gate_config: GateConfig,
    environment: str | None,
    judge: Agreement | None = None,
    spend: float | None = None,
    quarantines: Sequence[TriageAction] | Callable[[], Sequence[TriageAction]] = (),
    now: float | None = None,
    reuse: BaselineReuse | None = None,
) -> tuple[Summary, GateReport]:
    """Statistics and gate decisions for a set of records (also used on stored runs), or
    for the tally an evaluation counted them in.

    `judge` is the judge's measured agreement for the judge gates (see measure_judge);
    `spend` the build's false-failure budget for this decision (a staged run's look);
    `quarantines` the triage quarantines the gates honour at `now`, or a function that
    gives them, called once the statistics are computed (the store process looks them up
    meanwhile); `reuse` the stored baseline standing in for the baseline, whose reserve
    the gates reading stored runs keep (`evals.gates.decide.decide`).
    """
    from evals.analysis.summarize import summarize
    from evals.gates.decide import decide

    summary = summarize(records, suite, gate_config)
    held = quarantines() if callable(quarantines) else quarantines
    return summary, decide(summary, gate_config, environment, judge, spend, held, now, reuse)


def stored_result(
    suite: Suite,
    store_url: str,
    evaluation_id: str,
    environment: str | None,
    now: float | None = None,
) -> EvaluationResult:
    """A stored evaluation of `suite` analysed again from its stored runs, with the gate
    configuration of `environment` and the gates decided as at `now`. The runs are read
    a batch at a time into the analysis's counts; the reports read them from the store."""
    from evals.store import open_store

    gate_config = suite.gates.for_environment(environment)
    tally = Tally(TallyRules.of(gate_config))
    store = open_store(store_url, read_only=True)
    try:
        meta = store.get_evaluation(evaluation_id)
        if meta is None:
            raise SuiteError(f"the store holds no evaluation {evaluation_id}")
        tally.add_all(store.iter_runs(evaluation_id))
    finally:
        store.close()
    summary, gates = analyse(suite, tally, gate_config, environment, now=now)
    repeat = int(meta.config.get("repeat") or 1)
    runs = StoredRuns(store_url, evaluation_id)
    return EvaluationResult(
        suite, meta, [], summary, gates, gate_config, repeat, tally.facts(), runs, tally
    )


def allocated(
    plan: Iterable[PlannedRun], allocation: dict[str, float], candidate: str | None, repeat: int
) -> Iterator[PlannedRun]:
    """`plan` with the candidate's runs of each case capped at its share of `repeat`
    repeats (rounded up): the other agents' runs, and cases without a share, as planned."""
    for run in plan:
        share = allocation.get(run.case.id)
        capped = run.key.agent == candidate and share is not None
        if not capped or run.key.repeat < math.ceil((share or 0.0) * repeat):
            yield run


def suite_judge(suite: Suite, options: RunOptions, gate_config: GateConfig) -> Agreement | None:
    """The judge's measured agreement for the judge gates of `gate_config` (None without
    one): the calibration's modules load only for a judge gate."""
    if not gate_config.judge_calibration:
        return None
    from evals.pipeline.calibration import measure_judge

    suite_grader = (suite.default_test.get("options") or {}).get("provider")
    return measure_judge(gate_config, suite.root, options.grader or suite_grader)


def run_evaluation(
    suite: Suite,
    options: RunOptions,
    previous: EvaluationResult | None = None,
    state: EvaluationState | None = None,
) -> EvaluationResult:
    """Run a suite and return its graded, analysed and gated result.

    Records are written to the store as they complete; with `resume`, runs already in
    the store are not run again, so an interrupted evaluation ends with exactly one row
    per planned run. With `previous` (an earlier result of the same suite and options)
    the evaluation goes on: same id and store rows, its records kept, and only the
    repeats from `previous.repeat` up to this run's repeat are planned, which is how
    staged runs add repeats. `state` is where a driver of several passes (staged, adaptive,
    a stored baseline, a pull request's comparison) stands: `state.spend`, when set, is the
    share of the build's false-failure budget the gates may spend on this look. Neither the
    options nor the state is changed: the evaluation's own choices (its tags, repeats,
    concurrency) are derived here once.
    """
    from evals.grade.groups import has_group_assertions, refuse_shards

    if state is None:
        state = EvaluationState()
    refuse_shards(suite, options.shard)
    from evals.run.executors import check_executor

    check_executor(options.executor, suite, options.pass_env)
    gate_config = suite.gates.for_environment(options.environment)
    if options.grader:
        from evals.agents.registry import check_grader
        from evals.graders.judge import apply_grader

        check_grader(options.grader, suite.root)
        apply_grader(suite.cases, suite.default_test, options.grader)
    judge = suite_judge(suite, options, gate_config)
    tags = options.chosen_tags(gate_config.tags)
    repeat = options.repeat
    if repeat is None:
        repeat = gate_config.repeat or suite.evaluate_options.repeat
    concurrency = options.concurrency
    if concurrency is None:
        concurrency = suite.evaluate_options.max_concurrency
    if suite.evaluate_options.delay_ms > 0:
        concurrency = 1  # promptfoo runs one call at a time when a delay is asked between calls
    conversation = suite_runs_in_order(suite)
    if conversation and concurrency > 1:
        if options.progress:
            why = (
                "the _conversation variable" if suite_uses_conversation(suite) else "storeOutputAs"
            )
            print(f"setting concurrency to 1 because {why} is used", file=sys.stderr)
        concurrency = 1
    timeout_s = options.timeout_s
    if timeout_s is None and suite.evaluate_options.timeout_ms:
        timeout_s = suite.evaluate_options.timeout_ms / 1000.0
    filters: dict[str, Any] = {
        "tags": tags,
        "case_ids": options.case_ids,
        "agents": options.agents,
        "shard": options.shard,
    }
    if previous is None:
        refuse_empty_plan(
            suite,
            repeat,
            **filters,
            tags_from=(
                "--tag"
                if options.names_cases
                else f"the tags of environment {options.environment!r}"
            ),
        )
        warning = plan_size_warning(count_plan(suite, repeat, **filters), repeat)
        if warning is not None:
            print(f"warning: {warning}", file=sys.stderr)

    def selection(repeats: int, repeat_start: int = 0) -> Iterator[PlannedRun]:
        return build_plan(suite, repeats, **filters, repeat_start=repeat_start, salt=options.seed)

    def count(repeats: int, start: int) -> int:
        return count_plan(suite, repeats, **filters, repeat_start=start)

    repeat_start = previous.repeat if previous is not None else 0
    # The plan streams to the executor (a billion repeats are never made at once; a Ray
    # job reads it twice, built anew each time), except where every run must be known
    # first: adaptive looks, groups, the promptfoo order of a `_conversation` suite.
    streams = (
        state.active_cases is None
        and state.units is None
        and state.allocation is None
        and not conversation
        and not any(has_group_assertions(case) for case in suite.cases)
    )
    if not streams:
        _refuse_oversized_listed_plan(suite, count(repeat, repeat_start))

    def planned_runs() -> Iterator[PlannedRun]:
        plan = selection(repeat, repeat_start=repeat_start)
        if conversation:
            plan = iter(promptfoo_order(list(plan)))  # listed once: it is not streamed
        if state.active_cases is not None:
            plan = (run for run in plan if run.case.id in state.active_cases)
        if state.units is not None:
            units = state.units
            plan = (run for run in plan if (run.case.id, run.key.repeat) in units)
        if state.allocation is not None:
            plan = allocated(plan, state.allocation, gate_config.candidate, repeat)
        if state.look is not None:
            plan = (replace(run, look=state.look) for run in plan)
        return plan

    # Adaptive looks read their runs again; every other evaluation counts its runs as they
    # arrive (`Tally`) and keeps them only when the caller asks (`keep_records`), or when
    # there are few enough of them (`keep_records_below`).
    adaptive = state.look is not None or state.active_cases is not None
    small = options.keep_records_below > 0 and count(repeat, 0) < options.keep_records_below
    keep = options.keep_records or adaptive or small
    records: list[RunRecord] = []
    tally = _tally(previous, gate_config)
    store = _store_process(options)
    try:
        stored: list[RunRecord] = []
        if previous is not None:
            meta, is_new = previous.meta, False
            meta.config["repeat"] = repeat
            records.extend(previous.records)
            earlier_runs = previous.meta.stored_runs or len(previous.records)
        else:
            meta, stored, is_new = _begin(suite, replace(options, tags=tags), repeat)
            meta.config["repeat"] = repeat
            earlier_runs = len(stored)
            for record in stored:
                if keep:
                    records.append(record)
                if not adaptive and record.key.repeat < repeat:
                    tally.add(record)
        done = {r.key.as_tuple() for r in stored}
        if previous is not None:
            done.update(r.key.as_tuple() for r in previous.records)
        look_plan: list[PlannedRun] = []
        planned: Iterable[PlannedRun]
        if streams:
            planned = PlanAgain(lambda: (r for r in planned_runs() if r.key.as_tuple() not in done))
            pending = count(repeat, repeat_start) - sum(1 for k in done if k[3] >= repeat_start)
        else:
            look_plan = list(planned_runs())
            planned = [run for run in look_plan if run.key.as_tuple() not in done]
            pending = len(planned)
        del stored
        if store is not None:  # opened by the store process while the report's plan is made
            store.post_begin(meta, create=is_new)
        sinks = _sinks(suite, meta, records, store, options.report_process)
        # a report written by the store process keeps it busy after the last run, and the
        # harness waits for it then: the statistics load in that wait instead of competing
        # with the runs for this process's time
        report = options.report_process
        statistics_after_runs = report is not None and report.rides(store)
        if not statistics_after_runs:
            _load_statistics_meanwhile(gate_config)
        if store is not None:  # an unusable store stops the evaluation before any run
            store.confirm()
        with run_tracer(suite, meta, options.trace) as tracer:
            try:
                executed = asyncio.run(
                    _execute(
                        suite,
                        planned,
                        pending,
                        _Keeper(records if keep else None, None if adaptive else tally),
                        sinks,
                        meta,
                        options,
                        concurrency,
                        timeout_s,
                        tracer,
                    )
                )
            except KeyboardInterrupt:
                _mark_interrupted(meta, store)
                raise
            except Exception:
                # a fault (a full disk, a failing store or cache): what was stored stays,
                # marked interrupted so `--resume` continues it; never left `running`
                with contextlib.suppress(Exception):
                    _mark_interrupted(meta, store)
                raise
            meta.ended_at = time.time()
            if state.active_cases is None:
                meta.planned_runs = count(repeat, 0)
            else:  # an adaptive look: the runs of earlier looks and this look's runs
                earlier = sum(1 for r in records if r.key.repeat < repeat_start)
                meta.planned_runs = earlier + len(look_plan)
            meta.stored_runs = earlier_runs + executed
            meta.status = "complete" if meta.stored_runs >= meta.planned_runs else "incomplete"
            with tracer.evaluation_span("gates"):
                now = time.time()
                # asked now, read after the statistics: the store process stores the last
                # runs and looks the quarantines up while this process computes them
                held = store.quarantines(suite.suite_id, now) if store else ()
                if statistics_after_runs:
                    _load_statistics_meanwhile(gate_config)
                if adaptive:  # a resumed look sees only the repeats up to it, never later ones
                    tally = Tally.of((r for r in records if r.key.repeat < repeat), gate_config)
                summary, gates = analyse(
                    suite,
                    tally,
                    gate_config,
                    options.environment,
                    judge,
                    state.spend,
                    held,
                    now,
                    state.baseline_reuse,
                )
                gates.reuse = state.baseline_reuse
            if state.look is not None:
                frozen = state.frozen_gates or {}
                gates = settle(gates, frozen, state.look, repeat, tally.runs, state.futile)
        if store is not None:
            store.finish(meta, summary, gates)
    finally:
        if store is not None and store is not options.store_process:
            store.close()
    runs = StoredRuns(options.store_url, meta.id) if options.use_store else None
    return EvaluationResult(
        suite,
        meta,
        records,
        summary,
        gates,
        gate_config,
        repeat,
        facts=tally.facts(),
        runs=runs,
        counts=tally,
    )


def _tally(previous: EvaluationResult | None, gate_config: GateConfig) -> Tally:
    """The counts an evaluation starts from: a staged run's previous stage's, else none."""
    if previous is None:
        return Tally(TallyRules.of(gate_config))
    if isinstance(previous.counts, Tally):
        return previous.counts
    return Tally.of(previous.records, gate_config)


class _Keeper:
    """Where each completed run goes in this process: counted in the tally, and kept in
    `records` when the caller keeps them."""

    def __init__(self, records: list[RunRecord] | None, tally: Tally | None) -> None:
        self.records = records
        self.tally = tally

    def take(self, record: RunRecord) -> None:
        """Count (and keep) one run."""
        if self.tally is not None:
            self.tally.add(record)
        if self.records is not None:
            self.records.append(record)


def _mark_interrupted(meta: EvaluationMeta, store: StoreSink | None) -> None:
    """After a stop signal: store the runs that completed and mark the evaluation
    `interrupted` (resumable), deaf to a second Ctrl-C meanwhile."""
    from evals.common.interrupts import signals_held

    meta.status = "interrupted"
    meta.ended_at = time.time()
    if store is None:
        return
    with signals_held():
        store.interrupted(meta)


def _sinks(
    suite: Suite,
    meta: EvaluationMeta,
    records: list[RunRecord],
    store: StoreSink | None,
    report: ReportSink | None,
) -> list[Any]:
    """Where completed runs go: the store process, and the JSON report (on board the store
    process, or in a process of its own which the store's batches are teed to, so each
    run is encoded once)."""
    if report is None:
        return [] if store is None else [store]
    if not report.begun:
        report.begin(suite, meta)
        if records:  # runs stored before (a resumed evaluation) belong in the report too
            report.add_group(records)
    if store is None:
        return [report]
    if not report.rides(store):
        store.tee(report.receive)
    return [store]


def store_gates(options: RunOptions, result: EvaluationResult) -> None:
    """Store `result`'s gate report again, over the one its evaluation ended with: an
    adaptive run adds its summary once the last look is decided."""
    store = _store_process(options)
    if store is None:
        return
    try:
        store.begin(result.meta, create=False)
        store.finish(result.meta, result.summary, result.gates)
    finally:
        if store is not options.store_process:
            store.close()


def _store_process(options: RunOptions) -> Any:
    """The process storing this evaluation's runs: the caller's, a new one, or none."""
    if not options.use_store:
        return None
    if options.store_process is not None:
        return options.store_process
    from evals.store.process import StoreProcess

    return StoreProcess(options.store_url)


def _begin(
    suite: Suite, options: RunOptions, repeat: int
) -> tuple[EvaluationMeta, list[RunRecord], bool]:
    """The evaluation's metadata, its runs already stored, and whether it is new.

    Only a resume reads the store here; a new evaluation is created by the store process.
    """
    if options.use_store and options.resume:
        from evals.store import open_store

        resume_id = options.resume if isinstance(options.resume, str) else None
        store = open_store(options.store_url)
        try:
            try:
                meta = store.find_resumable(
                    suite.suite_id, suite.fingerprint, resume_id, suite.agent_fingerprints
                )
            except ValueError as exc:
                raise SuiteError(
                    str(exc), fix="run without --resume to start a new evaluation"
                ) from None
            if meta is not None:
                return meta, store.load_runs(meta.id), False
            if resume_id is not None:
                raise _unknown_resume(store, suite, resume_id)
        finally:
            store.close()
        print(
            f"nothing to resume for suite {suite.suite_id}: no interrupted evaluation of "
            "this suite and these agents; starting a new evaluation",
            file=sys.stderr,
        )
    return new_meta(suite, options, repeat), [], True


def _unknown_resume(store: Any, suite: Suite, resume_id: str) -> SuiteError:
    """--resume ID names no stored evaluation: the error lists what could be resumed."""
    unfinished = [
        e.id
        for e in store.list_evaluations(suite_id=suite.suite_id, limit=None)
        if e.status != "complete"
    ]
    if unfinished:
        shown = ", ".join(unfinished[:10]) + (", ..." if len(unfinished) > 10 else "")
        fix = f"resume one of {shown} (--resume alone takes the latest), or drop --resume"
    else:
        fix = f"suite {suite.suite_id} has no evaluation to resume: run without --resume"
    return SuiteError(f"--resume {resume_id}: the store holds no evaluation {resume_id}", fix=fix)


async def _execute(
    suite: Suite,
    planned: Iterable[PlannedRun],
    pending: int,
    keeper: _Keeper,
    sinks: list[Any],
    meta: EvaluationMeta,
    options: RunOptions,
    concurrency: int,
    timeout_s: float | None,
    tracer: Tracer,
) -> int:
    """Run `planned`, each completed run to `keeper` and `sinks`; returns how many ran."""
    from evals.run.cache import DEFAULT_CACHE_PATH
    from evals.run.executors import build_executor

    executor = build_executor(
        options.executor,
        suite,
        meta=meta,
        concurrency=concurrency,
        timeout_s=timeout_s,
        tracer=tracer,
        trace=options.trace,
        cache_path=Path(options.cache_path or Path.cwd() / DEFAULT_CACHE_PATH)
        if options.cache
        else None,
        ray_address=options.ray_address,
        pass_env=options.pass_env,
    )
    from evals.run.progress import Progress

    progress = Progress(total=pending, enabled=options.progress)
    from evals.grade.groups import OutputGroups

    groups = OutputGroups(suite, planned if isinstance(planned, list) else [])
    deciding: list[asyncio.Future[None]] = []

    executed = 0

    async def store_group(members: list[RunRecord]) -> None:
        nonlocal executed
        decided = await groups.decide(members)
        for record in decided:
            keeper.take(record)
        executed += len(decided)
        for sink in sinks:
            sink.add_group(decided)

    def on_record(record: RunRecord) -> None:
        nonlocal executed
        if groups.holds(record):
            complete = groups.add(record)
            if complete is not None:
                deciding.append(asyncio.ensure_future(store_group(complete)))
        else:
            keeper.take(record)
            executed += 1
            for sink in sinks:
                sink.add(record)
        progress.advance(record)

    try:
        await executor.run(planned, on_record)
        await asyncio.gather(*deciding)
    finally:
        progress.close()
    return executed


def _load_statistics_meanwhile(gate_config: GateConfig) -> None:
    """Import the statistics' numerical part (numpy: 60-90 ms of CPU) in a background
    thread, started while this process waits: for the store process to open the store
    (the import then goes on while the runs do, which mostly wait on agents and on the
    store process), or for the store process to catch up after the last run, so the
    analysis does not start with the import. Only when the analysis will need it: when it
    compares a baseline with a candidate (the paired bootstrap and the exact tests); an
    evaluation of single agents uses closed-form statistics alone."""
    if gate_config.baseline is None or gate_config.candidate is None:
        return
    if "evals.stats.bootstrap" in sys.modules:
        return
    threading.Thread(
        target=_import_quietly,
        args=("evals.stats.bootstrap",),
        name="evals-load-statistics",
        daemon=True,
    ).start()


def _import_quietly(module: str) -> None:
    """Import `module` ahead of need; a failure is left for the import that needs it
    (which raises it where it can be reported), not printed from a background thread.
    numpy loads with OpenBLAS's idle threads asleep (`idle_blas_threads_asleep`)."""
    with contextlib.suppress(Exception), idle_blas_threads_asleep():
        importlib.import_module(module)

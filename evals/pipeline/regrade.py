"""Regrading: a stored evaluation's responses graded again by the suite's current graders.

`evals regrade EVAL_ID` re-applies a suite's current graders and gates to the responses
stored with an evaluation, without calling any agent, and stores the result as a new
evaluation that names its source.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Iterable, Iterator

from evals.analysis.cells import Tally, TallyRules
from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationResult
from evals.model.options import RunOptions
from evals.model.plan import PlannedRun
from evals.model.results import RunKey, RunRecord
from evals.model.suite import Suite
from evals.store.stored_runs import StoredRuns


class _Plan:
    """Where each stored run sits in `suite`'s plan today: its case, prompt and agent (one
    planned run per case, prompt and agent; a repeat changes none of what grading reads)."""

    def __init__(self, suite: Suite) -> None:
        from evals.plan.runs import build_plan

        self.runs = {run.key.as_tuple()[:3]: run for run in build_plan(suite, 1)}

    def find(self, key: RunKey) -> PlannedRun | None:
        """The planned run of `key`, or None when the suite no longer runs it (its case,
        prompt or agent is gone, or the case runs fewer repeats of its own now)."""
        from evals.plan.runs import case_repeat

        run = self.runs.get(key.as_tuple()[:3])
        if run is None or key.repeat >= case_repeat(run.case, key.repeat + 1):
            return None
        return run


def _kept_keys(keys: Iterable[tuple[str, str, str, int]], plan: _Plan) -> tuple[int, int, set[str]]:
    """Over the stored run keys (read a batch at a time, none kept): how many there are,
    and of those the suite still runs, the repeats they reach and their agents."""
    stored, repeat, agents = 0, 0, set()
    for key in keys:
        stored += 1
        if plan.find(RunKey(*key)):
            repeat = max(repeat, key[3] + 1)
            agents.add(key[2])
    return stored, repeat, agents


def _dropped_warning(dropped: int) -> list[str]:
    if not dropped:
        return []
    return [f"{dropped} stored run(s) match no case of the suite and were left out"]


def _regraded(suite: Suite, run: PlannedRun, record: RunRecord) -> RunRecord:
    """One stored run graded again as `run` of the suite today."""
    from evals.common.transforms import TransformError
    from evals.grade.grading import AssertionRaised, grade_case
    from evals.run.runner import transformed_output

    if record.status == "error" and record.error_kind != "grader_error":
        return record
    run = dataclasses.replace(run, case=dataclasses.replace(run.case, vars=dict(record.vars)))
    try:
        output = transformed_output(run, record.response.output, suite.root)
        grade = grade_case(
            run.case,
            record.response,
            output=output,
            prompt=record.prompt,
            latency_ms=record.latency_ms,
            latency_source=suite.gates.latency,
            suite_root=suite.root,
            agent=run.provider.label,
            provider_config=run.provider.config,
            provider_id=run.provider.id,
            suite_config=suite.raw,
        )
    except (TransformError, AssertionRaised) as exc:
        return dataclasses.replace(
            record,
            case_index=run.case.index,
            prompt_index=run.prompt_index,
            agent_index=run.agent_index,
            status="error",
            grade=exc.grade if isinstance(exc, AssertionRaised) else None,
            error=exc.message if isinstance(exc, AssertionRaised) else exc.row_error,
            error_kind="grader_error",
        )
    return dataclasses.replace(
        record,
        case_index=run.case.index,
        prompt_index=run.prompt_index,
        agent_index=run.agent_index,
        status="pass" if grade.passed else "fail",
        grade=grade,
        error=None,
        error_kind=None,
    )


def _regraded_cases(
    suite: Suite, plan: _Plan, records: Iterable[RunRecord]
) -> Iterator[list[RunRecord]]:
    """`records` (each case's runs together) graded again by `suite`'s current assertions,
    a case at a time.

    Runs that errored stay as they were (there is no response to grade), but for those a
    grader failed, which are graded again (their response is stored); runs of a case
    or agent the suite no longer has are left out (the caller warns). Group assertions
    (max-score, select-best) are decided again over each case and repeat's regraded runs.
    """
    from evals.grade.groups import decide_groups

    for _case, runs in itertools.groupby(records, key=lambda r: r.key.case_id):
        found = [_regraded(suite, run, r) for r in runs if (run := plan.find(r.key))]
        if found:
            yield decide_groups(suite, found)


def regrade(
    store_url: str | None, evaluation_id: str, suite_path: str | None = None
) -> EvaluationResult:
    """Grade a stored evaluation's responses again and store the result as a new evaluation.

    The suite is `suite_path`, else the file the evaluation ran. The new evaluation keeps
    the source's environment, commit and branch (the agents ran there) and names the
    source in `config.regraded_from`. Returns its `EvaluationResult`, with people's
    annotations of the source's runs (the runs graded again).
    """
    from evals.pipeline.evaluation import analyse, new_meta
    from evals.store import open_store
    from evals.suite import load_suite
    from evals.team.triage import annotations_of

    store = open_store(store_url)
    try:
        source = store.get_evaluation(evaluation_id)
        if source is None:
            raise SuiteError(
                f"the store has no evaluation {evaluation_id!r}", fix="see `evals history`"
            )
        path = suite_path or source.config.get("suite_path")
        if not path:
            raise SuiteError("cannot find the suite of the evaluation", fix="pass --suite PATH")
        suite = load_suite(path)
        plan = _Plan(suite)
        stored, repeat, agents = _kept_keys(store.iter_keys(evaluation_id), plan)
        meta = new_meta(suite, RunOptions(environment=source.environment), repeat)
        meta.git_commit, meta.git_branch = source.git_commit, source.git_branch
        meta.agents = sorted(agents, key=suite.agent_labels.index)
        meta.config = {**meta.config, "regraded_from": evaluation_id}
        store.create_evaluation(meta)
        gate_config = suite.gates.for_environment(source.environment)
        tally = Tally(TallyRules.of(gate_config))
        for records in _regraded_cases(suite, plan, store.iter_runs(evaluation_id, "cases")):
            store.add_runs(meta.id, records)
            tally.add_all(records)
        summary, gates = analyse(suite, tally, gate_config, source.environment)
        gates.warnings.extend(_dropped_warning(stored - tally.runs))
        meta.status = "complete"
        meta.ended_at = time.time()
        store.finish_evaluation(meta, summary, gates)
        annotations = annotations_of(store, [evaluation_id], time.time())
    finally:
        store.close()
    return EvaluationResult(
        suite,
        meta,
        [],
        summary,
        gates,
        gate_config,
        repeat,
        facts=tally.facts(),
        runs=StoredRuns(store_url, meta.id),
        counts=tally,
        annotations=annotations,
    )

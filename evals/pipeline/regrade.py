"""Regrading: a stored evaluation's responses graded again by the suite's current graders.

`evals regrade EVAL_ID` re-applies a suite's current graders and gates to the responses
stored with an evaluation, without calling any agent, and stores the result as a new
evaluation that names its source.
"""

from __future__ import annotations

import dataclasses
import time

from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationResult
from evals.model.options import RunOptions
from evals.model.results import RunRecord
from evals.model.suite import Suite


def regrade_records(suite: Suite, records: list[RunRecord]) -> tuple[list[RunRecord], list[str]]:
    """`records` graded again by `suite`'s current assertions; plus warnings.

    Runs that errored stay as they were (there is no response to grade), but for those a
    grader failed, which are graded again (their response is stored); runs of a case
    or agent the suite no longer has are dropped with a warning. Group assertions
    (max-score, select-best) are decided again over each case and repeat's regraded runs.
    """
    from evals.common.transforms import TransformError
    from evals.grade.grading import AssertionRaised, grade_case
    from evals.plan.runs import build_plan
    from evals.run.runner import transformed_output

    repeat = max((r.key.repeat for r in records), default=-1) + 1
    plan = {run.key.as_tuple(): run for run in build_plan(suite, repeat)}
    regraded: list[RunRecord] = []
    dropped = 0
    for record in records:
        run = plan.get(record.key.as_tuple())
        if run is None:
            dropped += 1
            continue
        if record.status == "error" and record.error_kind != "grader_error":
            regraded.append(record)
            continue
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
            regraded.append(
                dataclasses.replace(
                    record,
                    case_index=run.case.index,
                    prompt_index=run.prompt_index,
                    agent_index=run.agent_index,
                    status="error",
                    grade=exc.grade if isinstance(exc, AssertionRaised) else None,
                    error=exc.message if isinstance(exc, AssertionRaised) else exc.row_error,
                    error_kind="grader_error",
                )
            )
            continue
        regraded.append(
            dataclasses.replace(
                record,
                case_index=run.case.index,
                prompt_index=run.prompt_index,
                agent_index=run.agent_index,
                status="pass" if grade.passed else "fail",
                grade=grade,
                error=None,
                error_kind=None,
            )
        )
    from evals.grade.groups import decide_groups

    warnings = [f"{dropped} stored run(s) match no case of the suite and were left out"]
    return decide_groups(suite, regraded), warnings if dropped else []


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
    from evals.pipeline.triage import annotations_of
    from evals.store import open_store
    from evals.suite import load_suite

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
        records, warnings = regrade_records(suite, store.load_runs(evaluation_id))
        repeat = max((r.key.repeat for r in records), default=-1) + 1
        meta = new_meta(suite, RunOptions(environment=source.environment), repeat)
        meta.git_commit, meta.git_branch = source.git_commit, source.git_branch
        meta.agents = sorted({r.key.agent for r in records}, key=suite.agent_labels.index)
        meta.config = {**meta.config, "regraded_from": evaluation_id}
        store.create_evaluation(meta)
        store.add_runs(meta.id, records)
        gate_config = suite.gates.for_environment(source.environment)
        summary, gates = analyse(suite, records, gate_config, source.environment)
        gates.warnings.extend(warnings)
        meta.status = "complete"
        meta.ended_at = time.time()
        store.finish_evaluation(meta, summary, gates)
        annotations = annotations_of(store, [evaluation_id], time.time())
    finally:
        store.close()
    return EvaluationResult(
        suite, meta, records, summary, gates, gate_config, repeat, annotations=annotations
    )

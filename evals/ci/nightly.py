"""`evals ci nightly`: tonight's evaluation of main, stored as the baseline, and its drift.

The nightly runs the whole suite (itself, or as shards that `evals run --shard` ran in a
job matrix and this command merges), records environment `nightly` and the branch the
trusted event names, stores the evaluation in the team's store (or a SQLite history
pruned to the newest `keep` evaluations, so a store carried from night to night stays
bounded), and compares its candidate agent with the previous complete nightly of the
branch. Whatever shards finished are merged: with some missing, the evaluation is stored
as `incomplete` (never a baseline) and the job exits 3 after reporting.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from evals.ci.outputs import (
    error_outcome,
    exit_code,
    overall_verdict,
    undetermined_note,
    write_job_files,
    write_outputs,
    write_result_reports,
)
from evals.ci.provenance import CiContext, ci_context
from evals.model.ci import CiOutcome
from evals.model.errors import ExitCode, HarnessFault, SuiteError
from evals.model.evaluation import EvaluationResult
from evals.model.options import RunOptions
from evals.model.suite import Suite
from evals.model.summary import GateResult
from evals.pipeline.evaluation import git_info, run_evaluation
from evals.pipeline.history import Side, agents_of, compare_sides, latest_nightly
from evals.store.stored_runs import StoredRuns
from evals.team.triage import case_actions

SHARD_PATTERNS = ("*.db", "*.json")


@dataclass(slots=True)
class NightlyOptions:
    """What `evals ci nightly` is told: the suite, the shards (if any), the store.

    `shards` are shard stores or `.json` reports, or folders holding them. `keep` prunes
    the store to the newest evaluations of each suite after storing tonight's.
    `executor`, `ray_address` and `pass_env` run tonight's runs on a Ray cluster.
    """

    suite: Path
    store: str | None = None
    shards: list[str] | None = None
    out: Path = Path(".evals/nightly")
    keep: int | None = None
    evaluation_id: str | None = None
    repeat: int | None = None
    seed: int = 0
    concurrency: int | None = None
    timeout_s: float | None = None
    executor: str = "local"
    ray_address: str | None = None
    pass_env: list[str] | None = None


def shard_files(paths: list[str]) -> list[str]:
    """The shard stores and reports among `paths`, folders expanded (sorted)."""
    found: list[str] = []
    for path in paths:
        folder = Path(path)
        if "://" in path or not folder.is_dir():
            found.append(path)
            continue
        found += sorted(
            str(p) for pattern in SHARD_PATTERNS for p in folder.rglob(pattern) if p.is_file()
        )
    return found


def _branch(context: CiContext, suite: Suite) -> str | None:
    if context.event is not None:
        return context.branch
    return git_info(suite.root)[1]


def _tonight(
    options: NightlyOptions, suite: Suite, branch: str | None, context: CiContext
) -> tuple[EvaluationResult, list[str]]:
    """Tonight's evaluation, run or merged from the shards and stored, and notes on the
    shards merged (attempts, an earlier attempt's evaluation replaced)."""
    if options.shards is None:
        result = run_evaluation(
            suite,
            RunOptions(
                repeat=options.repeat,
                concurrency=options.concurrency,
                timeout_s=options.timeout_s,
                environment="nightly",
                store_url=options.store,
                progress=False,
                evaluation_id=options.evaluation_id,
                seed=options.seed,
                branch=branch,
                executor=options.executor,
                ray_address=options.ray_address,
                pass_env=options.pass_env,
                keep_records=False,  # counted as they arrive; the reports read the store
            ),
        )
        return result, []
    from evals.pipeline.merge import merge_shards

    sources = shard_files(options.shards)
    if not sources:
        raise SuiteError(
            f"no shard finished: nothing in {', '.join(options.shards)}",
            fix="look at the shard jobs' logs; rerun the nightly",
        )
    merged = merge_shards(
        sources,
        store_url=options.store,
        suite_path=str(options.suite),
        evaluation_id=options.evaluation_id,
        environment="nightly",
        branch=branch,
        ci_event=context.event,
    )
    result = merged.result
    shards = ", ".join(result.meta.config.get("merged_shards") or [])
    notes = [f"merged shard(s) {shards} of evaluation `{result.meta.id}`"]
    notes += result.meta.config.get("shard_attempts") or []
    return result, notes + ([merged.replaced] if merged.replaced else [])


def _against_previous_night(
    store_url: str | None, suite: Suite, tonight: EvaluationResult, branch: str
) -> tuple[EvaluationResult | None, str]:
    """Tonight's candidate agent against the baseline of the branch: the newest nightly
    that is a baseline (`Store.baselines`), never one the gates did not choose."""
    from evals.store import open_store

    store = open_store(store_url)
    try:
        previous = latest_nightly(store, tonight.meta, branch)
        kept = "the same suite version"
        if previous is None:
            previous = latest_nightly(store, tonight.meta, branch, any_suite_version=True)
            kept = "another suite version: compared on the cases both share"
        if previous is None:
            return None, f"no baseline of {branch} yet to compare with"
        meta = store.get_evaluation(previous.id)
        assert meta is not None
        agents = set(agents_of(store, previous.id)) & set(agents_of(store, tonight.meta.id))
    finally:
        store.close()
    config = suite.gates.for_environment("nightly")
    agent = config.candidate if config.candidate in agents else min(agents, default=None)
    if agent is None:
        return None, f"nightly `{previous.id}` ran none of tonight's agents"
    result = compare_sides(
        suite,
        Side(meta, meta.suite_outline(), [], agent, StoredRuns(store_url, previous.id)),
        Side(tonight.meta, suite.outline(), [], agent, StoredRuns(store_url, tonight.meta.id)),
        config,
        "nightly",
        allow_suite_change=True,
        labels=(f"{agent}@baseline", f"{agent}@tonight"),
    )
    return result, f"compared with the baseline `{previous.id}` ({kept})"


# Gates that say whether tonight regressed against the baseline.
REGRESSION_GATES = ("regression", "p0_regressions")


def _is_regression_gate(gate: GateResult) -> bool:
    return gate.blocking and gate.name.split("[", 1)[0] in REGRESSION_GATES


def baseline_decision(
    tonight: EvaluationResult, drift: EvaluationResult | None
) -> tuple[bool, str]:
    """Whether tonight becomes the baseline, and why: its own gates passed (the build's
    rule), and against the baseline no regression gate failed nor stayed undetermined on
    a drop beyond its tolerance."""
    if tonight.meta.status != "complete":
        return False, f"it is {tonight.meta.status}"
    if not tonight.gates.passed:
        names = [g.name for g in tonight.gates.gates if g.blocking and g.status != "pass"]
        return False, f"its own gates did not pass ({', '.join(names)})"
    if drift is None:
        return True, "its gates passed; there was no baseline to compare with"
    against = drift.meta.config.get("baseline_evaluation")
    failed = [g for g in drift.gates.gates if _is_regression_gate(g) and g.status == "fail"]
    if failed:
        shown = ", ".join(_measured(g) for g in failed)
        return False, f"it regressed against the baseline `{against}`: {shown}"
    dropped = [
        g
        for g in drift.gates.gates
        if _is_regression_gate(g)
        and g.status == "undetermined"
        and g.measured is not None
        and g.threshold is not None
        and g.measured < g.threshold
    ]
    if dropped:
        shown = ", ".join(_measured(g) for g in dropped)
        return False, (
            f"a drop against the baseline `{against}` beyond the tolerance stayed "
            f"undetermined: {shown}"
        )
    return True, f"its gates passed and it did not regress against the baseline `{against}`"


def _measured(gate: GateResult) -> str:
    if gate.measured is None or gate.name.startswith("p0"):
        return gate.name
    return f"{gate.name} {gate.measured * 100:+.1f} pp"


def _choose_baseline(
    store_url: str | None,
    tonight: EvaluationResult,
    drift: EvaluationResult | None,
    name: str = "tonight's",
) -> str:
    """Record whether tonight is the baseline from now on, and say so (with how to accept
    it when it is not); `name` calls the evaluation in that sentence."""
    from evals.store import open_store

    chosen, reason = baseline_decision(tonight, drift)
    meta = tonight.meta
    store = open_store(store_url)
    try:
        if meta.status == "complete":
            store.record_baseline_decision(meta.id, chosen, reason)
        current = store.baselines(meta.suite_id, branch=meta.git_branch)
    finally:
        store.close()
    if chosen:
        return f"baseline: {name} `{meta.id}` is the baseline from now on ({reason})"
    kept = f"`{current[0].id}` stays the baseline" if current else "there is no baseline yet"
    accept = (
        f"; if the change is intended, `evals baseline accept {meta.id} --reason ...` makes "
        "it the baseline"
        if meta.status == "complete"
        else ""
    )
    return f"baseline: {name} `{meta.id}` is NOT the baseline ({reason}); {kept}{accept}"


def stored_nightly_baseline(result: EvaluationResult, store_url: str | None) -> str | None:
    """The baseline rule of `evals ci nightly` for a nightly evaluation another command
    stored (`evals run --env nightly`, `evals merge` of nightly shards): compared from the
    store with its branch's baseline, it becomes the baseline only when its gates passed and
    it did not regress, and the decision is recorded; the sentence saying so. None for an
    evaluation of another environment, or one that can never be a baseline (incomplete, a
    shard, a pull request's, regraded)."""
    from evals.store.baselines import ineligible_reason

    if result.meta.environment != "nightly" or ineligible_reason(result.meta) is not None:
        return None
    branch = result.meta.git_branch or "main"
    drift, _ = _against_previous_night(store_url, result.suite, result, branch)
    return _choose_baseline(store_url, result, drift, "nightly evaluation")


def run_nightly(options: NightlyOptions, context: CiContext | None = None) -> CiOutcome:
    """Do the nightly job: run or merge, store, prune, compare with the baseline, choose, report.

    Refused on pull-request events: a nightly is a baseline, and a pull request must not
    write one. Writes `summary.md` (and the job summary), `ci.json`, and
    `nightly.{html,junit.xml,json}` and `against-baseline.{...}` into `options.out`. A job
    stopped by an error writes the summary and `ci.json` saying what went wrong and what
    to do, then raises it (exit 2 or 3).
    """
    context = context or ci_context()
    try:
        return _nightly_job(options, context)
    except Exception as error:
        outcome = error_outcome("nightly", str(options.suite), error, context.run_url)
        write_outputs(outcome, options.out, names=[])
        raise


def set_aside_if_damaged(store: str | None) -> str | None:
    """Move a SQLite history that fails its check out of the way (renamed beside it), so
    tonight starts a new one instead of failing every night; a sentence saying so. A
    damaged PostgreSQL store is a fault the team must see (HarnessFault)."""
    if not store:
        return None
    from evals.store.integrity import check_store
    from evals.store.location import sqlite_file

    path = sqlite_file(store) if "://" in store else Path(store)
    if path is not None and not path.exists():
        return None
    checked = check_store(store)
    if checked.ok:
        return None
    if path is None:
        raise HarnessFault(f"the store failed its check: {checked.detail}")
    aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
    path.rename(aside)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    return (
        f"the history store failed its check ({checked.detail}): set aside as `{aside.name}`; "
        "tonight starts a new history, so tonight is compared with no earlier nightly"
    )


def _nightly_job(options: NightlyOptions, context: CiContext) -> CiOutcome:
    from evals.suite import load_suite

    if context.is_pull_request:
        raise SuiteError(
            f"evals ci nightly stores a baseline and does not run on {context.event} events",
            fix="run it on schedule, push or workflow_dispatch; pull requests use evals ci pr",
        )
    suite = load_suite(options.suite)
    branch = _branch(context, suite)
    damaged = set_aside_if_damaged(options.store)
    tonight, merged = _tonight(options, suite, branch, context)
    meta = tonight.meta
    notes = [
        *([damaged] if damaged else []),
        f"evaluation `{meta.id}` of branch `{branch or 'unknown'}` stored in the store "
        + _where(options.store),
        *merged,
    ]
    if meta.status == "incomplete":
        notes.append(
            f"INCOMPLETE: {meta.stored_runs} of {meta.planned_runs} planned runs; stored as "
            "incomplete, it is never chosen as a baseline"
        )
    else:
        notes.append(f"complete: {meta.stored_runs} of {meta.planned_runs} planned runs")
    results = [tonight]
    drift, note = _against_previous_night(options.store, suite, tonight, branch or "main")
    notes.append(note)
    if drift is not None:
        results.append(drift)
    key_notes = [_choose_baseline(options.store, tonight, drift)]
    names = ["nightly", "against-baseline"][: len(results)]
    # the reports read the runs from the store: written before pruning may delete them
    write_result_reports(results, options.out, names)
    if options.keep:
        from evals.store import open_store

        store = open_store(options.store)
        try:
            pruned = store.prune(options.keep)
        finally:
            store.close()
        notes.append(
            f"history kept to the newest {options.keep} evaluation(s) per suite "
            f"({len(pruned)} pruned)"
        )
    undetermined = undetermined_note(results)
    if undetermined:
        notes.append(undetermined)
    verdict = overall_verdict(results)
    if meta.status == "incomplete":
        code, verdict = int(ExitCode.HARNESS_FAULT), "incomplete"
    else:
        code = exit_code(results)
    now = time.time()
    outcome = CiOutcome(
        kind="nightly",
        suite_id=suite.suite_id,
        verdict=verdict,
        exit_code=int(code),
        results=results,
        notes=[*key_notes, *notes],
        title=f"`{suite.suite_id}` on `{branch or 'unknown'}`, environment nightly",
        run_url=context.run_url,
        key_notes=key_notes,
        case_triage=case_actions(options.store, suite.suite_id, now),
        decided_at=now,
    )
    write_job_files(outcome, options.out)
    return outcome


def _where(store: str | None) -> str:
    """The store in words, without credentials."""
    if not store:
        return "(default)"
    if "://" in store and "@" in store:
        scheme, rest = store.split("://", 1)
        return f"`{scheme}://…@{rest.rsplit('@', 1)[1]}`"
    return f"`{store}`"

"""Combining the shards of one evaluation into the evaluation an unsharded run gives.

`evals run --shard i/n --evaluation-id ID` runs every n-th planned run; seeds derive from
(suite, case, agent, repeat), so the union of the shards is run for run what a single
process would have run. Shards arrive as results stores (each shard's SQLite file) or as
the `.json` reports they wrote. Merging keeps one record per run key, re-indexes every
record against the suite's plan, recomputes statistics and gates over the union, and
stores the result as one unsharded evaluation.

Inputs that are not shards of one evaluation are refused, naming the input: an
unsharded evaluation, shards of different evaluations, suites, agent code, shard counts
or plans. When shards are missing (a shard job failed), the shards at hand are merged
and the evaluation is stored as `incomplete`, with its planned and stored run counts: it
is reported, but never chosen as a baseline.

A shard given more than once (a CI job re-run: the shards of the first attempt and the
re-run shard of the second, all of one evaluation id) is merged from its newest attempt
(the one that started last), and the notes say so; merging into a store that holds the
evaluation an earlier attempt merged replaces it.

Merging holds no list of runs: the shards' runs are read a batch at a time, each shard in
the order of a case's runs (`RUN_ORDERS["cases"]`), merged into one stream in that order,
counted into the evaluation's tally and written to the target store as they pass; the
reports read them back from there. Only a shard given as a `.json` report is read whole
(the file is one JSON document), one such shard at a time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
import json
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from evals.analysis.cells import Tally, TallyRules
from evals.model.errors import SuiteError
from evals.model.evaluation import (
    EvaluationMeta,
    EvaluationResult,
    RunOrder,
    RunSource,
    run_order_key,
)
from evals.model.plan import PlannedRun
from evals.model.results import AgentResponse, Grade, RunKey, RunRecord
from evals.model.suite import Suite
from evals.model.trajectory import Step
from evals.pipeline.evaluation import analyse
from evals.plan.runs import build_plan, case_repeat, count_plan
from evals.store.stored_runs import StoredRuns

# Runs written to the target store per transaction.
_BATCH = 500


@dataclasses.dataclass(frozen=True, slots=True)
class ListedRuns:
    """The runs of a shard read whole (a `.json` report), as a `RunSource`."""

    records: list[RunRecord]

    def iter_runs(self, order: RunOrder = "plan") -> Iterator[RunRecord]:
        """The runs in `order` of the indices they hold."""
        return iter(sorted(self.records, key=run_order_key(order)))


@dataclasses.dataclass(slots=True)
class Shard:
    """One shard's evaluation metadata, where its runs are and how many, and the input
    they came from."""

    meta: EvaluationMeta
    runs: RunSource
    count: int
    source: str = ""

    def run_keys(self) -> Iterator[tuple[str, str, str, int]]:
        """`RunKey.as_tuple()` of each of the shard's runs, read a batch at a time."""
        if isinstance(self.runs, StoredRuns):
            from evals.store import open_store

            store = open_store(self.runs.url, read_only=True)
            try:
                yield from store.iter_keys(self.runs.evaluation_id)
            finally:
                store.close()
        elif isinstance(self.runs, ListedRuns):
            yield from (record.key.as_tuple() for record in self.runs.records)


def _epoch(text: str | None) -> float | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def record_from_row(row: dict[str, Any]) -> RunRecord:
    """The run a promptfoo-format result row was written from (indices are set later)."""
    details = row["metadata"]["evals"]
    raw = row.get("response") or {}
    response = AgentResponse(
        output=raw.get("output"),
        error=raw.get("error"),
        token_usage=dict(raw.get("tokenUsage") or {}),
        cost=raw.get("cost"),
        metadata=dict(raw.get("metadata") or {}),
        trajectory=[Step.from_dict(step) for step in details.get("trajectory") or []],
        stop_reason=details.get("stopReason"),
        finish_reason=raw.get("finishReason"),
        latency_ms=None if raw.get("latencyMs") is None else float(raw["latencyMs"]),
        cached=bool(raw.get("cached")),
        log_probs=raw.get("logProbs"),
    )
    status = details["status"]
    grading = row.get("gradingResult")
    return RunRecord(
        key=RunKey(details["promptId"], details["caseId"], details["agent"], details["repeat"]),
        case_index=0,
        prompt_index=0,
        agent_index=0,
        seed=details["seed"],
        prompt=row["prompt"]["raw"],
        vars=row.get("vars") or {},
        response=response,
        status=status,
        grade=Grade.from_dict(grading) if grading else None,
        error=row.get("error") if status == "error" else None,
        error_kind=details.get("errorKind"),
        latency_ms=float(details.get("wallLatencyMs", row.get("latencyMs")) or 0.0),
        started_at=details.get("startedAt") or 0.0,
        ended_at=details.get("endedAt") or 0.0,
        metadata={"cost_unknown": details["costUnknown"]} if "costUnknown" in details else {},
    )


def read_json_shard(path: Path) -> Shard:
    """A shard from the promptfoo-format `.json` report `evals run -o` wrote; anything
    else (unreadable, not JSON, another report) is a SuiteError naming the file."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _not_a_report(path, str(exc)) from None
    section = document.get("evals") if isinstance(document, dict) else None
    if not isinstance(section, dict):
        raise _not_a_report(path, "it has no evals section")
    try:
        return _json_shard(path, document, section)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise _not_a_report(path, f"its evals section lacks or garbles {exc}") from None


def _not_a_report(path: Path, why: str) -> SuiteError:
    return SuiteError(
        f"{path} is not a report written by `evals run -o FILE.json` ({why})",
        fix="merge the .json reports (or stores) that `evals run --shard I/N` wrote",
    )


def _json_shard(path: Path, document: dict[str, Any], section: dict[str, Any]) -> Shard:
    suite = section["suite"]
    meta = EvaluationMeta(
        id=section["evaluationId"],
        suite_id=suite["id"],
        suite_version=suite.get("version"),
        fingerprint=suite["fingerprint"],
        description=suite.get("description") or "",
        environment=section.get("environment"),
        git_commit=section["git"].get("commit"),
        git_branch=section["git"].get("branch"),
        started_at=_epoch(section.get("startedAt")) or 0.0,
        ended_at=_epoch(section.get("endedAt")),
        agents=list(section.get("agents") or []),
        config={
            "repeat": section.get("repeat"),
            "suite_path": suite.get("path"),
            **(section.get("selection") or {}),
        },
        status=section.get("status") or "complete",
        shard=section.get("shard"),
        agent_fingerprints=dict(section.get("agentFingerprints") or {}),
    )
    records = [record_from_row(row) for row in document["results"]["results"]]
    return Shard(meta, ListedRuns(records), len(records), str(path))


def _not_a_shard(source: str, meta: EvaluationMeta) -> SuiteError:
    return SuiteError(
        f"{source} holds evaluation {meta.id}, which ran unsharded: there is nothing to merge",
        fix="merge the stores (or .json reports) of `evals run --shard I/N` runs",
    )


def read_store_shard(url: str, evaluation_id: str | None) -> list[Shard]:
    """The shard evaluations a store holds (the one named, or every sharded one).

    A store that holds no shard of the evaluation is refused, naming what it holds.
    """
    from evals.store import open_store
    from evals.store.location import resolve_url, sqlite_file

    database = sqlite_file(resolve_url(url, option="SHARD"))
    if database is not None and not database.is_file():
        raise SuiteError(f"shard store {url} does not exist", fix="check the shard paths")
    store = open_store(url, read_only=True)
    try:
        if evaluation_id is not None:
            metas = [m for m in [store.get_evaluation(evaluation_id)] if m is not None]
        else:
            metas = store.list_evaluations(limit=None)
        shards = [m for m in metas if m.shard is not None]
        if not shards and metas:
            raise _not_a_shard(url, metas[0])
        return [
            Shard(meta, StoredRuns(url, meta.id), sum(1 for _ in store.iter_keys(meta.id)), url)
            for meta in shards
        ]
    finally:
        store.close()


def read_shards(sources: list[str], evaluation_id: str | None = None) -> list[Shard]:
    """Shards from `.json` reports and results stores (SQLite paths or store URLs)."""
    shards: list[Shard] = []
    for source in sources:
        if "://" not in source and not Path(source).is_file():
            raise SuiteError(f"{source} does not exist", fix="check the shard paths")
        if source.endswith(".json") and "://" not in source:
            shard = read_json_shard(Path(source))
            if shard.meta.shard is None:
                raise _not_a_shard(source, shard.meta)
            if evaluation_id is None or shard.meta.id == evaluation_id:
                shards.append(shard)
        else:
            shards.extend(read_store_shard(source, evaluation_id))
    if not shards:
        raise SuiteError(
            "no shard evaluation found in the given files"
            + (f" for evaluation {evaluation_id}" if evaluation_id else ""),
            fix="check the paths and the evaluation id",
        )
    return shards


def _shard_count(meta: EvaluationMeta) -> int:
    return int(str(meta.shard).split("/")[1])


# What every shard of one evaluation has in common, and how to say it.
_IDENTITY: tuple[tuple[str, Any], ...] = (
    ("evaluation id", lambda m: m.id),
    ("suite", lambda m: m.suite_id),
    ("suite fingerprint", lambda m: m.fingerprint),
    ("shard count", _shard_count),
    ("agent fingerprints", lambda m: sorted(m.agent_fingerprints.items())),
    ("repeats", lambda m: m.config.get("repeat")),
    ("seed", lambda m: m.config.get("seed") or 0),
    ("tags", lambda m: m.config.get("tags")),
    ("cases", lambda m: m.config.get("cases")),
)


def check_shards(shards: list[Shard]) -> None:
    """Refuse shards that are not parts of one evaluation, naming the inputs that differ."""
    for what, value in _IDENTITY:
        values = [value(s.meta) for s in shards]
        if any(v != values[0] for v in values):
            listed = "; ".join(
                f"{s.source or s.meta.id}: shard {s.meta.shard} has {v}"
                for s, v in zip(shards, values, strict=True)
            )
            raise SuiteError(
                f"the shards differ in {what}, so they are not parts of one evaluation: {listed}",
                fix="merge the shards of one `evals run --shard I/N --evaluation-id ID` "
                "(same suite, agents and options), or pass --evaluation-id",
            )


def _shard_index(meta: EvaluationMeta) -> int:
    return int(str(meta.shard).split("/")[0])


def newest_attempts(shards: list[Shard]) -> tuple[list[Shard], list[str]]:
    """One input per shard, the newest attempt of each (the one that started last), and
    a note for every shard given more than once."""
    by_index: dict[int, list[Shard]] = {}
    for shard in shards:
        by_index.setdefault(_shard_index(shard.meta), []).append(shard)
    kept: list[Shard] = []
    notes: list[str] = []
    for index in sorted(by_index):
        attempts = sorted(by_index[index], key=lambda s: (s.meta.started_at, s.source))
        newest = attempts[-1]
        kept.append(newest)
        if len(attempts) > 1:
            others = ", ".join(s.source or s.meta.id for s in attempts[:-1])
            notes.append(
                f"shard {newest.meta.shard}: {len(attempts)} attempts, the newest merged "
                f"({newest.source or newest.meta.id}, {newest.count} runs); "
                f"left out: {others}"
            )
    return kept, notes


def missing_shards(shards: list[Shard]) -> list[str]:
    """The shards (`i/n`) of the evaluation that no input holds."""
    count = _shard_count(shards[0].meta)
    present = {int(str(s.meta.shard).split("/")[0]) for s in shards}
    return [f"{i}/{count}" for i in range(1, count + 1) if i not in present]


def merged_meta(shards: list[Shard]) -> EvaluationMeta:
    """The metadata of the evaluation the shards make up together."""
    first = shards[0].meta
    ended = [s.meta.ended_at for s in shards]
    agents = list(dict.fromkeys(a for s in shards for a in s.meta.agents))
    return dataclasses.replace(
        first,
        started_at=min(s.meta.started_at for s in shards),
        ended_at=None if None in ended else max(e for e in ended if e is not None),
        agents=agents,
        config={
            **first.config,
            "merged_shards": sorted({str(s.meta.shard) for s in shards}),
        },
        status="complete",
        shard=None,
    )


class _Places:
    """Where each run of the suite's plan sits (case, prompt and agent indices), looked up
    by run key: one planned run per case, prompt and agent, and the repeats each case runs,
    so a plan of a million runs is never listed."""

    def __init__(self, suite: Suite, repeat: int) -> None:
        self.repeat = repeat
        self.runs = {run.key.as_tuple()[:3]: run for run in build_plan(suite, 1)}

    def find(self, key: tuple[str, str, str, int]) -> PlannedRun | None:
        """The planned run of `key` (its repeat aside), or None when the plan has no such run."""
        run = self.runs.get(key[:3])
        if run is None or not 0 <= key[3] < case_repeat(run.case, self.repeat):
            return None
        return run

    def place(self, record: RunRecord) -> RunRecord:
        """`record` indexed by the suite's plan."""
        run = self.runs[record.key.as_tuple()[:3]]
        return dataclasses.replace(
            record,
            case_index=run.case.index,
            prompt_index=run.prompt_index,
            agent_index=run.agent_index,
        )


def _refuse_unplanned(places: _Places, shards: list[Shard]) -> None:
    """Refuse shards holding runs the suite's plan lacks, before anything is stored."""
    unknown = 0
    first: tuple[str, str, str, int] | None = None
    for shard in shards:
        for key in shard.run_keys():
            if places.find(key) is None:
                unknown += 1
                first = first or key
    if unknown:
        raise SuiteError(
            f"{unknown} run(s) of the shards are not in the suite's plan, e.g. {first}",
            fix="merge with the suite the shards ran (--suite PATH)",
        )


def merged_runs(places: _Places, shards: list[Shard]) -> Iterator[RunRecord]:
    """One run per run key, indexed by the suite's plan, each case's runs of one agent
    together: every shard read a batch at a time in that order and merged. A key two
    shards hold is taken from the first shard given."""
    order = run_order_key("cases")
    streams = [(places.place(r) for r in s.runs.iter_runs("cases")) for s in shards]
    previous = None
    for record in heapq.merge(*streams, key=order):
        key = record.key.as_tuple()
        if key != previous:
            previous = key
            yield record


def merge_records(suite: Suite, shards: list[Shard], repeat: int) -> list[RunRecord]:
    """One record per run key, indexed by the suite's plan and in plan order (every run in
    memory: for a caller that keeps the runs)."""
    places = _Places(suite, repeat)
    _refuse_unplanned(places, shards)
    return sorted(merged_runs(places, shards), key=run_order_key("plan"))


@dataclasses.dataclass(slots=True)
class Merged:
    """A merge's outcome: the evaluation, stored, and a sentence when it replaced the
    evaluation an earlier attempt had merged into the same store."""

    result: EvaluationResult
    replaced: str | None = None


def merge_shards(
    sources: list[str],
    *,
    store_url: str | None,
    suite_path: str | None = None,
    evaluation_id: str | None = None,
    environment: str | None = None,
    branch: str | None = None,
    ci_event: str | None = None,
    keep: bool = False,
) -> Merged:
    """The evaluation the shards in `sources` make up, analysed, gated and stored in
    `store_url` as it is merged (no run is held: the reports read them from there).

    With shards missing, the evaluation is `incomplete` and a warning says which shards
    and how many planned runs are missing. `environment` replaces the shards' own;
    `branch` and `ci_event`, when given, the shards' branch and event. An evaluation of
    the same id an earlier attempt merged into the store is replaced (`Merged.replaced`
    says so); a shard of it there is refused (the store is one of the inputs). With
    `keep`, the result keeps its records too.
    """
    from evals.suite import load_suite

    shards, attempts = newest_attempts(read_shards(sources, evaluation_id))
    check_shards(shards)
    meta = merged_meta(shards)
    meta.environment = environment or meta.environment
    meta.git_branch = branch or meta.git_branch
    meta.ci_event = ci_event or meta.ci_event
    path = suite_path or meta.config.get("suite_path")
    if not path:
        raise SuiteError("cannot find the suite the shards ran", fix="pass --suite PATH")
    suite = load_suite(path)
    meta.outline = suite.outline().to_dict()
    repeat = int(meta.config.get("repeat") or 1)
    places = _Places(suite, repeat)
    _refuse_unplanned(places, shards)
    meta.planned_runs = count_plan(
        suite,
        repeat,
        tags=meta.config.get("tags"),
        case_ids=meta.config.get("cases"),
        agents=meta.agents or None,
    )
    if attempts:
        meta.config["shard_attempts"] = attempts
    gate_config = suite.gates.for_environment(meta.environment)
    tally = Tally(TallyRules.of(gate_config))
    kept: list[RunRecord] = []
    replaced = _stored(meta, store_url, _counted(merged_runs(places, shards), tally, kept, keep))
    summary, gates = analyse(suite, tally, gate_config, meta.environment)
    meta.stored_runs = tally.runs
    gates.warnings += attempts
    missing = missing_shards(shards)
    if missing or meta.stored_runs < meta.planned_runs:
        meta.status = "incomplete"
        which = f"shard(s) {', '.join(missing)} missing: " if missing else ""
        gates.warnings.append(
            f"incomplete evaluation: {which}{meta.stored_runs} of {meta.planned_runs} planned "
            "runs merged; it is stored as incomplete and never chosen as a baseline"
        )
    else:
        meta.status = "complete"
    meta.ended_at = meta.ended_at or time.time()
    _finish(store_url, meta, summary, gates)
    kept.sort(key=run_order_key("plan"))
    result = EvaluationResult(
        suite,
        meta,
        kept,
        summary,
        gates,
        gate_config,
        repeat,
        facts=tally.facts(),
        runs=StoredRuns(store_url, meta.id),
        counts=tally,
    )
    return Merged(result, replaced)


@contextlib.contextmanager
def merged_into(
    sources: list[str],
    into: str | None,
    *,
    suite_path: str | None = None,
    evaluation_id: str | None = None,
) -> Iterator[Merged]:
    """`merge_shards` into the store `into`, or with None into a store of its own that
    lasts while the context is open: the reports of a merge written only as reports read
    the merged runs from there."""
    with contextlib.ExitStack() as stack:
        store_url = into
        if into is None:
            import tempfile

            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evals-merge-")))
            store_url = f"sqlite:///{folder / 'merged.db'}"
        yield merge_shards(
            sources, store_url=store_url, suite_path=suite_path, evaluation_id=evaluation_id
        )


def _counted(
    records: Iterable[RunRecord], tally: Tally, kept: list[RunRecord], keep: bool
) -> Iterator[RunRecord]:
    """`records`, each counted into `tally` (and kept in `kept` with `keep`) as it passes."""
    for record in records:
        tally.add(record)
        if keep:
            kept.append(record)
        yield record


def _stored(
    meta: EvaluationMeta, store_url: str | None, records: Iterable[RunRecord]
) -> str | None:
    """Create the merged evaluation in the store (`running`) and store `records` a batch at
    a time; a sentence when it replaced an evaluation an earlier attempt merged there."""
    from evals.store import open_store

    store = open_store(store_url)
    try:
        replaced = _replace_earlier(store, meta)
        store.create_evaluation(dataclasses.replace(meta, status="running"))
        batch: list[RunRecord] = []
        for record in records:
            batch.append(record)
            if len(batch) == _BATCH:
                store.add_runs(meta.id, batch)
                batch = []
        if batch:
            store.add_runs(meta.id, batch)
        return replaced
    finally:
        store.close()


def _replace_earlier(store: Any, meta: EvaluationMeta) -> str | None:
    """Delete the evaluation of `meta`'s id an earlier attempt merged into `store`, saying
    so; refuse a shard of it there (the store is one of the inputs)."""
    existing = store.get_evaluation(meta.id)
    if existing is None:
        return None
    if existing.shard is not None:
        raise SuiteError(
            f"the store holds shard {existing.shard} of evaluation {meta.id}",
            fix="merge into another store (a new file, or the team's store)",
        )
    store.delete_evaluation(existing.id)
    return (
        f"replaced evaluation `{existing.id}` as an earlier attempt merged it "
        f"({existing.status}, {existing.stored_runs} of {existing.planned_runs} runs)"
    )


def _finish(store_url: str | None, meta: EvaluationMeta, summary: Any, gates: Any) -> None:
    from evals.store import open_store

    store = open_store(store_url)
    try:
        store.finish_evaluation(meta, summary, gates)
    finally:
        store.close()


def store_merged(result: EvaluationResult, store_url: str | None) -> str | None:
    """Write an evaluation whose records are in memory (a sharded adaptive run's) to a
    store as the merged evaluation. An evaluation of the same id that an earlier attempt
    merged there is replaced (a sentence says so, returned); a shard of it is refused."""
    from evals.store import open_store

    store = open_store(store_url)
    try:
        replaced = _replace_earlier(store, result.meta)
        store.create_evaluation(result.meta)
        store.add_runs(result.meta.id, result.records)
        store.finish_evaluation(result.meta, result.summary, result.gates)
        return replaced
    finally:
        store.close()

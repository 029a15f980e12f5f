"""A stored baseline standing in for running the baseline agent again, behind the drift guard.

`evals run` does this by default where it is safe (`reused_baseline(..., asked=False)`: a
new evaluation with a store, `gates.reuse_baseline` on, and a baseline agent whose
fingerprint sees its code); `--reuse-baseline` asks for it whatever the agent,
`--fresh-baseline` refuses it. It looks in the results store for the newest complete
evaluation of the same suite (fingerprint), the same seed and the baseline agent's same
fingerprint that holds runs this run plans for the baseline (the (case, repeat) pairs it
lacks run fresh). Its responses then answer the baseline's
calls through a response cache primed with them (`evals.run.cache`), except for the
drift guard's share (`evals.gates.baseline.guard_repeats`, over the cases other than P0)
and every planned run of the P0 cases (when the P0 gate is on), which run fresh first. The
guard compares those fresh runs with the stored runs of the same cases
(`evals.gates.baseline.drift`): when it shows drift, the stored runs are dropped and the
baseline runs fresh (the guard's fresh runs are kept), and the report says so; when it
does not, the gates that read stored runs spend `1 - DRIFT_RESERVE` of their shares
(`evals.gates.decide.decide`), keeping the rest against a drift the guard missed; the P0
gate compares fresh runs only, so it keeps its whole share and a P0 case that breaks
fails as on a fresh baseline. An adaptive run then allocates the candidate's repeats
from the baseline's history (`allocation`).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from evals.gates import baseline as guard
from evals.model.options import EvaluationState, RunOptions
from evals.model.results import RunRecord
from evals.model.suite import Suite
from evals.model.summary import BaselineReuse
from evals.plan.runs import build_plan
from evals.run.cache import cacheable

Counts = dict[str, tuple[int, int]]


@dataclass(slots=True)
class Prepared:
    """The run's options after the guard (the cache primed with the stored or the guard's
    fresh responses), what the guard found (None: nothing stored could stand in, `note`
    says why), the baseline's per-case history (passes, runs) in the stored runs, the
    (case id, repeat) pairs the guard ran fresh (and primed) and the (case, prompt) cells
    planned for the baseline."""

    options: RunOptions
    reuse: BaselineReuse | None
    note: str
    history: Counts
    guarded: frozenset[tuple[str, int]] = frozenset()
    cells: int = 0

    def settled(self, hits: dict[str, tuple[int, int]], repeats: int) -> BaselineReuse | None:
        """What the guard found, with the runs the evaluation answered from stored ones
        (`hits`: per agent, runs answered from the cache and runs; the guard's fresh runs
        the cache answered again are not counted) and the agent calls made (the guard's
        included) against those of `repeats` repeats of every planned case and agent run
        fresh."""
        if self.reuse is None:
            return None
        answered = hits.get(self.reuse.agent, (0, 0))[0]
        guarded = sum(1 for _, repeat in self.guarded if repeat < repeats)
        called = sum(n - h for h, n in hits.values()) + self.reuse.guard
        return replace(
            self.reuse,
            reused=max(answered - guarded, 0),
            calls=called,
            fixed_calls=self.cells * len(hits) * repeats,
        )


def _planned(
    suite: Suite, options: RunOptions, agent: str, repeat: int
) -> set[tuple[str, int, int]]:
    """The (case id, prompt index, repeat) runs this run plans for `agent`."""
    config = suite.gates.for_environment(options.environment)
    plan = build_plan(
        suite,
        repeat,
        tags=options.chosen_tags(config.tags),
        case_ids=options.case_ids,
        agents=[agent],
        shard=options.shard,
        salt=options.seed,
    )
    return {(run.case.id, run.prompt_index, run.key.repeat) for run in plan}


def stored_runs(
    suite: Suite, options: RunOptions, agent: str, wanted: set[tuple[str, int, int]]
) -> tuple[str, list[RunRecord]] | str:
    """(evaluation id, its stored runs of `agent` on the wanted pairs) of the complete
    evaluation that may stand in for most of them (the newest of those), else the reason
    none may. Runs answered from a cache are copies and never stand in; the planned runs
    it lacks (more repeats than it stored) run fresh."""
    if not options.use_store:
        return "no results store (--no-store)"
    from evals.store import open_store

    fingerprint = next(p.fingerprint for p in suite.providers if p.label == agent)
    store = open_store(options.store_url, read_only=True)
    try:
        found = store.list_evaluations(
            suite_id=suite.suite_id, fingerprint=suite.fingerprint, status="complete", limit=None
        )
        best: tuple[str, list[RunRecord]] | None = None
        for meta in found:
            if meta.agent_fingerprints.get(agent) != fingerprint:
                continue
            if (meta.config.get("seed") or 0) != options.seed:
                continue
            runs = [
                r
                for r in store.load_runs(meta.id, agent=agent)
                if (r.key.case_id, r.prompt_index, r.key.repeat) in wanted and not r.response.cached
            ]
            if best is None or len(runs) > len(best[1]):
                best = meta.id, runs
            if len(runs) == len(wanted):
                break
    finally:
        store.close()
    if best is not None and best[1]:
        return best
    return (
        f"no complete evaluation in the store ran this suite and baseline agent {agent} "
        "unchanged (same fingerprints and --seed) on the cases planned"
    )


def counts(records: list[RunRecord]) -> Counts:
    """Per case: (passes, counted runs), errors left out."""
    tallies: dict[str, list[int]] = {}
    for record in records:
        if record.status == "error":
            continue
        tally = tallies.setdefault(record.key.case_id, [0, 0])
        tally[0] += record.status == "pass"
        tally[1] += 1
    return {case: (passes, runs) for case, (passes, runs) in tallies.items()}


def guarded_runs(
    suite: Suite,
    environment: str | None,
    history: Counts,
    wanted: set[tuple[str, int, int]],
    seed: int,
) -> tuple[frozenset[tuple[str, int]], tuple[str, ...]]:
    """The (case id, repeat) baseline runs the drift guard re-runs fresh, and the gates
    that then compare fresh runs only: the guard's share of the cases other than P0
    (`guard_repeats`) and, when the P0 gate is on, every planned run (`wanted`: case id,
    prompt index, repeat) of the P0 cases, so the P0 gate never compares a stored run and
    needs no reserve."""
    planned = {case for case, _, _ in wanted}
    p0 = guard.fresh_in_full(suite.gates.for_environment(environment), suite.cases) & planned
    others = {case: runs for case, runs in history.items() if case not in p0}
    units = {
        (case, repeat)
        for case, repeats in guard.guard_repeats(others, seed=seed).items()
        for repeat in repeats
    } | {(case, repeat) for case, _, repeat in wanted if case in p0}
    return frozenset(units), guard.fresh_gates(p0)


def _primed(path: Path, records: list[RunRecord], fingerprints: dict[str, str]) -> int:
    from evals.run.cache import SqliteResponseCache

    cache = SqliteResponseCache(path)
    try:
        return cache.prime(records, fingerprints)
    finally:
        cache.close()


def _automatic(suite: Suite, options: RunOptions, look: int | None) -> bool:
    """True when a run that did not ask (`--reuse-baseline`) nor refuse (`--fresh-baseline`)
    may look for a stored baseline: a whole new evaluation with a store, no response cache
    of its own, not a `look` of an adaptive comparison, and `gates.reuse_baseline` on (by
    default everywhere but a nightly or a release run, `default_reuse_baseline`)."""
    config = suite.gates.for_environment(options.environment)
    return (
        bool(config.reuse_baseline)
        and options.use_store
        and not options.cache
        and not options.resume
        and options.shard is None
        and look is None
    )


@contextlib.contextmanager
def reused_baseline(
    suite: Suite,
    options: RunOptions,
    most_repeats: int | None = None,
    *,
    asked: bool = True,
    look: int | None = None,
) -> Iterator[Prepared]:
    """Prepare a run whose baseline the stored runs may answer: find them, run the drift
    guard and prime a response cache (removed on exit) with what the run may reuse.
    `most_repeats` is the most repeats a run in looks may reach (else the run's own).
    Not `asked` (the default of `evals run`), only where `_automatic` allows and only for
    an agent whose fingerprint sees its code (`ProviderSpec.fingerprint_gap`), never for a
    `look` of an adaptive comparison (`EvaluationState.look`); the note stays empty unless
    stored runs were found and not reused, so a first run reads as before."""
    if options.cache and asked:
        from evals.model.errors import SuiteError

        raise SuiteError(
            "--reuse-baseline answers the baseline from the store through a response cache "
            "of its own, and --cache names another",
            fix="drop --cache (the stored baseline's responses are reused without it)",
        )
    config = suite.gates.for_environment(options.environment)
    agent = config.baseline
    labels = [p.label for p in suite.providers]
    if agent is None or agent not in labels or (options.agents and agent not in options.agents):
        note = "no baseline agent among the agents run" if asked else ""
        yield Prepared(options, None, note, {})
        return
    if not asked and not _automatic(suite, options, look):
        yield Prepared(options, None, "", {})
        return
    repeat = most_repeats or options.repeat or config.repeat or suite.evaluate_options.repeat
    wanted = _planned(suite, options, agent, repeat)
    found = stored_runs(suite, options, agent, wanted)
    if isinstance(found, str):
        note = f"baseline {agent} runs fresh: {found}" if asked else ""
        yield Prepared(options, None, note, {})
        return
    gap = next(p.fingerprint_gap for p in suite.providers if p.label == agent)
    if gap is not None and not asked:
        note = (
            f"baseline {agent}: {len(found[1])} stored run(s) not reused, because {gap}; "
            "--reuse-baseline reuses them behind the drift guard"
        )
        yield Prepared(options, None, note, {})
        return
    source, stored = found
    history = counts(stored)
    units, fresh_gates = guarded_runs(suite, options.environment, history, wanted, options.seed)
    fingerprints = {p.label: p.fingerprint for p in suite.providers}
    with tempfile.TemporaryDirectory(prefix="evals-reuse-") as folder:
        cache = Path(folder) / "responses.db"
        from evals.pipeline.evaluation import run_evaluation

        fresh = run_evaluation(
            suite,
            replace(
                options,
                agents=[agent],
                repeat=repeat,
                use_store=False,
                keep_records=True,
                store_process=None,
                report_process=None,
                progress=False,
                evaluation_id=None,
                resume=False,
            ),
            state=EvaluationState(units=units),
        ).records
        fresh_counts = counts(fresh)
        found_drift = guard.drift(fresh_counts, {c: history[c] for c in fresh_counts})
        kept = [r for r in stored if (r.key.case_id, r.key.repeat) not in units]
        reused = [] if found_drift.drifted else kept
        _primed(cache, [*reused, *fresh], fingerprints)
        reuse = BaselineReuse(
            source=source,
            agent=agent,
            reused=len(reused),
            guard=len(fresh),
            fresh_rate=found_drift.fresh_rate,
            stored_rate=found_drift.stored_rate,
            p_value=found_drift.p_value,
            level=found_drift.level,
            fell_back=found_drift.drifted,
            reserve=guard.DRIFT_RESERVE,
            fresh_gates=fresh_gates,
        )
        prepared = replace(options, cache=True, cache_path=str(cache))
        primed = frozenset((r.key.case_id, r.key.repeat) for r in fresh if cacheable(r))
        cells = len({(case, prompt) for case, prompt, _ in wanted})
        yield Prepared(prepared, reuse, reuse.headline(), history, primed, cells)

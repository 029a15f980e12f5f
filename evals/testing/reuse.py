"""A stored baseline in a `pytest --evals` session: the baseline's runs answered from the
store, behind the drift guard, as `evals run` answers them (`evals.pipeline.reuse`).

Each run of a marked test is a pytest item, so the session plans at collection: when the
store holds a complete evaluation of the same suite (the tests' fingerprint), seed and
baseline agent (the same agent fingerprint, one that sees the agent's code), the baseline's
items whose runs it stored are not run but answered with the stored run (shown as skipped,
"baseline run answered from the store"), except the guard's share and every run of the
P0 cases (`evals.pipeline.reuse.guarded_runs`), which run fresh, first. Before the first answered
item, the guard compares its fresh runs with the stored runs of the same cases; on drift
the remaining items run fresh. Under pytest-xdist a worker sees only its own runs, so the
answered items are skipped there and the controller decides at the end: on drift the
stored runs are dropped and the baseline keeps only its fresh runs, and the summary says
so. `--evals-fresh-baseline` (or `gates.reuse_baseline: false`) turns it off.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from evals.gates import baseline as guard
from evals.model.results import RunRecord
from evals.model.summary import BaselineReuse

if TYPE_CHECKING:
    from evals.testing.evaluation import Outline
    from evals.testing.settings import Settings

Key = tuple[str, int]
"""(case id, repeat) of a baseline run."""


@dataclass(slots=True)
class SessionReuse:
    """The stored runs that answer the baseline's items (`answers`), the guard's runs
    (`guarded`, run fresh: every P0 case's among them), the stored evaluation they come
    from, the gates that compare fresh runs only and, once decided, the guard's finding."""

    source: str
    agent: str
    answers: dict[Key, RunRecord]
    guarded: frozenset[Key]
    history: dict[str, tuple[int, int]]
    drift: guard.Drift | None = None
    notes: list[str] = field(default_factory=list)
    fresh_gates: tuple[str, ...] = ()

    def answer(self, key: Key) -> RunRecord:
        """The stored run standing in for baseline run `key`, marked as a copy (a copy
        never stands in again)."""
        stored = self.answers[key]
        return replace(stored, response=replace(stored.response, cached=True))

    def decide(self, records: list[RunRecord]) -> guard.Drift:
        """The guard's finding on the baseline's fresh runs of the guarded (case, repeat)
        pairs among `records`, against the stored runs of the same cases."""
        from evals.pipeline.reuse import counts

        fresh = counts(
            [
                r
                for r in records
                if r.key.agent == self.agent
                and (r.key.case_id, r.key.repeat) in self.guarded
                and not r.response.cached
            ]
        )
        self.drift = guard.drift(fresh, {c: self.history[c] for c in fresh if c in self.history})
        return self.drift

    def settled(self, records: list[RunRecord], planned: int) -> BaselineReuse:
        """What the reuse did, once every record is in: runs answered, the guard's runs
        and finding, and the agent calls made against `planned` runs all fresh."""
        drift = self.drift or self.decide(records)
        reused = sum(1 for r in records if r.key.agent == self.agent and r.response.cached)
        guarded = sum(
            1
            for r in records
            if r.key.agent == self.agent and (r.key.case_id, r.key.repeat) in self.guarded
        )
        return BaselineReuse(
            source=self.source,
            agent=self.agent,
            reused=reused,
            guard=guarded,
            fresh_rate=drift.fresh_rate,
            stored_rate=drift.stored_rate,
            p_value=drift.p_value,
            level=drift.level,
            fell_back=drift.drifted,
            reserve=guard.DRIFT_RESERVE,
            calls=planned - reused,
            fixed_calls=planned,
            fresh_gates=self.fresh_gates,
        )


def plan_reuse(
    settings: Settings, outline: Outline, planned: set[tuple[str, str, int]], fresh: bool
) -> SessionReuse | str | None:
    """The stored runs that may answer the session's baseline items, or why none may (a
    sentence, when stored runs exist and are not used), or None when there is nothing to
    say (no baseline, no store, asked fresh, nothing stored: the session runs as always).
    `planned` holds the session's (case id, agent, repeat) runs."""
    from evals.testing.evaluation import suite_of

    config = settings.gates.for_environment(settings.environment)
    agent = config.baseline
    labels = settings.agent_labels
    if fresh or not config.reuse_baseline or not settings.use_store or agent not in labels:
        return None
    spec = next(s for s in settings.agents if s.label == agent)
    if not spec.fingerprint:
        return None
    wanted = {(case, 0, repeat) for case, who, repeat in planned if who == agent}
    if not wanted:
        return None
    from evals.model.options import RunOptions
    from evals.pipeline.reuse import counts, guarded_runs, stored_runs

    suite = suite_of(settings, outline)
    options = RunOptions(seed=settings.salt, store_url=settings.store_url)
    found = stored_runs(suite, options, agent, wanted)
    if isinstance(found, str):
        return None
    source, stored = found
    if spec.fingerprint_gap is not None:
        return (
            f"baseline {agent}: {len(stored)} stored run(s) not reused, because "
            f"{spec.fingerprint_gap}"
        )
    history = counts(stored)
    guarded, fresh_gates = guarded_runs(suite, settings.environment, history, wanted, settings.salt)
    answers = {
        (r.key.case_id, r.key.repeat): r
        for r in stored
        if (r.key.case_id, r.key.repeat) not in guarded
    }
    return SessionReuse(source, agent, answers, guarded, history, fresh_gates=fresh_gates)

"""The runs of one agent on one case, counted and summed as they arrive.

An evaluation's statistics read these per-case, per-agent aggregates, never a list of
runs: a `Tally` takes each run once (`add`) and keeps, for every (agent, case), the
outcome counts, the sums of cost, latency and score, the policy violations, the first
error of each kind, the latencies in bounded memory (`LatencySample`), the pairs of a
paired comparison and the first failed conversation; per agent, the scorecard's sums and
the cache's hits. Its memory grows with the cases, not with the repeats.

An errored run is an outcome: it counts as a failed run in the pass rate, unless the
suite leaves its kind out (`gates.exclude_errors`, e.g. infrastructure errors), and then
the cell remembers how many it left out so reports can say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evals.analysis.latency import LatencySample
from evals.analysis.scorecard import ScorecardTally
from evals.model.evaluation import EvaluationResult, FailedConversations, RunFacts
from evals.model.results import VIOLATION_PREFIX, RunRecord

if TYPE_CHECKING:
    from evals.model.gates import GateConfig

ErrorOrder = tuple[int, str, int, str]
"""Where an error comes in case and repeat order: (case index, case id, repeat, prompt)."""


@dataclass(slots=True)
class Cell:
    """The runs of one agent on one case: outcome counts and sums.

    `cost`, `latency` and `score` are sums: `cost` over the `costed` runs whose cost is
    known (a run the agent never answered cost nothing the harness saw: 0), while
    `unknown_costs` answered runs had none (`cost_unknown` says why, for the first);
    `scored` runs have a score (graded, not errored). `first_errors` holds, per error
    kind, the first error in case and repeat order with its message; `pairs` is the
    paired table (both passed, candidate only, baseline only, neither, then the pairs
    whose shared seeds differ) of a paired comparison's candidate cell; `conversations`
    counts a simulated user's runs (errors left out), of which `failed_conversations`
    failed, the first in repeat order being `first_failed`. `first_violation` is the first
    run with a policy violation, in case and repeat order, with where and what it was
    (`case (repeat 2): turn 3: [approval] ...`).
    """

    passes: int = 0
    fails: int = 0
    errors: int = 0
    excluded: int = 0
    cost: float = 0.0
    costed: int = 0
    unknown_costs: int = 0
    cost_unknown: str | None = None
    latency: float = 0.0
    score: float = 0.0
    scored: int = 0
    violations: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    first_errors: dict[str, tuple[ErrorOrder, str]] = field(default_factory=dict)
    latencies: LatencySample = field(default_factory=LatencySample)
    pairs: list[int] | None = None
    conversations: int = 0
    failed_conversations: int = 0
    first_failed: RunRecord | None = None
    first_violation: tuple[ErrorOrder, str] | None = None

    @property
    def runs(self) -> int:
        """Every run of the cell, errors of excluded kinds too."""
        return self.passes + self.fails + self.errors

    @property
    def counted(self) -> int:
        """Runs the pass rate is over: passes, fails and errors not excluded."""
        return self.passes + self.fails + self.errors - self.excluded

    @property
    def rate(self) -> float:
        """Pass rate over the counted runs (an errored run counts as a failed one)."""
        return self.passes / self.counted


Cells = dict[tuple[str, str], Cell]


@dataclass(frozen=True, slots=True)
class TallyRules:
    """What a tally needs to know of the gates before the first run: the error kinds left
    out of pass rates, the latency every latency statistic reads, and the two agents whose
    runs pair up (candidate, baseline) when the suite declares `gates.paired`."""

    exclude: frozenset[str] = frozenset()
    latency: str = "wall"
    paired: tuple[str, str] | None = None

    @classmethod
    def of(cls, config: GateConfig) -> TallyRules:
        """The rules of a gate configuration."""
        pairing = None
        if config.paired and config.candidate is not None and config.baseline is not None:
            pairing = (config.candidate, config.baseline)
        return cls(frozenset(config.exclude_errors), config.latency, pairing)


_PairKey = tuple[str, str, int]
_PairRun = tuple[str, bool, object]


class Tally:
    """An evaluation's runs counted as they arrive: `cells` by (agent, case id), each
    agent's scorecard sums and cache hits, and how many runs passed.

    A paired comparison's runs wait for their pair only until it arrives (runs of one case
    and repeat complete close together), so the tally never holds every run.
    """

    def __init__(self, rules: TallyRules) -> None:
        self.rules = rules
        self.cells: Cells = {}
        self.scorecards = ScorecardTally()
        self.cache_hits: dict[str, list[int]] = {}
        self.runs = 0
        self.passed = 0
        self.repeats = 0
        self.case_indices: dict[str, int] = {}
        self._waiting: dict[_PairKey, _PairRun] = {}

    @classmethod
    def of(cls, records: Iterable[RunRecord], config: GateConfig) -> Tally:
        """The tally of `records` under `config`'s rules."""
        tally = cls(TallyRules.of(config))
        tally.add_all(records)
        return tally

    def add_all(self, records: Iterable[RunRecord]) -> None:
        """Count every record of `records`."""
        for record in records:
            self.add(record)

    def add(self, record: RunRecord) -> None:
        """Count one run."""
        key = record.key
        cell = self.cells.get((key.agent, key.case_id))
        if cell is None:
            cell = self.cells[(key.agent, key.case_id)] = Cell()
        status = record.status
        grade = record.grade
        self.runs += 1
        self.repeats = max(self.repeats, key.repeat + 1)
        self.case_indices.setdefault(key.case_id, record.case_index)
        if status == "pass":
            cell.passes += 1
            self.passed += 1
        elif status == "fail":
            cell.fails += 1
        else:
            self._error(cell, record)
        if grade is not None:
            if grade.policy_violation:
                self._violation(cell, record, grade.reason)
            if status != "error":
                cell.score += grade.score
                cell.scored += 1
        unknown = record.cost_unknown
        if unknown is None:
            cell.cost += record.cost or 0.0
            cell.costed += 1
        else:
            cell.unknown_costs += 1
            if cell.cost_unknown is None:
                cell.cost_unknown = unknown
        latency = record.latency(self.rules.latency)
        cell.latency += latency
        cell.latencies.add(latency)
        hits = self.cache_hits.setdefault(key.agent, [0, 0])
        hits[0] += bool(record.response.cached)
        hits[1] += 1
        self.scorecards.add(record)
        if record.is_conversation and status != "error":
            self._conversation(cell, record)
        if self.rules.paired is not None and key.agent in self.rules.paired:
            self._pair(record)

    def _error(self, cell: Cell, record: RunRecord) -> None:
        cell.errors += 1
        kind = record.error_kind or "agent_error"
        cell.excluded += record.error_kind in self.rules.exclude
        cell.error_kinds[kind] = cell.error_kinds.get(kind, 0) + 1
        key = record.key
        order = (record.case_index, key.case_id, key.repeat, key.prompt_id)
        first = cell.first_errors.get(kind)
        if first is None or order < first[0]:
            cell.first_errors[kind] = (order, record.error or record.response.error or "")

    @staticmethod
    def _violation(cell: Cell, record: RunRecord, reason: str) -> None:
        cell.violations += 1
        key = record.key
        order = (record.case_index, key.case_id, key.repeat, key.prompt_id)
        first = cell.first_violation
        if first is None or order < first[0]:
            said = reason.removeprefix(VIOLATION_PREFIX)
            cell.first_violation = (order, f"{key.case_id} (repeat {key.repeat + 1}): {said}")

    @staticmethod
    def _conversation(cell: Cell, record: RunRecord) -> None:
        cell.conversations += 1
        if record.status != "fail":
            return
        cell.failed_conversations += 1
        first = cell.first_failed
        if first is None or record.key.repeat < first.key.repeat:
            cell.first_failed = record

    def _pair(self, record: RunRecord) -> None:
        """Match a run of the paired agents with the other agent's run of the same case,
        prompt and repeat; the candidate's cell counts the pair, or loses its table when
        the two runs' shared seeds differ or are missing."""
        assert self.rules.paired is not None
        candidate = self.rules.paired[0]
        key = record.key
        where = (key.case_id, key.prompt_id, key.repeat)
        other = self._waiting.pop(where, None)
        mine: _PairRun = (key.agent, record.passed, record.metadata.get("shared_seed"))
        if other is None or other[0] == key.agent:
            self._waiting[where] = mine
            return
        first, second = (mine, other) if key.agent == candidate else (other, mine)
        cell = self.cells.get((candidate, key.case_id))
        if cell is None:
            cell = self.cells[(candidate, key.case_id)] = Cell()
        if cell.pairs is None:
            cell.pairs = [0, 0, 0, 0, 0]  # the table, then a mismatch count
        if second[2] is None or second[2] != first[2]:
            cell.pairs[4] += 1
        cell.pairs[(0 if first[1] else 2) + (0 if second[1] else 1)] += 1

    def facts(self) -> RunFacts:
        """Runs, passes, cache hits and failed conversations, as reports read them."""
        conversations = [
            FailedConversations(agent, case_id, c.failed_conversations, c.conversations, first)
            for (agent, case_id), c in self.cells.items()
            if (first := c.first_failed) is not None
        ]
        hits = {agent: (found, runs) for agent, (found, runs) in self.cache_hits.items()}
        indices = sorted(set(self.case_indices.values()))
        return RunFacts(self.runs, self.passed, indices, self.repeats, hits, conversations)

    def paired_table(self, candidate: Cell) -> tuple[int, int, int, int] | None:
        """The candidate cell's paired table when every one of its counted runs found its
        baseline pair with the same shared seed (the caller checks the counts agree)."""
        pairs = candidate.pairs
        if pairs is None or pairs[4] or sum(pairs[:4]) != candidate.runs:
            return None
        return pairs[0], pairs[1], pairs[2], pairs[3]


def run_facts(result: EvaluationResult) -> RunFacts:
    """What was counted of `result`'s runs: its own facts, or its records counted now."""
    if result.facts is not None:
        return result.facts
    return Tally.of(result.records, result.gate_config).facts()


def mean(values: Sequence[float]) -> float | None:
    """The mean, or None for no values."""
    return sum(values) / len(values) if values else None

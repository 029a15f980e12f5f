"""A gate is one object: what it is called, what it reads, how it decides, what it spends.

Every gate of the harness is a `Gate` declared in its own module of `evals.gates` and
listed once in `evals.gates.catalog.GATES`. The declaration says

- its `name` (the row it adds to the gate table; `regression[tag]` stands for the rows
  `regression[news]`, `regression[units]`, ...),
- the `keys` of the `gates:` block it reads,
- whether it is `statistical` (it decides from an estimate and spends a `weight`ed share
  of the build's false-failure budget) or a fact (policy violations, repeats: it spends
  nothing),
- its `family`: the hypotheses it tests in a `Scope` (the configuration and what is
  compared), None when it is off there. A statistical gate spends only when its family is
  not empty; inside it Holm's procedure decides,
- its `graph`: gates naming the same graph pass on the share of a hypothesis they reject
  to each other's (the weighted Holm procedure over all their hypotheses, each gate's
  `decide` told the graph's `Levels.pooled` share); the suite's and the tags' regression
  rows are one graph. The first step of each hypothesis is its own gate's share as
  without a graph, so planning and `reach` do not change,
- which cases each of its rows `reads` (what an adaptive run keeps running for it),
- its `decide`: the rows it adds from the evaluation's `Evidence` at its `Levels`,
- what it can reach before any run (`reach`: whether each of its rows can fail and can
  pass at a `Design`'s cases and repeats, on the most favourable data), which
  `evals validate` and `evals plan` turn into warnings with the repeats that would do,
- whether an adaptive run keeps a decision it reached at a look (`settles`; a fact that one
  more run can overturn, a policy violation, does not) and whether it may stop running
  for the gate when it cannot be decided by the last look (`futility`): by the normal
  limits of its estimate, or for a gate decided case by case by its own exact
  `still_fails` (whether the most unfavourable remaining runs could still fail it),
- for a plugin's gate, how the value of one of its keys is read (`parse`: the value
  converted, or a ValueError saying what is wrong; without it any value is taken). The
  harness's own keys are fields of `GateConfig`, each declaring its rule (bounds,
  example) in the field's metadata, by which `evals.suite.gates` checks it.

`decide`, planning (`planned_gate_count`, `planned_test_split`), the adaptive runs'
cases and futility, and the warnings about gates that cannot decide all read the same
declarations through the same `Scope`, so planning cannot split the budget differently
from the decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evals.gates.families import Levels
from evals.model.gates import GateConfig
from evals.model.suite import Case
from evals.model.summary import AgentStats, Comparison, GateResult, Summary

if TYPE_CHECKING:
    from evals.analysis.agreement import Agreement

Reads = Callable[[str, Sequence[Case]], frozenset[str]]


@dataclass(frozen=True, slots=True)
class Scope:
    """What decides which gates an evaluation has and how large their families are.

    `config` is the environment's configuration; `subject` whether there is an agent the
    rate gates are about; `agents` the agents whose error rate is bounded (the subject,
    then the baseline when compared); `compared` whether a candidate is compared with a
    baseline; `tags` the tags of the subject's cases and `compared_tags` those of the
    cases both agents ran; `p0_cases` the P0 cases both agents ran; `judged` whether a
    judge's agreement was measured. Planning builds it from the suite's selected cases
    (`evals.gates.catalog.planning_scope`), deciding from the data
    (`evals.gates.decide`): on data where every selected case ran for both agents the two
    agree.
    """

    config: GateConfig
    subject: bool
    agents: tuple[str, ...]
    compared: bool
    tags: frozenset[str]
    compared_tags: frozenset[str]
    p0_cases: tuple[str, ...]
    judged: bool


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a gate decides from: the summary, the environment's configuration, the agent
    the rate gates are about, the comparison (quarantined cases left out) and the judge's
    measured agreement."""

    summary: Summary
    config: GateConfig
    subject: AgentStats | None
    comparison: Comparison | None
    judge: Agreement | None = None


def every_case(row: str, cases: Sequence[Case]) -> frozenset[str]:
    """A gate over the whole suite reads every case."""
    return frozenset(c.id for c in cases)


def no_case(row: str, cases: Sequence[Case]) -> frozenset[str]:
    """A gate decided by something other than runs (a calibration file) or by facts that
    one run can settle at any look reads no case."""
    return frozenset()


def tagged_cases(row: str, cases: Sequence[Case]) -> frozenset[str]:
    """A per-tag row (`regression[news]`) reads the cases of its tag."""
    tag = row.partition("[")[2].removesuffix("]")
    return frozenset(c.id for c in cases if tag in c.tags)


def p0_cases(row: str, cases: Sequence[Case]) -> frozenset[str]:
    """The P0 gate reads the P0 cases."""
    return frozenset(c.id for c in cases if c.priority == "P0")


def tag_row(name: str, tag: str) -> str:
    """The row of one tag of a per-tag gate: `regression[tag]` and `news` give
    `regression[news]`."""
    return f"{name.removesuffix('[tag]')}[{tag}]"


def when_set(key: str, needs: str) -> Callable[[Scope], list[str] | None]:
    """The family of a gate over the whole suite that is on when the `gates:` key `key` is
    set and the scope has what it `needs` (`subject`, `compared` or `judged`): one
    hypothesis."""

    def family(scope: Scope) -> list[str] | None:
        on = getattr(scope, needs) and scope.config.value(key) is not None
        return ["suite"] if on else None

    return family


def tags_with(config: GateConfig, tags: frozenset[str], keys: set[str]) -> list[str]:
    """The tags among `tags` whose `per_tag` block sets one of `keys`, sorted."""
    return sorted(t for t, values in config.per_tag.items() if t in tags and keys & set(values))


@dataclass(frozen=True, slots=True)
class Design:
    """What a gate can see before any run: the `scope`, the `repeats` per case and agent,
    the runs per case and repeat (`prompts`), the selected `cases`, and its `levels` (its
    share of the budget, already divided by its family's size: Holm's first step)."""

    scope: Scope
    cases: Sequence[Case]
    repeats: int
    prompts: int
    levels: Levels

    @property
    def runs(self) -> int:
        """Counted runs per case and agent."""
        return self.repeats * self.prompts


@dataclass(frozen=True, slots=True)
class Reach:
    """Whether a row can fail and can pass at a design, each on the data most favourable to
    it (a total break; every run of both agents passing)."""

    row: str
    can_fail: bool
    can_pass: bool


@dataclass(frozen=True, slots=True)
class Gate:
    """One gate, declared once (see the module's docstring)."""

    name: str
    keys: tuple[str, ...]
    statistical: bool
    family: Callable[[Scope], Sequence[str] | None]
    decide: Callable[[Evidence, Levels], list[GateResult]]
    reads: Reads = every_case
    weight: float = 1.0
    settles: bool = True
    futility: bool = True
    reach: Callable[[Design], list[Reach]] | None = None
    still_fails: Callable[[GateResult, float, float], bool] | None = None
    parse: Callable[[str, Any], Any] | None = None
    graph: str | None = None

    def owns(self, row: str) -> bool:
        """True when `row` (a name in the gate table) is one of this gate's rows."""
        base, bracket, _ = row.partition("[")
        return self.name == (f"{base}[tag]" if bracket else base)

    def spends(self, scope: Scope) -> bool:
        """True when the gate takes a share of the budget in `scope`: it is statistical
        and has hypotheses to test there."""
        return self.statistical and bool(self.family(scope))

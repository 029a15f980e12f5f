"""Gates that cannot decide, found before any run, with the repeats that would let them.

Every gate that declares its `reach` (`evals.gates.registry`) says whether each of its rows
can fail on the data most favourable to failing (a total break of its own cases, the rest
holding) and can pass on the data most favourable to passing (every run of both agents
passing), at an environment's cases, repeats and levels: its share of the budget over its
family on the fail side (Holm's first step, the level a row shown alone meets), half the
budget on the pass side. A row that cannot fail is blind: no regression of its cases alone
can turn it red (a per-tag row may still fail when other tags of its family break with it,
as Holm then tests it at a later, easier step). A row that cannot pass keeps a
release red (`on_undetermined: fail`) and a nightly warning whatever the candidate does;
in a pull request, which passes what it cannot decide, it costs nothing and is not named.
For each, the fewest repeats that would make it reachable, if any up to 200.
`evals validate` names, for the top level and every declared environment, the rows that
cannot fail and, where an undetermined verdict fails the build, those that cannot pass;
`evals plan` names both for the environment it plans (but rows that cannot pass where the
environment passes what it cannot decide).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evals.gates import catalog
from evals.gates.families import Levels
from evals.gates.registry import Design, Gate, Reach, Scope
from evals.model.suite import Case, Suite

MOST_REPEATS = 200


@dataclass(frozen=True, slots=True)
class Undecidable:
    """A row that cannot fail, or cannot pass, in an environment at its repeats, and the
    fewest repeats with which it could (None: not up to `MOST_REPEATS`)."""

    environment: str | None
    row: str
    side: str
    repeats: int
    needed: int | None

    def sentence(self, rule: str) -> str:
        """The warning, naming where, what and what to do."""
        where = f"environment {self.environment}" if self.environment else "the top level"
        if self.side == "fail":
            what = (
                f"{self.row} cannot fail at {self.repeats} repeats: not even a total break of "
                "its cases alone would show beyond its threshold, so it cannot turn the build red"
            )
        else:
            effect = "every build fails" if rule == "fail" else "it always warns"
            what = (
                f"{self.row} cannot pass at {self.repeats} repeats: not even every run of "
                f"both agents passing would show its threshold met, so {effect}"
            )
        if self.needed is None:
            enough = f"no number of repeats up to {MOST_REPEATS} would"
            if self.row == "regression" or self.row.startswith("regression["):
                enough += " (a tolerated loss of 0 passes only when the candidate is shown better)"
        else:
            enough = f"it needs at least {self.needed} repeats"
        return f"{where}: {what}; {enough} (evals plan shows the chances)"


def _levels(gate: Gate, scope: Scope, spending: list[Gate], budget: float) -> Levels:
    """The gate's planned levels, its share divided by its family (Holm's first step)."""
    total = sum(g.weight for g in spending) or 1.0
    family = max(len(gate.family(scope) or ()), 1)
    share = budget * gate.weight / total / family if gate in spending else budget
    return Levels(share=share, pass_alpha=budget / 2, spend=budget)


def _fewest(reached: Callable[[int], bool]) -> int | None:
    """The fewest repeats at which `reached` holds (it only gains with repeats)."""
    high = 1
    while not reached(high):
        if high >= MOST_REPEATS:
            return None
        high = min(high * 2, MOST_REPEATS)
    low = high // 2
    while high - low > 1:
        middle = (low + high) // 2
        if reached(middle):
            high = middle
        else:
            low = middle
    return high


def undecidable(
    suite: Suite, environment: str | None, unpassable: bool = True
) -> list[Undecidable]:
    """The rows that cannot fail at `environment`'s cases and repeats and, with
    `unpassable` unless the environment passes what it cannot decide, those that cannot
    pass."""
    config = suite.gates.for_environment(environment)
    scope = catalog.planning_scope(suite, environment, config)
    cases = catalog.selected_cases(suite, config)
    repeats = config.repeat or suite.evaluate_options.repeat
    prompts = max(len(suite.prompts), 1)
    budget = 1 - config.confidence
    spending = catalog.spending(scope)
    found = []
    for gate in catalog.gates_for(config):
        if gate.reach is None or gate.family(scope) is None:
            continue
        levels = _levels(gate, scope, spending, budget)
        reached = _Reached(gate.reach, scope, cases, prompts, levels)
        for row, now in reached.at(repeats).items():
            if not now.can_fail:
                found.append(
                    Undecidable(environment, row, "fail", repeats, reached.fewest(row, "fail"))
                )
            if unpassable and not now.can_pass and config.on_undetermined != "pass":
                found.append(
                    Undecidable(environment, row, "pass", repeats, reached.fewest(row, "pass"))
                )
    return found


@dataclass(frozen=True, slots=True)
class _Reached:
    """One gate's reach at any number of repeats, the rest of its design fixed."""

    reach: Callable[[Design], list[Reach]]
    scope: Scope
    cases: Sequence[Case]
    prompts: int
    levels: Levels

    def at(self, repeats: int) -> dict[str, Reach]:
        """Each row's reach at `repeats`."""
        design = Design(self.scope, self.cases, repeats, self.prompts, self.levels)
        return {r.row: r for r in self.reach(design)}

    def fewest(self, row: str, side: str) -> int | None:
        """The fewest repeats at which `row` can reach `side` (fail or pass)."""

        def reached(repeats: int) -> bool:
            found = self.at(repeats)[row]
            return found.can_fail if side == "fail" else found.can_pass

        return _fewest(reached)


def undecidable_gates(suite: Suite) -> list[str]:
    """Warnings for `evals validate`: at the top level of `gates:` and in every declared
    environment, the rows that cannot fail, and where an undetermined verdict fails the
    build, those that cannot pass."""
    warnings = []
    for environment in (None, *suite.gates.environments):
        rule = suite.gates.for_environment(environment).on_undetermined or "warn"
        for item in undecidable(suite, environment, unpassable=rule == "fail"):
            warnings.append(item.sentence(rule))
    return warnings

"""The gates of the harness, in the order the gate table shows them, and what planning
reads of them.

Adding a gate is one module declaring a `Gate` (`evals.gates.registry`) and one line
here; `decide`, planning, adaptive runs and the warnings about gates that cannot decide
all go through this list (`gates_for`), which ends with the gates of installed plugins
whose keys the suite sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from evals.common import plugins
from evals.gates import (
    cost_per_accepted,
    error_rate,
    flake,
    judges,
    p0,
    pass_rate,
    policy,
    ratios,
    regression,
    repeats,
)
from evals.gates.registry import Gate, Scope
from evals.model.gates import GateConfig
from evals.model.suite import Case, Suite, SuiteOutline
from evals.plan.runs import select_cases

GATES: tuple[Gate, ...] = (
    pass_rate.SUITE,
    pass_rate.TAGS,
    error_rate.GATE,
    flake.GATE,
    cost_per_accepted.GATE,
    repeats.GATE,
    regression.SUITE,
    regression.TAGS,
    p0.GATE,
    ratios.COST,
    ratios.LATENCY,
    judges.KAPPA,
    judges.ACCURACY,
    policy.GATE,
)


def plugin_gates() -> tuple[Gate, ...]:
    """The gates of installed plugins (entry-point group `evals.gates`: the name is the
    gate's, the value its `Gate`), imported on the first call; what their functions raise
    is a PluginError naming the plugin."""
    found = []
    builtin = {gate.name for gate in GATES}
    for plugin, gate in plugins.load_all(plugins.GATES):
        if not isinstance(gate, Gate) or gate.name != plugin.name or gate.name in builtin:
            raise plugins.wrong_kind(
                plugin, f"a Gate named {plugin.name!r} (not a name of the harness's gates)"
            )
        if id(gate) not in _GUARDED:
            _GUARDED[id(gate)] = (gate, _guarded(plugin, gate))
        found.append(_GUARDED[id(gate)][1])
    return tuple(found)


# Each loaded plugin gate (kept, so its id stays its own) with its guarded copy: the same
# copy every time, so the gates of one decision compare equal across the catalog's calls.
_GUARDED: dict[int, tuple[Gate, Gate]] = {}


def _guarded(plugin: plugins.Plugin, gate: Gate) -> Gate:
    """`gate` with what its functions raise turned into a PluginError naming `plugin`."""
    reach = gate.reach and plugins.guarded(plugin, gate.reach, "judging what its gate can reach")
    return replace(
        gate,
        family=plugins.guarded(plugin, gate.family, "choosing its gate's hypotheses"),
        decide=plugins.guarded(plugin, gate.decide, "deciding its gate"),
        reads=plugins.guarded(plugin, gate.reads, "choosing the cases its gate reads"),
        reach=reach,
    )


def gates_for(config: GateConfig) -> tuple[Gate, ...]:
    """The gates of a configuration, in table order: the harness's, then the plugins'
    gates whose keys it sets (plugins are imported only when it sets a key of theirs)."""
    if not config.extra:
        return GATES
    return (*GATES, *(g for g in plugin_gates() if set(g.keys) & set(config.extra)))


def gate_of(row: str) -> Gate | None:
    """The gate a row of the gate table belongs to (`regression[news]`: `regression[tag]`)."""
    owner = next((gate for gate in GATES if gate.owns(row)), None)
    if owner is None and plugins.names(plugins.GATES):
        owner = next((gate for gate in plugin_gates() if gate.owns(row)), None)
    return owner


def gate_cases(row: str, cases: Sequence[Case]) -> frozenset[str]:
    """The ids of the cases whose runs the gate-table row `row` reads (every case for a
    row no gate declares)."""
    gate = gate_of(row)
    return frozenset(c.id for c in cases) if gate is None else gate.reads(row, cases)


def selected_cases(suite: Suite | SuiteOutline, config: GateConfig) -> list[Case]:
    """The suite's cases an environment runs: those having one of its `tags`, else all."""
    return select_cases(suite.cases, config.tags, None)


def planning_scope(
    suite: Suite | SuiteOutline, environment: str | None, config: GateConfig | None = None
) -> Scope:
    """The scope the gates have in `environment` when every case the environment selects
    runs for both agents; `config` is the environment's configuration when the caller
    changed it (a comparison names its two sides)."""
    config = config or (suite.gates or GateConfig()).for_environment(environment)
    cases = selected_cases(suite, config)
    tags = frozenset(tag for case in cases for tag in case.tags)
    compared = config.baseline is not None and config.candidate is not None
    subject = config.candidate is not None
    agents = tuple(a for a in (config.candidate, config.baseline if compared else None) if a)
    return Scope(
        config=config,
        subject=subject,
        agents=agents,
        compared=compared,
        tags=tags,
        compared_tags=tags if compared else frozenset(),
        p0_cases=tuple(c.id for c in cases if c.priority == "P0") if compared else (),
        judged=bool(config.judge_calibration),
    )


def spending(scope: Scope) -> list[Gate]:
    """The gates that take a share of the budget in `scope`."""
    return [gate for gate in gates_for(scope.config) if gate.spends(scope)]


def planned_gate_count(
    suite: Suite | SuiteOutline, environment: str | None, config: GateConfig | None = None
) -> int:
    """How many blocking statistical gates share the budget in `environment` when every
    case the environment selects runs for both agents: the count `decide` reaches on such
    data, for planning before any run (at least 1)."""
    return max(len(spending(planning_scope(suite, environment, config))), 1)


def planned_test_split(
    suite: Suite | SuiteOutline, environment: str | None, config: GateConfig | None = None
) -> int:
    """Into how many one-sided tests a look's budget is split at the finest: the planned
    gates' weights over the finest share times the largest Holm family among them, and at
    least 2 (the pass side spends half of it).

    A sequential design whose boundaries are computed at the budget over this split is
    exact for the finest test and conservative for every coarser one
    (`evals.pipeline.adaptive.AdaptiveDesign.spends`)."""
    scope = planning_scope(suite, environment, config)
    gates = spending(scope)
    if not gates:
        return 2
    total = sum(g.weight for g in gates)
    finest = min(g.weight / total / len(g.family(scope) or ()) for g in gates)
    return max(round(1 / finest), 2)

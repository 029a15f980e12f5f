"""Decide the suite's gates from its statistics: pass, fail or undetermined.

Every statistical gate decides on evidence at its share of the build's false-failure
budget: the budget (1 - confidence, or a staged run's share for one look) is split among
the blocking statistical gates by their weights (equal by default), and inside a gate over
several hypotheses (per-tag gates, P0 cases, agents' error rates) Holm's procedure decides
at that share; gates of one graph (the suite's and the tags' regression rows) decide
their hypotheses together by the weighted Holm procedure at their shares' sum, passing a
rejected hypothesis's share on. So under identical agents the build fails falsely at
most the budget of the time whatever the gates' dependence (the union bound). A gate
passes only when its pass limit at 1 - budget/2 shows the threshold met; a build passes
only when every gate passes, which needs no correction. Anything else is undetermined,
and the environment's `on_undetermined` says whether that fails the build. Policy
violations and repeats are facts, not estimates: they spend nothing, and a single
violation fails. The judge gates gate on the agreement the evaluation measured over the
gates' calibration file (evals.pipeline.calibration). The gates themselves are declared
in `evals.gates.catalog`; docs/gates.md lists every one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from evals.analysis.comparison import without_cases
from evals.gates import catalog
from evals.gates.families import Levels
from evals.gates.registry import Evidence, Scope
from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.summary import AgentStats, BaselineReuse, GateReport, GateResult, Summary
from evals.model.triage import TriageAction
from evals.stats import alpha_shares

if TYPE_CHECKING:
    from evals.analysis.agreement import Agreement


def check_comparable(fingerprint_a: str, fingerprint_b: str, allow: bool) -> list[str]:
    """Warnings for comparing evaluations of two suite fingerprints.

    Different fingerprints mean the cases, graders or referenced files differ, so a
    difference in pass rate may come from the suite rather than the agent. Raises a
    SuiteError unless `allow` (gates.allow_fingerprint_mismatch or a command-line flag).
    """
    if fingerprint_a == fingerprint_b:
        return []
    if not allow:
        raise SuiteError(
            f"the evaluations ran different suite contents (fingerprint {fingerprint_a[:12]} "
            f"vs {fingerprint_b[:12]}); their pass rates are not comparable",
            fix="re-run both agents on the same suite, or set "
            "gates.allow_fingerprint_mismatch: true to compare anyway",
        )
    return [
        f"suite fingerprints differ ({fingerprint_a[:12]} vs {fingerprint_b[:12]}): "
        "differences may come from the suite, not the agent"
    ]


def _subject(summary: Summary, config: GateConfig) -> AgentStats | None:
    agents = {a.agent: a for a in summary.agents if a.group == "suite"}
    if config.candidate in agents:
        return agents[config.candidate]
    return summary.agents[0] if len(summary.agents) == 1 else None


def decision_scope(evidence: Evidence) -> Scope:
    """The scope the data give the gates: the subject's tags, the cases both agents ran
    and their P0 cases, the agents whose error rate is bounded, and whether a judge was
    measured (what `evals.gates.catalog.planning_scope` expects of a complete run)."""
    summary, config, subject = evidence.summary, evidence.config, evidence.subject
    comparison = evidence.comparison
    agents: tuple[str, ...] = ()
    if subject is not None:
        agents = (subject.agent,)
        baseline = any(a.agent == config.baseline and a is not subject for a in summary.agents)
        if summary.comparison is not None and baseline and config.baseline is not None:
            agents += (config.baseline,)
    return Scope(
        config=config,
        subject=subject is not None,
        agents=agents,
        compared=comparison is not None,
        tags=frozenset(
            t.group for t in summary.tags if subject is not None and t.agent == subject.agent
        ),
        compared_tags=frozenset(t.group for t in comparison.tags) if comparison else frozenset(),
        p0_cases=tuple(
            c.case_id
            for c in (comparison.cases if comparison else [])
            if c.priority == "P0" and c.difference is not None
        ),
        judged=evidence.judge is not None,
    )


def in_force(
    quarantines: Sequence[TriageAction], environment: str | None, now: float
) -> list[TriageAction]:
    """The quarantines that hold in `environment` at `now`, one per case (the longest)."""
    chosen: dict[str, TriageAction] = {}
    for action in quarantines:
        if action.kind != "quarantine" or action.case_id is None:
            continue
        if not (action.applies_to(environment) and action.is_active(now)):
            continue
        known = chosen.get(action.case_id)
        if known is None or (known.until or 0.0) < (action.until or 0.0):
            chosen[action.case_id] = action
    return [chosen[case_id] for case_id in sorted(chosen)]


def _quarantine_note(gates: list[GateResult], quarantined: list[str]) -> list[GateResult]:
    """The comparative gates' reasons name the quarantined cases they left out."""
    if not quarantined:
        return gates
    shown = ", ".join(quarantined[:5]) + (", ..." if len(quarantined) > 5 else "")
    note = f"; {len(quarantined)} quarantined case(s) left out: {shown}"
    return [
        replace(g, reason=g.reason + note)
        if g.name == "p0_regressions" or g.name.startswith("regression")
        else g
        for g in gates
    ]


def decide(
    summary: Summary,
    config: GateConfig,
    environment: str | None,
    judge: Agreement | None = None,
    spend: float | None = None,
    quarantines: Sequence[TriageAction] = (),
    now: float | None = None,
    reuse: BaselineReuse | None = None,
) -> GateReport:
    """Every configured gate's decision, with its threshold, limits, levels and reason.

    `config` is applied for `environment`. `spend` is the build's false-failure budget
    for this decision (default 1 - confidence; a staged run passes each look's share).
    `judge` is `measure_judge`'s result; without it the judge gates are not decided.
    `quarantines` are triage actions; those in force in `environment` at `now` (needed
    with them) on cases of the summary take their cases out of the regression and P0
    gates, which then decide over the other cases. A quarantined case is still in the
    summary with its interval; the report lists the quarantines. An expired quarantine
    is not in force: its case blocks again. `reuse` is a stored baseline standing in for
    the baseline: the gates that read stored runs then spend `1 - reuse.reserve` of
    their shares and keep the rest against a drift the guard missed; those whose
    comparison the guard ran fresh in full (`reuse.fresh_gates`) keep their whole share.
    """
    if quarantines and now is None:
        raise ValueError("deciding with quarantines needs the time they are judged at")
    config = config.for_environment(environment)
    budget = 1 - config.confidence if spend is None else spend
    measured = {c.case_id for c in summary.case_stats}
    held = [q for q in in_force(quarantines, environment, now or 0.0) if q.case_id in measured]
    quarantined = [q.case_id for q in held if q.case_id is not None]
    compared = summary.comparison
    if compared is not None and quarantined:
        compared = without_cases(compared, quarantined, config)
    evidence = Evidence(summary, config, _subject(summary, config), compared, judge)
    scope = decision_scope(evidence)
    active = [gate for gate in catalog.gates_for(config) if gate.family(scope) is not None]
    spending = [gate for gate in active if gate.spends(scope)]
    shares = dict(
        zip(
            (gate.name for gate in spending),
            alpha_shares(budget, [gate.weight for gate in spending]) if spending else (),
            strict=True,
        )
    )
    reserve = reuse.reserve if reuse is not None and not reuse.fell_back else 0.0
    fresh = set(reuse.fresh_gates) if reuse is not None else set()
    kept = {gate.name: 1.0 if gate.name in fresh else 1 - reserve for gate in active}
    # the reserve a fresh gate need not keep is spent by it
    spent = budget * (1 - reserve) + reserve * sum(v for k, v in shares.items() if k in fresh)
    shares = {name: share * kept[name] for name, share in shares.items()}
    pooled: dict[str, float] = {}
    for gate in spending:
        if gate.graph is not None:
            pooled[gate.graph] = pooled.get(gate.graph, 0.0) + shares[gate.name]
    gates: list[GateResult] = []
    for gate in active:
        spend = budget * kept[gate.name]
        share = shares.get(gate.name, spend)
        graph = pooled.get(gate.graph) if gate.graph is not None else None
        levels = Levels(share=share, pass_alpha=spend / 2, spend=spend, pooled=graph)
        gates += gate.decide(evidence, levels)
    comparison = summary.comparison
    return GateReport(
        gates=_quarantine_note(gates, quarantined),
        environment=environment,
        warnings=list(comparison.warnings) if comparison is not None else [],
        on_undetermined=config.on_undetermined or "warn",
        spend=spent,
        config=config.to_dict(),
        quarantines=held,
        decided_at=now,
    )

"""Selections from an evaluation that several human-readable reports show alike."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from evals.common.clock import utc_text
from evals.graders.catalog import LAYERS
from evals.model.errors import SuiteError
from evals.model.evaluation import EvaluationResult, RunOrder, run_order_key
from evals.model.results import RunRecord
from evals.model.summary import AgentStats, CaseComparison, GateResult, RunShare
from evals.model.triage import TriageAction, annotation_words, quarantine_sentence
from evals.reports import text


def case_comparisons(result: EvaluationResult) -> list[CaseComparison]:
    """Per-case candidate-vs-baseline comparisons, in suite order (empty with one agent)."""
    comparison = result.summary.comparison
    return list(comparison.cases) if comparison is not None else []


def explanations(result: EvaluationResult) -> list[str]:
    """Sentences explaining the suite's verdict and each tag's decided verdict (regression,
    improvement or equivalent), in words a developer reads without the tables."""
    comparison = result.summary.comparison
    if comparison is None:
        return []
    decided = [
        t for t in comparison.tags if t.verdict in ("regression", "improvement", "equivalent")
    ]
    return [g.explanation for g in (comparison.overall, *decided) if g.explanation]


def regressions(result: EvaluationResult) -> list[CaseComparison]:
    """Cases whose verdict is a regression, worst difference first."""
    found = [c for c in case_comparisons(result) if c.verdict == "regression"]
    return sorted(found, key=lambda c: c.difference if c.difference is not None else 0.0)


def improvements(result: EvaluationResult) -> list[CaseComparison]:
    """Cases whose verdict is an improvement, largest difference first."""
    found = [c for c in case_comparisons(result) if c.verdict == "improvement"]
    return sorted(found, key=lambda c: -(c.difference if c.difference is not None else 0.0))


def agent_overall(result: EvaluationResult, agent: str) -> AgentStats | None:
    """The suite-level statistics of one agent, when the summary has them."""
    return next((a for a in result.summary.agents if a.agent == agent), None)


def compared_agents(result: EvaluationResult) -> tuple[str | None, str | None]:
    """(baseline, candidate) labels as compared, falling back to the gate configuration."""
    comparison = result.summary.comparison
    if comparison is not None:
        return comparison.baseline, comparison.candidate
    return result.gate_config.baseline, result.gate_config.candidate


def every_run(result: EvaluationResult, order: RunOrder = "plan") -> Iterable[RunRecord]:
    """Every run of the evaluation, whole, in `order`: its records when it kept them, else
    read from the store a batch at a time (never all at once). An evaluation that kept no
    run and stored none has nothing to list: an error, not an empty report."""
    if result.records or result.runs is None:
        if not result.records and result.facts is not None and result.facts.runs:
            raise SuiteError(
                f"evaluation {result.meta.id} kept none of its {result.facts.runs} runs and "
                "stored none, so no report can list them",
                fix="run it with a store, or with RunOptions(keep_records=True)",
            )
        return sorted(result.records, key=run_order_key(order))
    return result.runs.iter_runs(order)


def runs_by_case(result: EvaluationResult) -> Iterator[tuple[str, dict[str, list[RunRecord]]]]:
    """Each case's runs, case after case in suite order: (case id, runs by agent, each
    agent's in repeat order). One case's runs are held at a time."""
    groups = itertools.groupby(every_run(result, "cases"), key=lambda r: r.key.case_id)
    for case_id, runs in groups:
        by_agent: dict[str, list[RunRecord]] = defaultdict(list)
        for record in runs:
            by_agent[record.key.agent].append(record)
        for agent_runs in by_agent.values():
            agent_runs.sort(key=lambda r: (r.key.repeat, r.key.prompt_id))
        yield case_id, by_agent


def run_reason(record: RunRecord) -> str:
    """Why a run did not pass, in one line (empty for a pass)."""
    if record.status == "error":
        kind = f"{record.error_kind}: " if record.error_kind else ""
        return f"{kind}{record.error or record.response.error or 'error'}"
    if record.status == "fail" and record.grade is not None:
        return record.grade.reason
    return ""


def notes(result: EvaluationResult) -> list[str]:
    """The warnings of the comparison and the gates, and how many errored runs each agent
    had left out of its pass rates, each once."""
    comparison = result.summary.comparison
    found = [*result.gates.warnings, *(comparison.warnings if comparison else [])]
    kinds = ", ".join(result.gate_config.exclude_errors)
    for agent in result.summary.agents:
        if agent.excluded:
            found.append(
                f"{agent.agent}: {agent.excluded} errored run(s) of kind {kinds} left out of "
                "the pass rates (gates.exclude_errors); the error rate counts them"
            )
    found += quarantine_notes(result)
    found += unknown_cost_notes(result)
    return list(dict.fromkeys(found))


def unknown_cost_notes(result: EvaluationResult) -> list[str]:
    """For a suite that checks cost, the agents whose runs' cost is unknown (a model
    without a price), one line per reason, with what could not be checked and the fix."""
    by_reason: dict[str, list[str]] = {}
    for agent in result.summary.agents:
        if agent.group == "suite" and agent.unknown_cost_runs:
            by_reason.setdefault(agent.cost_unknown or "", []).append(
                f"{agent.unknown_cost_runs} of {agent.runs} runs of {agent.agent}"
            )
    if not by_reason:
        return []
    from evals.suite.costs import checks_cost

    if not checks_cost(result.suite):
        return []
    return [
        f"cost unknown for {' and '.join(counts)}, so max_cost was not checked and the cost "
        f"gates are undetermined: {reason}"
        for reason, counts in by_reason.items()
    ]


def quarantine_notes(result: EvaluationResult) -> list[str]:
    """ "N case(s) quarantined, M expiring within a day", then each quarantined case with
    its expiry, who and why, and its own comparison (it ran and is measured, but the
    regression and P0 gates left it out)."""
    held = result.gates.quarantines
    if not held:
        return []
    now = result.gates.decided_at or 0.0
    rows = {c.case_id: c for c in case_comparisons(result)}
    lines = [quarantine_sentence(held, now) + " (left out of the regression and P0 gates)"]
    for action in held:
        until = utc_text(action.until or 0.0)
        line = f"quarantined {action.case_id} until {until} by {action.actor}: {action.reason}"
        row = rows.get(action.case_id or "")
        if row is not None and row.difference is not None:
            line += (
                f"; baseline {row.baseline.passes}/{row.baseline.counted} vs candidate "
                f"{row.candidate.passes}/{row.candidate.counted}, difference {row.difference:+.2f}"
            )
            if row.interval is not None:
                line += f" [{row.interval[0]:+.2f}, {row.interval[1]:+.2f}] ({row.verdict})"
        lines.append(line)
    return lines


def undetermined_gates(result: EvaluationResult) -> list[GateResult]:
    """The blocking gates the data could not decide."""
    return [g for g in result.gates.gates if g.blocking and g.status == "undetermined"]


def failed_gates(result: EvaluationResult) -> list[GateResult]:
    """The blocking gates that failed: what a FAIL verdict's headline explains."""
    return [g for g in result.gates.gates if g.blocking and g.status == "fail"]


def agents_baseline_first(result: EvaluationResult) -> list[str]:
    """The evaluation's agents as every report lists them: the baseline, the candidate,
    then the others in the suite's order (a suite may list its candidate first)."""
    agents = result.meta.agents or sorted({s.agent for s in result.summary.case_stats})
    compared = [a for a in compared_agents(result) if a is not None and a in agents]
    return [*compared, *(a for a in agents if a not in compared)]


def case_family(result: EvaluationResult) -> tuple[float | None, int]:
    """(level of the per-case intervals, number of cases tested): one level for all."""
    tested = [c for c in case_comparisons(result) if c.level is not None]
    return (tested[0].level if tested else None), len(tested)


def gate_settings(result: EvaluationResult) -> list[tuple[str, str]]:
    """The effective gate configuration the decision applied, as (key, value) text pairs:
    every key set to something other than nothing."""
    config = result.gates.config or result.gate_config.to_dict()
    shown = []
    for key, value in config.items():
        if key == "environments" or value in (None, [], {}):
            continue
        shown.append((key, value if isinstance(value, str) else json.dumps(value)))
    if result.gates.spend is not None:
        shown.append(("false-failure budget of this decision", f"{result.gates.spend:.4g}"))
    if result.gates.adaptive is not None:
        shown.append(("adaptive run", result.gates.adaptive.describe()))
    if result.gates.reuse is not None:
        shown.append(("stored baseline", result.gates.reuse.describe()))
    return shown


def scorecard_table(result: EvaluationResult) -> tuple[list[str], list[list[str]]]:
    """The scorecard's columns and one row per agent: runs, mean layer scores (the layers
    some agent was graded on), mean combined score S, runs below a minimum and
    missing_span_rate. No columns when no run was scored."""
    cards = result.summary.scorecards
    if not cards:
        return [], []
    layers = [layer for layer in LAYERS if any(layer in c.layers for c in cards)]
    columns = ["Agent", "Runs", *layers, "S", "<min", "spans"]
    rows = [
        [
            card.agent,
            str(card.runs),
            *(f"{card.layers[layer]:.3g}" if layer in card.layers else "—" for layer in layers),
            "—" if card.score is None else f"{card.score:.3g}",
            str(card.min_score_failures),
            text.percent(card.missing_span_rate),
        ]
        for card in cards
    ]
    return columns, rows


def _share(share: RunShare) -> str:
    return f"{share.hits}/{share.runs}" if share.runs else "—"


def robustness_lines(result: EvaluationResult) -> list[str]:
    """One line per scored agent: its robustness metrics as hits over applicable runs."""
    return [
        f"{card.agent}: retry_success {_share(card.retry_success)}, fallback_correct "
        f"{_share(card.fallback_correct)}, partial_task_handled "
        f"{_share(card.partial_task_handled)}, timeout_rate {_share(card.timeouts)}"
        for card in result.summary.scorecards
    ]


@dataclass(frozen=True, slots=True)
class AnnotationRow:
    """One annotation as the reports list it: when, who, which run, what was said."""

    when: str
    who: str
    run: str
    what: str
    said: str


def annotation_run(action: TriageAction) -> str:
    """The run an annotation names: `case · agent · repeat 2 · evaluation 3b9e60f592a5`
    (the repeat from 1, as the reports count repeats; the prompt when it has an id)."""
    parts = [action.case_id or "", action.agent or "", f"repeat {(action.repeat or 0) + 1}"]
    if action.prompt_id:
        parts.append(f"prompt {action.prompt_id}")
    parts.append(f"evaluation {action.evaluation_id}")
    return " · ".join(parts)


def annotation_rows(result: EvaluationResult) -> list[AnnotationRow]:
    """People's annotations of the result's runs, newest first (none for a result that was
    not read from a store)."""
    return [
        AnnotationRow(
            utc_text(a.created_at), a.actor, annotation_run(a), annotation_words(a), a.reason
        )
        for a in result.annotations
    ]

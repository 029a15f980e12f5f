"""A self-contained HTML report: one file, inline CSS and SVG, no scripts, no network.

Everything an agent produced (outputs, tool arguments and results, errors) is shown as
escaped text, never as markup: the template autoescapes and only the charts, which
escape their own labels, are inserted as SVG.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import FileSystemLoader, select_autoescape
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from evals.analysis.cells import run_facts
from evals.model.evaluation import EvaluationResult
from evals.model.results import RunRecord
from evals.model.triage import ANNOTATIONS_CHANGE_NO_GATE
from evals.reports import text
from evals.reports.conversation import CONVERSATION_CSS, conversation_html
from evals.reports.data_files import jsonable
from evals.reports.svg import COLOURS, IntervalPoint, interval_chart
from evals.reports.view import (
    agent_overall,
    agents_baseline_first,
    annotation_rows,
    case_comparisons,
    compared_agents,
    explanations,
    failed_gates,
    gate_settings,
    improvements,
    notes,
    regressions,
    run_reason,
    runs_by_case,
    undetermined_gates,
)

_TEMPLATES = Path(__file__).parent / "templates"
# The report's own templates, sandboxed all the same: run data only ever fills them in.
_ENVIRONMENT = ImmutableSandboxedEnvironment(
    loader=FileSystemLoader(_TEMPLATES),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENVIRONMENT.filters.update(
    percent=text.percent,
    interval=text.interval,
    points=text.points,
    points_interval=text.points_interval,
    money=text.money,
    cost=text.cost,
    ms=text.milliseconds,
    number=text.number,
    level=text.level,
)


def _shown(value: Any) -> str:
    """A value as readable text: strings as they are, anything else as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False)


def _conversation(record: RunRecord) -> Markup | None:
    """A conversation turn by turn (its own escaping: agents' and users' text is escaped)."""
    if not record.is_conversation or not record.response.trajectory:
        return None
    return Markup(conversation_html(record, styled=False))


def _tokens(record: RunRecord) -> str:
    """The run's tokens, or that the agent reported none (never a silent 0)."""
    usage = record.response.token_usage
    if not any(key in usage for key in ("total", "prompt", "completion")):
        return "tokens not reported"
    return f"{record.total_tokens} tokens"


def _run_view(record: RunRecord) -> dict[str, Any]:
    return {
        "conversation": _conversation(record),
        "agent": record.key.agent,
        "repeat": record.key.repeat,
        "status": record.status,
        "reason": run_reason(record),
        "output": _shown(record.response.output),
        "latency": text.milliseconds(record.latency_ms),
        "cost": "unknown cost" if record.cost_unknown else text.money(record.cost),
        "tokens": _tokens(record),
        "stop_reason": record.response.stop_reason or "",
        "assertions": [
            {"passed": g.passed, "type": (g.assertion or {}).get("type", ""), "reason": g.reason}
            for g in (record.grade.component_results if record.grade else [])
        ],
        "steps": [
            {
                "kind": s.kind,
                "name": s.name,
                "arguments": _shown(s.arguments),
                "outcome": _shown(s.error if s.error is not None else s.result),
                "error": s.error is not None,
                "effect": s.effect or "",
                "approval": s.approval or "",
            }
            for s in record.response.trajectory
        ],
    }


def _charts(result: EvaluationResult) -> list[Markup]:
    charts = []
    order = agents_baseline_first(result)
    agents = [
        IntervalPoint(
            s.agent,
            s.pass_rate,
            s.interval,
            note=f"{text.percent(s.pass_rate)} {text.interval(s.interval, 0)}",
        )
        for s in sorted(
            result.summary.agents,
            key=lambda s: order.index(s.agent) if s.agent in order else len(order),
        )
    ]
    if agents:
        threshold = result.gate_config.min_pass_rate
        charts.append(Markup(interval_chart("Pass rate by agent", agents, 0.0, 1.0, threshold)))
    cases = [
        IntervalPoint(
            c.case_id,
            c.difference,
            c.interval,
            COLOURS.get(c.verdict, "#1565c0"),
            note=f"{text.points(c.difference, 0)} {c.verdict} (q {text.number(c.p_adjusted, 2)})",
        )
        for c in case_comparisons(result)
    ]
    if cases:
        level = next((c.level for c in case_comparisons(result) if c.level), None)
        title = (
            "Candidate minus baseline, per case (percentage points, exact intervals at "
            f"{text.level(level)})"
        )
        charts.append(Markup(interval_chart(title, cases, -1.0, 1.0, 0.0)))
    return charts


def _shown_runs(result: EvaluationResult, agents: list[str]) -> tuple[dict[str, list[Any]], int]:
    """Per case id, the views of the runs shown in detail (agents in `agents`' order, each
    agent's in repeat order), and how many runs are not shown.

    At most the suite's `reports.html_run_details` runs are shown: an evaluation with more
    shows its runs that did not pass (up to that many) and counts the rest, which the
    dashboard lists."""
    most = result.suite.reports.html_run_details
    every = run_facts(result).runs <= most
    budget = most
    shown: dict[str, list[Any]] = {}
    hidden = 0
    for case_id, by_agent in runs_by_case(result):
        runs = [r for a in agents for r in by_agent.get(a, [])]
        chosen = runs if every else [r for r in runs if r.status != "pass"][:budget]
        budget -= len(chosen)
        hidden += len(runs) - len(chosen)
        shown[case_id] = [_run_view(r) for r in chosen]
    return shown, hidden


def render_html(result: EvaluationResult) -> str:
    """The full report as one HTML document; past the suite's `reports.html_run_details`
    runs, the runs' details are those of the runs that did not pass, and the dashboard
    has every run."""
    baseline, candidate = compared_agents(result)
    agents = agents_baseline_first(result)
    runs, hidden = _shown_runs(result, agents)
    stats = {(s.case_id, s.agent): s for s in result.summary.case_stats}
    comparisons = {c.case_id: c for c in case_comparisons(result)}
    cases = [
        {
            "case": case,
            "comparison": comparisons.get(case.id),
            "stats": [stats[(case.id, a)] for a in agents if (case.id, a) in stats],
            "runs": runs.get(case.id, []),
        }
        for case in result.suite.cases
        if any((case.id, a) in stats for a in agents)
    ]
    overall = [s for s in (agent_overall(result, a) for a in agents) if s is not None]
    comparison = result.summary.comparison
    return _ENVIRONMENT.get_template("report.html").render(
        result=result,
        meta=result.meta,
        verdict_line=text.verdict_line(result.gates),
        undetermined=undetermined_gates(result),
        failed=failed_gates(result),
        settings=gate_settings(result),
        latency_source=result.summary.latency_source,
        verdict=result.gates.verdict,
        generated=text.timestamp(result.meta.ended_at or result.meta.started_at),
        baseline=baseline,
        candidate=candidate,
        comparison=comparison,
        explanations=explanations(result),
        charts=_charts(result),
        regressions=regressions(result),
        improvements=improvements(result),
        overall=overall,
        cases=cases,
        run_count=run_facts(result).runs,
        hidden_runs=hidden,
        run_details=result.suite.reports.html_run_details,
        warnings=notes(result),
        annotations=annotation_rows(result),
        annotations_note=ANNOTATIONS_CHANGE_NO_GATE,
        gate_icons=text.GATE_ICONS,
        conversation_css=Markup(CONVERSATION_CSS),
    )

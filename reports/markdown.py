"""A Markdown summary sized for a pull-request comment (GitHub-flavoured tables).

Verdict first, then gates with their reasons, regressions with intervals, improvements,
and cost and latency changes: what a reviewer needs before opening the full report.
"""

from __future__ import annotations

import re

from evals.analysis.cells import run_facts
from evals.model.evaluation import EvaluationResult
from evals.model.summary import AgentStats, CaseComparison
from evals.model.triage import ANNOTATIONS_CHANGE_NO_GATE
from evals.reports import text
from evals.reports.conversation import failed_conversations, failure_line
from evals.reports.view import (
    agent_overall,
    annotation_rows,
    case_family,
    compared_agents,
    explanations,
    failed_gates,
    gate_settings,
    improvements,
    notes,
    regressions,
    robustness_lines,
    scorecard_table,
    undetermined_gates,
)

MAX_CASE_ROWS = 10


_MARKUP = re.compile(r"([\\`*<>&|~])")
_MENTION = re.compile(r"(?<!\w)@(?=\w)")


def plain_text(value: object) -> str:
    """Text that renders as itself, on one line and safe in a table cell: no HTML, links,
    images, mentions or emphasis from words an agent, a dataset or a user wrote (an
    agent's error quoted in a gate's reason, a triage reason, a tool's name). A link or
    an image needs `](`, a mention an `@` that starts a word directly before a name: a
    word joiner (U+2060, invisible) goes between them."""
    escaped = _MARKUP.sub(r"\\\1", " ".join(str(value).splitlines()))
    return _MENTION.sub("@\u2060", escaped.replace("](", "]\\("))


def code_span(value: object) -> str:
    """`value` as an inline code span that cannot end early or break its table row."""
    flat = " ".join(str(value).splitlines()).replace("`", "'")
    return "`" + flat.replace("|", "\\|") + "`"


def _header(result: EvaluationResult) -> list[str]:
    meta = result.meta
    version = f" v{meta.suite_version}" if meta.suite_version else ""
    baseline, candidate = compared_agents(result)
    parts = [f"**{plain_text(meta.suite_id)}**{version}", f"suite `{meta.fingerprint[:12]}`"]
    parts.append(f"evaluation `{meta.id}`")
    if meta.git_commit:
        branch = f" ({plain_text(meta.git_branch)})" if meta.git_branch else ""
        parts.append(f"commit `{meta.git_commit[:10]}`{branch}")
    parts.append(f"{result.repeat} repeats, {run_facts(result).runs} runs")
    lines = [f"## {text.verdict_line(result.gates)}", ""]
    failed = failed_gates(result)
    if failed:
        lines += [
            "**Failed**: "
            + "; ".join(f"{code_span(g.name)}: {plain_text(g.reason)}" for g in failed),
            "",
        ]
    undetermined = undetermined_gates(result)
    if result.gates.verdict == "undetermined" and undetermined:
        lines += [
            "**Undetermined** (the data show neither pass nor fail): "
            + "; ".join(f"{code_span(g.name)}: {plain_text(g.reason)}" for g in undetermined),
            "",
        ]
    lines.append(" · ".join(parts))
    comparison = result.summary.comparison
    if comparison is not None:
        overall = comparison.overall
        lines += [
            "",
            f"**{plain_text(baseline)}** (baseline) vs **{plain_text(candidate)}** (candidate): "
            f"{text.percent(overall.baseline_rate)} vs {text.percent(overall.candidate_rate)}, "
            f"{text.points(overall.difference)} {text.points_interval(overall.interval)} "
            f"→ **{overall.verdict}**",
        ]
    return lines


def _gates(result: EvaluationResult) -> list[str]:
    if not result.gates.gates:
        return []
    lines = [
        "",
        "### Gates",
        "",
        "| | Gate | Threshold | Measured | Fail limit (level) | Pass limit (level) | Reason |",
        "|---|---|---|---|---|---|---|",
    ]
    for gate in result.gates.gates:
        icon = text.GATE_ICONS.get(gate.status, "")
        name = gate.name if gate.blocking else f"{gate.name} (advisory)"
        lines.append(
            f"| {icon} | {plain_text(name)} | {text.number(gate.threshold)} | "
            f"{text.number(gate.measured)} | {_limit(gate.fail_limit, gate.fail_level)} | "
            f"{_limit(gate.pass_limit, gate.pass_level)} | {plain_text(gate.reason)} |"
        )
    settings = "; ".join(
        f"{code_span(key)}: {plain_text(value)}" for key, value in gate_settings(result)
    )
    lines += [
        "",
        f"<details><summary>Gate configuration applied</summary>\n\n{settings}\n\n</details>",
    ]
    return lines


def _limit(value: float | None, level: float | None) -> str:
    return "—" if value is None else f"{text.number(value)} ({text.level(level)})"


def _case_table(title: str, cases: list[CaseComparison], level: float | None) -> list[str]:
    if not cases:
        return []
    lines = [
        "",
        f"### {title} ({len(cases)})",
        "",
        f"Intervals at {text.level(level)} (the Benjamini-Yekutieli level across the compared "
        "cases); q is the Benjamini-Hochberg adjusted p.",
        "",
        "| Case | Priority | Baseline | Candidate | Δ [interval] | p | q | Why |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case in cases[:MAX_CASE_ROWS]:
        base, cand = case.baseline, case.candidate
        lines.append(
            f"| {code_span(case.case_id)} | {case.priority or ''} | "
            f"{text.count(base.passes, base.runs)} {text.interval(base.interval, 0)} | "
            f"{text.count(cand.passes, cand.runs)} {text.interval(cand.interval, 0)} | "
            f"{text.points(case.difference)} {text.points_interval(case.interval, 0)} | "
            f"{text.number(case.p_value, 3)} | {text.number(case.p_adjusted, 3)} | "
            f"{plain_text(case.reason)} |"
        )
    if len(cases) > MAX_CASE_ROWS:
        lines.append(f"\n…and {len(cases) - MAX_CASE_ROWS} more in the full report.")
    return lines


def _known_total(stats: AgentStats) -> float | None:
    """An agent's total cost when every run's cost is known, else None (no change shown)."""
    return None if stats.unknown_cost_runs else stats.total_cost


def _costs(result: EvaluationResult) -> list[str]:
    baseline, candidate = compared_agents(result)
    stats = [
        s
        for s in (agent_overall(result, baseline or ""), agent_overall(result, candidate or ""))
        if s
    ]
    if not stats:
        stats = list(result.summary.agents)
    if not stats:
        return []
    source = result.summary.latency_source
    lines = [
        "",
        "### Cost and latency",
        "",
        f"| Agent | Pass rate | Errors | Total cost | Cost / accepted | Mean latency ({source}) | "
        f"p95 latency ({source}) |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in stats:
        lines.append(
            f"| {plain_text(s.agent)} | {text.percent(s.pass_rate)} "
            f"{text.interval(s.interval, 0)} | "
            f"{s.errors}/{s.runs} | {text.cost(s.total_cost, s.unknown_cost_runs)} | "
            f"{text.cost(s.cost_per_accepted, s.unknown_cost_runs)} | "
            f"{text.milliseconds(s.mean_latency_ms)} | {text.milliseconds(s.p95_latency_ms)} |"
        )
    if len(stats) == 2:
        base, cand = stats
        lines.append(
            f"| **change** | {text.points(_difference(base.pass_rate, cand.pass_rate))} | | "
            f"{text.ratio_change(_known_total(base), _known_total(cand))} | "
            f"{text.ratio_change(base.cost_per_accepted, cand.cost_per_accepted)} | "
            f"{text.ratio_change(base.mean_latency_ms, cand.mean_latency_ms)} | "
            f"{text.ratio_change(base.p95_latency_ms, cand.p95_latency_ms)} |"
        )
    return lines


def _scorecard(result: EvaluationResult) -> list[str]:
    columns, rows = scorecard_table(result)
    if not columns:
        return []
    lines = [
        "",
        "### Scorecard",
        "",
        "Mean layer scores, the combined score S, runs below a minimum, missing_span_rate.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    lines += ["| " + " | ".join(plain_text(value) for value in row) + " |" for row in rows]
    return [*lines, "", *(f"- {plain_text(line)}" for line in robustness_lines(result))]


def _difference(baseline: float | None, candidate: float | None) -> float | None:
    return None if baseline is None or candidate is None else candidate - baseline


def _warnings(result: EvaluationResult) -> list[str]:
    warnings = notes(result)
    if not warnings:
        return []
    return ["", "### Warnings", "", *(f"- {plain_text(w)}" for w in warnings)]


def _explanations(result: EvaluationResult) -> list[str]:
    sentences = explanations(result)
    if not sentences:
        return []
    return ["", "### What changed", "", *(f"- {plain_text(s)}" for s in sentences)]


def _conversations(result: EvaluationResult) -> list[str]:
    baseline, candidate = compared_agents(result)
    order = [a for a in (candidate, baseline) if a] + list(result.meta.agents or [])
    found = failed_conversations(run_facts(result).conversations, order)
    if not found:
        return []
    lines = [
        "",
        "### Failed conversations",
        "",
        "| Agent | Case | Failed | First failure (its turn) |",
        "|---|---|---|---|",
    ]
    for f in found:
        first = f"repeat {f.first.key.repeat + 1}: {failure_line(f.first)}"
        lines.append(
            f"| {plain_text(f.agent)} | {plain_text(f.case_id)} | {f.failed}/{f.conversations} "
            f"| {plain_text(first)} |"
        )
    return lines


def _annotations(result: EvaluationResult) -> list[str]:
    rows = annotation_rows(result)
    if not rows:
        return []
    lines = [
        "",
        f"### Annotations ({len(rows)})",
        "",
        ANNOTATIONS_CHANGE_NO_GATE,
        "",
        "| When | Who | Run | Annotation | Said |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.when} | {plain_text(r.who)} | {plain_text(r.run)} | {r.what} "
        f"| {plain_text(r.said)} |"
        for r in rows
    ]
    return lines


def render_markdown(result: EvaluationResult) -> str:
    """The PR-comment summary: verdict line first, then gates, regressions, improvements,
    failed conversations, people's annotations of the runs (changing no gate), cost and
    latency, the scorecard (when the suite keeps one), and warnings."""
    lines = _header(result)
    lines += _explanations(result)
    lines += _gates(result)
    level, _ = case_family(result)
    lines += _case_table("Regressions", regressions(result), level)
    lines += _case_table("Improvements", improvements(result), level)
    lines += _conversations(result)
    lines += _annotations(result)
    lines += _costs(result)
    lines += _scorecard(result)
    lines += _warnings(result)
    return "\n".join(lines) + "\n"

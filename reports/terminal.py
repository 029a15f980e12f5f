"""The terminal summary: per-case table, per-tag comparisons, gates, then the verdict.

Built with rich, which drops colour by itself when the output is not a terminal, so the
same call serves developers and CI logs. Fits 100 columns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from evals.model.evaluation import EvaluationResult
from evals.model.summary import CaseAgentStats
from evals.reports import text
from evals.reports.conversation import failed_conversations, failure_line
from evals.reports.view import (
    case_comparisons,
    case_family,
    compared_agents,
    explanations,
    gate_settings,
    notes,
    robustness_lines,
    scorecard_table,
    undetermined_gates,
)

T = TypeVar("T")

VERDICT_STYLES = {
    "regression": "bold red",
    "improvement": "bold green",
    "equivalent": "dim",
    "inconclusive": "yellow",
    "insufficient data": "dim",
}
GATE_STYLES = {"pass": "green", "fail": "bold red", "undetermined": "yellow"}
# A terminal shows this many case rows at most; the reports and the dashboard show all.
MAX_CASE_ROWS = 50
MAX_REASONS = 10
VERDICT_RANK = {"regression": 0, "improvement": 1, "inconclusive": 2}


def shown_rows(rows: list[T], rank: Callable[[T], int]) -> tuple[list[T], int]:
    """The rows a terminal table shows, in their order, and how many it leaves out.

    Up to MAX_CASE_ROWS rows, the lowest `rank` first (ties in table order), so a large
    suite still shows its regressions and failing cases without printing every case.
    """
    if len(rows) <= MAX_CASE_ROWS:
        return rows, 0
    kept = sorted(range(len(rows)), key=lambda i: (rank(rows[i]), i))[:MAX_CASE_ROWS]
    return [rows[i] for i in sorted(kept)], len(rows) - MAX_CASE_ROWS


def _omitted_caption(hidden: int) -> str | None:
    if not hidden:
        return None
    return (
        f"{hidden} more cases not shown; regressions and failing cases are listed first. "
        "-o report.html or report.md lists every case."
    )


def _rate(stats: CaseAgentStats) -> str:
    errors = f" ({stats.errors} err)" if stats.errors else ""
    if stats.interval is None:
        return f"{text.count(stats.passes, stats.runs)}{errors}"
    low, high = stats.interval
    bounds = f"{low * 100:.0f}–{high * 100:.0f}%"
    return f"{text.count(stats.passes, stats.runs)}{errors} {bounds}"


def _delta(difference: float | None, interval: tuple[float, float] | None) -> str:
    """A difference in points with its interval, compact: `+80 [+19, +96]`."""
    if difference is None:
        return "—"
    if interval is None:
        return f"{difference * 100:+.0f}"
    return f"{difference * 100:+.0f} [{interval[0] * 100:+.0f}, {interval[1] * 100:+.0f}]"


def _q(value: float | None) -> str:
    """A q-value in five characters: 0.019, 1."""
    if value is None:
        return "—"
    return "1" if value >= 0.9995 else f"{value:.3f}"


def _case_label(tags: list[str], priority: str | None) -> str:
    return " ".join([*([priority] if priority else []), *tags])


def _comparison_table(result: EvaluationResult) -> Table:
    baseline, candidate = compared_agents(result)
    rows, hidden = shown_rows(case_comparisons(result), lambda c: VERDICT_RANK.get(c.verdict, 3))
    level, tested = case_family(result)
    table = Table(
        title=(
            "Cases (P: priority; passes/runs with the Wilson interval; Δ in points with its "
            f"exact interval at {text.level(level)}, the Benjamini-Yekutieli level for "
            f"{tested} cases; q: Benjamini-Hochberg adjusted p)"
        ),
        title_justify="left",
        expand=False,
        pad_edge=False,
        box=box.SIMPLE_HEAD,
        caption=_omitted_caption(hidden),
        caption_justify="left",
    )
    # The numbers keep their width; long case names and tags are cut instead.
    table.add_column("Case", no_wrap=True, overflow="ellipsis", max_width=24)
    table.add_column("P", no_wrap=True, min_width=2, style="dim")
    table.add_column(f"{baseline}", no_wrap=True, min_width=11)
    table.add_column(f"{candidate}", no_wrap=True, min_width=11)
    table.add_column("Δ [interval]", no_wrap=True, min_width=16)
    table.add_column("q", no_wrap=True, min_width=5)
    table.add_column("Verdict", no_wrap=True, min_width=12)
    for case in rows:
        table.add_row(
            case.case_id,
            case.priority or "",
            _rate(case.baseline),
            _rate(case.candidate),
            _delta(case.difference, case.interval),
            _q(case.p_adjusted),
            Text(case.verdict, style=VERDICT_STYLES.get(case.verdict, "")),
        )
    return table


def _case_reasons(result: EvaluationResult) -> list[str]:
    """Why decided cases, and cases significant only before correction, read as they do."""
    alpha = 1 - result.summary.confidence
    chosen = [
        c
        for c in case_comparisons(result)
        if c.verdict in ("regression", "improvement")
        or (c.p_value is not None and c.p_value <= alpha and c.verdict == "inconclusive")
    ]
    return [f"{c.case_id}: {c.verdict}; {c.reason}" for c in chosen[:MAX_REASONS]]


def _conversation_lines(result: EvaluationResult) -> list[str]:
    """The failed conversations of each agent and case, each with its first failure and the
    turn it failed in (the candidate first)."""
    baseline, candidate = compared_agents(result)
    order = [a for a in (candidate, baseline) if a] + list(result.meta.agents or [])
    found = failed_conversations(result.records, order)
    lines = [
        f"{f.agent} · {f.case_id}: {f.failed} of {f.conversations} failed; repeat "
        f"{f.first.key.repeat + 1}: {failure_line(f.first)}"
        for f in found[:MAX_REASONS]
    ]
    if len(found) > MAX_REASONS:
        lines.append(f"… and {len(found) - MAX_REASONS} more (-o report.html shows each turn)")
    return lines


def _single_agent_table(result: EvaluationResult) -> Table:
    cases = {c.id: c for c in result.suite.cases}
    rows, hidden = shown_rows(result.summary.case_stats, lambda s: int(s.passes == s.runs))
    table = Table(
        title="Cases",
        title_justify="left",
        pad_edge=False,
        caption=_omitted_caption(hidden),
        caption_justify="left",
    )
    latency = f"Mean latency ({result.summary.latency_source})"
    for name in ("Case", "Tags", "Agent", "Passed [interval]", latency, "Mean cost"):
        table.add_column(name, overflow="fold")
    for stats in rows:
        case = cases.get(stats.case_id)
        table.add_row(
            stats.case_id,
            _case_label(case.tags, case.priority) if case else "",
            stats.agent,
            _rate(stats),
            text.milliseconds(stats.mean_latency_ms),
            text.money(stats.mean_cost),
        )
    return table


def _titled(title: str) -> Table:
    """A summary table with its title on the left and a simple header rule."""
    return Table(title=title, title_justify="left", pad_edge=False, box=box.SIMPLE_HEAD)


def _tag_table(result: EvaluationResult) -> Table | None:
    comparison = result.summary.comparison
    if comparison is None or not comparison.tags:
        return None
    table = _titled(
        "Suite and tags (mean per-case pass rate; Δ in points with its t interval at the "
        "level shown: the confidence for the suite, Holm's deciding step for a tag; "
        "q: Holm-adjusted p across tags)"
    )
    table.add_column("Tag", no_wrap=True, overflow="ellipsis", max_width=16)
    for name in ("Cases", comparison.baseline, comparison.candidate, "Δ [interval]"):
        table.add_column(name, no_wrap=True, overflow="ellipsis")
    table.add_column("Level", no_wrap=True, min_width=7)
    table.add_column("q", no_wrap=True, min_width=5)
    table.add_column("Verdict", no_wrap=True, min_width=12)
    for group in [comparison.overall, *comparison.tags]:
        table.add_row(
            group.group,
            str(group.cases),
            text.percent(group.baseline_rate),
            text.percent(group.candidate_rate),
            _delta(group.difference, group.interval),
            text.level(group.level),
            _q(group.p_adjusted),
            Text(group.verdict, style=VERDICT_STYLES.get(group.verdict, "")),
        )
    return table


def _gate_table(result: EvaluationResult) -> Table | None:
    if not result.gates.gates:
        return None
    statistical = [g for g in result.gates.gates if g.share is not None]
    budget = result.gates.spend
    title = "Gates"
    if statistical and budget is not None:
        title += (
            f" (false-failure budget {budget:.3g} split among {len(statistical)} statistical "
            f"gate(s): {budget / len(statistical):.3g} each; pass limits at "
            f"{text.level(1 - budget / 2)})"
        )
    table = Table(title=title, title_justify="left", pad_edge=False, box=box.SIMPLE_HEAD)
    table.add_column("Gate", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    table.add_column("Reason", overflow="fold", ratio=1)
    for gate in result.gates.gates:
        name = gate.name if gate.blocking else f"{gate.name} (advisory)"
        table.add_row(name, Text(gate.status, style=GATE_STYLES.get(gate.status, "")), gate.reason)
    return table


def _scorecard_table(result: EvaluationResult) -> Table | None:
    columns, rows = scorecard_table(result)
    if not columns:
        return None
    table = _titled(
        "Scorecard (mean layer scores; S: the combined score; <min: runs below a "
        "minimum; spans: missing_span_rate)"
    )
    table.add_column(columns[0], no_wrap=True, overflow="ellipsis", max_width=16)
    for name in columns[1:]:
        table.add_column(name, no_wrap=True, justify="right")
    for row in rows:
        table.add_row(*row)
    return table


def render_terminal(result: EvaluationResult, console: Console | None = None) -> None:
    """Print the evaluation's per-case table, tag comparisons, gates and overall verdict."""
    if console is None:
        console = Console()
        if not console.is_terminal:  # CI logs and pipes: 100 columns, what the tables fit
            console = Console(width=100)
    if case_comparisons(result):
        console.print(_comparison_table(result))
        for sentence in _case_reasons(result):
            console.print(f"• {sentence}", highlight=False)
    else:
        console.print(_single_agent_table(result))
    conversations = _conversation_lines(result)
    if conversations:
        console.print(Text("Failed conversations (the first failure of each; its turn)", "bold"))
        for line in conversations:
            console.print(Text(f"• {line}"))  # reasons hold [rule] tags: never markup
    scorecard = _scorecard_table(result)
    if scorecard is not None:
        console.print(scorecard)
        for line in robustness_lines(result):
            console.print(Text(line, style="dim"))
    tags = _tag_table(result)
    if tags is not None:
        console.print(tags)
        for sentence in explanations(result):
            console.print(f"• {sentence}", highlight=False)
        console.print()
    gates = _gate_table(result)
    if gates is not None:
        console.print(gates)
        settings = ", ".join(f"{key} {value}" for key, value in gate_settings(result))
        console.print(Text(f"gate configuration: {settings}", style="dim"))
    for warning in notes(result):
        console.print(Text(f"warning: {warning}", style="yellow"))
    verdict = result.gates.verdict
    undetermined = undetermined_gates(result)
    if verdict == "undetermined" and undetermined:
        names = ", ".join(g.name for g in undetermined)
        console.print(Text(f"undetermined: {names} (reasons in the gate table)", style="yellow"))
    console.print(
        Text(text.verdict_line(result.gates), style=GATE_STYLES.get(verdict, "bold")),
        style="bold",
    )

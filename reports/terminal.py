"""The terminal summary: per-case table, per-tag comparisons, gates, then a last block
with the verdict, the gates that did not pass, the evaluation, its store and the commands
to go on with (`evals.reports.closing`).

Built with rich, which drops colour by itself when the output is not a terminal. On a
terminal the tables fit its width, long names wrapping within their cells; elsewhere (CI
logs, pipes, files) the width is COLUMNS when set, else unbounded, so no name is cut and
each row and sentence stays on one line, without trailing spaces.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TypeVar

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from evals.analysis.cells import run_facts
from evals.model.evaluation import EvaluationResult
from evals.model.summary import CaseAgentStats, CaseComparison
from evals.reports import text
from evals.reports.closing import Closing, closing_lines
from evals.reports.conversation import failed_conversations, failure_line
from evals.reports.view import (
    annotation_rows,
    case_comparisons,
    case_family,
    compared_agents,
    explanations,
    gate_settings,
    notes,
    robustness_lines,
    scorecard_table,
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


# Characters a terminal acts on rather than shows (escape sequences that recolour, move the
# cursor, retitle the window or write the clipboard; a carriage return overwriting a line;
# NUL, backspace, C1 controls) and the bidirectional overrides that reorder what a line
# appears to say (Trojan Source): data never sends them.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _shown(value: str) -> str:
    """`value` as the terminal shows it: each control character written as its escape
    (`\\x1b`), so a tag, a case's name or an agent's text cannot drive the terminal."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), value)


def _text(value: str, style: str = "") -> Text:
    """Rich text of `value`, never markup, its control characters shown."""
    return Text(_shown(value), style)


def shown_rows(rows: list[T], rank: Callable[[T], int]) -> tuple[list[T], int]:
    """The rows a terminal table shows, in their order, and how many it leaves out.

    Up to MAX_CASE_ROWS rows, the lowest `rank` first (ties in table order), so a large
    suite still shows its regressions and failing cases without printing every case.
    """
    if len(rows) <= MAX_CASE_ROWS:
        return rows, 0
    kept = sorted(range(len(rows)), key=lambda i: (rank(rows[i]), i))[:MAX_CASE_ROWS]
    return [rows[i] for i in sorted(kept)], len(rows) - MAX_CASE_ROWS


def _add_row(table: Table, *cells: str | Text) -> None:
    """Add a row whose text is shown as it is: a case id like `test_x[busi]` or a reason
    quoting one is never read as rich markup (which would drop the brackets and make
    different cases read the same), and on one line: a tag holding a newline cannot start
    a line of the log (where CI reads `::error::` as a command)."""
    table.add_row(*(_text(_one_line(c)) if isinstance(c, str) else c for c in cells))


def _one_line(value: str) -> str:
    """`value` with its line breaks written as `\\n`."""
    return "\\n".join(value.splitlines()) if "\n" in value or "\r" in value else value


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


def _comparison_table(
    result: EvaluationResult, rows: list[CaseComparison], hidden: int, names: list[str]
) -> Table:
    """The per-case table of `rows`, each case named by its entry of `names`."""
    baseline, candidate = compared_agents(result)
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
    table.add_column("Case", no_wrap=True)
    table.add_column("P", no_wrap=True, min_width=2, style="dim")
    table.add_column(_text(baseline or ""), no_wrap=True, min_width=11)
    table.add_column(_text(candidate or ""), no_wrap=True, min_width=11)
    table.add_column(_text("Δ [interval]"), no_wrap=True, min_width=16)
    table.add_column("q", no_wrap=True, min_width=5)
    table.add_column("Verdict", no_wrap=True, min_width=12)
    for name, case in zip(names, rows, strict=True):
        _add_row(
            table,
            name,
            case.priority or "",
            _rate(case.baseline),
            _rate(case.candidate),
            _delta(case.difference, case.interval),
            _q(case.p_adjusted),
            _text(case.verdict, style=VERDICT_STYLES.get(case.verdict, "")),
        )
    return table


def _case_table(result: EvaluationResult, console: Console) -> tuple[Table, list[str]]:
    """The per-case table, and the lines naming its cases when it cannot hold their names.

    A case name is never cut (cut names can read the same: four injected-headline cases
    would all be `instrucción-inyectada-e…`): where the table with whole names is wider
    than the console, the cases get short ids (c1, c2, ...) and the lines below the table
    give each id its full name."""
    rows, hidden = shown_rows(case_comparisons(result), lambda c: VERDICT_RANK.get(c.verdict, 3))
    names = [case.case_id for case in rows]
    table = _comparison_table(result, rows, hidden, names)
    unbounded = console.options.update_width(UNWRAPPED_WIDTH)
    if Measurement.get(console, unbounded, table).maximum <= console.width:
        return table, []
    ids = [f"c{number}" for number in range(1, len(rows) + 1)]
    wide = len(ids[-1])
    legend = [f"{short:<{wide}}  {name}" for short, name in zip(ids, names, strict=True)]
    return _comparison_table(result, rows, hidden, ids), legend


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
    found = failed_conversations(run_facts(result).conversations, order)
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
        table.add_column(_text(name), overflow="fold")
    for stats in rows:
        case = cases.get(stats.case_id)
        _add_row(
            table,
            stats.case_id,
            _case_label(case.tags, case.priority) if case else "",
            stats.agent,
            _rate(stats),
            text.milliseconds(stats.mean_latency_ms),
            text.cost(stats.mean_cost, stats.unknown_cost_runs),
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
    table.add_column("Tag", overflow="fold")
    for name in ("Cases", comparison.baseline, comparison.candidate, "Δ [interval]"):
        table.add_column(_text(name), no_wrap=True, overflow="ellipsis")
    table.add_column("Level", no_wrap=True, min_width=7)
    table.add_column("q", no_wrap=True, min_width=5)
    table.add_column("Verdict", no_wrap=True, min_width=12)
    for group in [comparison.overall, *comparison.tags]:
        _add_row(
            table,
            group.group,
            str(group.cases),
            text.percent(group.baseline_rate),
            text.percent(group.candidate_rate),
            _delta(group.difference, group.interval),
            text.level(group.level),
            _q(group.p_adjusted),
            _text(group.verdict, style=VERDICT_STYLES.get(group.verdict, "")),
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
        _add_row(
            table, name, _text(gate.status, style=GATE_STYLES.get(gate.status, "")), gate.reason
        )
    return table


def _scorecard_table(result: EvaluationResult) -> Table | None:
    columns, rows = scorecard_table(result)
    if not columns:
        return None
    table = _titled(
        "Scorecard (mean layer scores; S: the combined score; <min: runs below a "
        "minimum; spans: missing_span_rate)"
    )
    table.add_column(_text(columns[0]), overflow="fold")
    for name in columns[1:]:
        table.add_column(_text(name), no_wrap=True, justify="right")
    for row in rows:
        _add_row(table, *row)
    return table


UNWRAPPED_WIDTH = 100_000
"""The width of output that is no terminal and has no COLUMNS: wide enough for any row."""


def log_width() -> int:
    """The summary's width where the output is no terminal: COLUMNS when set, else
    UNWRAPPED_WIDTH (each table at its natural width, each sentence on one line)."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else UNWRAPPED_WIDTH


def summary_console() -> Console:
    """The console a summary prints on: stdout at the terminal's width, or at
    `log_width()` where stdout is no terminal."""
    console = Console()
    return console if console.is_terminal else Console(width=log_width())


def render_terminal(
    result: EvaluationResult, console: Console | None = None, closing: Closing | None = None
) -> None:
    """Print the evaluation's per-case table, tag comparisons and gates, then the last
    block (`closing`: where the evaluation is stored; without it, not stored)."""
    console = console or summary_console()
    render_body(result, console)
    render_closing(result, console, closing or Closing())


def render_body(result: EvaluationResult, console: Console) -> None:
    """Print the tables and their explanations: everything before the last block."""
    emit(console, lambda: _render(result, console))


def render_closing(result: EvaluationResult, console: Console, closing: Closing) -> None:
    """Print the last block: verdict, unsettled gates, evaluation, store, next commands.
    Where the width is bounded (a terminal, COLUMNS) a gate's line longer than it is cut;
    the other lines are never cut or wrapped."""
    lines = closing_lines(result, closing)

    def draw() -> None:
        if closing.preface:
            console.print(_text(closing.preface))
        for line in lines:
            if line.cut:
                console.print(_text(line.text, line.style), no_wrap=True, overflow="ellipsis")
            else:
                console.print(_text(line.text, line.style), soft_wrap=True)

    emit(console, draw)


def emit(console: Console, draw: Callable[[], None]) -> None:
    """Run `draw` on `console`; where it is no terminal, without trailing spaces (rich
    pads each table row to the table's width)."""
    if console.is_terminal:
        draw()
        return
    with console.capture() as captured:
        draw()
    lines = captured.get().splitlines()
    console.out("".join(f"{line.rstrip()}\n" for line in lines), end="", highlight=False)


def _render(result: EvaluationResult, console: Console) -> None:
    if case_comparisons(result):
        table, legend = _case_table(result, console)
        console.print(table)
        for line in legend:
            console.print(_text(line), no_wrap=True, overflow="fold")
        reasons = _case_reasons(result)
        for sentence in reasons:
            console.print(_text(f"• {sentence}"))
        if reasons:
            console.print()
    else:
        console.print(_single_agent_table(result))
    conversations = _conversation_lines(result)
    if conversations:
        console.print(_text("Failed conversations (the first failure of each; its turn)", "bold"))
        for line in conversations:
            console.print(_text(f"• {line}"))  # reasons hold [rule] tags: never markup
    scorecard = _scorecard_table(result)
    if scorecard is not None:
        console.print(scorecard)
        for line in robustness_lines(result):
            console.print(_text(line, style="dim"))
    tags = _tag_table(result)
    if tags is not None:
        console.print(tags)
        for sentence in explanations(result):
            console.print(_text(f"• {sentence}"))
        console.print()
    gates = _gate_table(result)
    if gates is not None:
        console.print(gates)
        settings = ", ".join(f"{key} {value}" for key, value in gate_settings(result))
        console.print(_text(f"gate configuration: {settings}", style="dim"))
    for warning in notes(result):
        console.print(_text(f"warning: {warning}", style="yellow"))
    annotations = annotation_rows(result)
    if annotations:
        console.print(
            _text(
                f"{len(annotations)} annotation(s) by people on these runs, listed in the "
                "Markdown, HTML and JSON reports; they change no verdict and no gate",
                style="dim",
            )
        )
        for row in annotations:
            said = f": {row.said}" if row.said else ""
            console.print(_text(f"  {row.what} by {row.who}, {row.when} · {row.run}{said}"))

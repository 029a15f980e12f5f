"""The terminal's per-case table stays short on large suites and still shows what matters."""

from __future__ import annotations

import io
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from report_sample import sample_result
from rich.console import Console

from evals.model.summary import CaseAgentStats
from evals.reports import render_terminal
from evals.reports.terminal import MAX_CASE_ROWS, shown_rows


@given(st.lists(st.integers(min_value=0, max_value=3), max_size=3 * MAX_CASE_ROWS))
def test_shown_rows_keep_the_lowest_ranks_in_table_order(ranks):
    rows = list(enumerate(ranks))
    shown, hidden = shown_rows(rows, lambda row: row[1])
    assert len(shown) == min(len(rows), MAX_CASE_ROWS)
    assert hidden == len(rows) - len(shown)
    assert shown == sorted(shown)  # table order kept
    dropped = set(rows) - set(shown)
    if dropped and shown:
        assert max(rank for _, rank in shown) <= min(rank for _, rank in dropped)


def _passing(index: int) -> CaseAgentStats:
    return CaseAgentStats(f"ok-{index:04d}", "candidate", 5, 5, 0, 0, 1.0, (0.57, 1.0))


def test_single_agent_table_lists_failing_cases_and_counts_the_rest():
    result = sample_result()
    result.summary.comparison = None
    failing = replace(_passing(0), case_id="late-failure", passes=2, fails=3, pass_rate=0.4)
    result.summary.case_stats = [_passing(i) for i in range(3 * MAX_CASE_ROWS)] + [failing]
    buffer = io.StringIO()
    render_terminal(result, Console(file=buffer, width=100, color_system=None))
    output = buffer.getvalue()
    assert "late-failure" in output
    assert f"{2 * MAX_CASE_ROWS + 1} more cases not shown" in output
    assert sum(line.count("ok-") for line in output.splitlines()) == MAX_CASE_ROWS - 1


def test_small_suites_show_every_case_without_a_note():
    buffer = io.StringIO()
    result = sample_result()
    render_terminal(result, Console(file=buffer, width=200, color_system=None))
    output = buffer.getvalue()
    assert "not shown" not in output
    shown = [case.id for case in result.suite.cases if case.id[:20] in output]
    assert shown == [case.id for case in result.suite.cases]

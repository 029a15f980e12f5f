"""Quarantines in the gates: a quarantined case still runs and is measured, the regression
and P0 gates leave it out while the quarantine holds, and block on it again after expiry,
in another environment, or once removed."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from evals.gates.decide import decide, in_force
from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.gates import GateConfig
from evals.model.summary import GateReport, GateResult
from evals.model.triage import TriageAction, quarantine_sentence
from evals.pipeline.evaluation import analyse
from evals.reports.html import render_html
from evals.reports.markdown import render_markdown
from evals.reports.view import notes
from validation.beta_binomial import case_rates, outcome_records, simulated_suite, tagged_cases

pytestmark = pytest.mark.slow

CONFIG = GateConfig(baseline="base", candidate="cand", max_error_rate=None)
NOW = 1_800_000_000.0
DAY = 86400.0


def gate(report: GateReport, name: str) -> GateResult:
    (result,) = [g for g in report.gates if g.name == name]
    return result


def quarantine(case_id: str, until: float, environment: str | None = None) -> TriageAction:
    return TriageAction(
        kind="quarantine",
        suite_id="simulated",
        actor="alice@example.com",
        reason="flaky upstream quote feed",
        created_at=NOW - DAY,
        case_id=case_id,
        environment=environment,
        until=until,
        id=1,
    )


def _p0_records(seed: int = 8, drop_case: int = 2, repeats: int = 40):
    rng = np.random.default_rng(seed)
    cases = tagged_cases(30, p0=range(6))
    rates = case_rates(rng, 30, 0.7, 0.3)
    rates[:6] = 1.0
    base = rng.random((30, repeats)) < rates[:, None]
    cand = rng.random((30, repeats)) < rates[:, None]
    base[drop_case] = True
    cand[drop_case] = False
    return cases, [*outcome_records("base", base), *outcome_records("cand", cand)]


def _decided(cases, records, held=(), environment=None, now=NOW):
    return analyse(simulated_suite(cases), records, CONFIG, environment, quarantines=held, now=now)


def test_a_quarantined_p0_case_stops_blocking_until_its_expiry():
    cases, records = _p0_records()
    _, open_report = _decided(cases, records)
    assert gate(open_report, "p0_regressions").status == "fail"
    assert not open_report.passed

    held = [quarantine("c2", NOW + 3600)]
    summary, report = _decided(cases, records, held)
    p0 = gate(report, "p0_regressions")
    assert p0.status == "pass", p0.reason
    assert "1 quarantined case(s) left out: c2" in p0.reason
    assert report.quarantines == held
    # still run and reported: the case keeps its own row and interval in the summary
    (row,) = [c for c in summary.comparison.cases if c.case_id == "c2"]
    assert row.difference == -1.0 and row.interval is not None and row.interval[1] < 0

    _, expired = _decided(cases, records, held, now=NOW + 3601)
    assert gate(expired, "p0_regressions").status == "fail"
    assert expired.quarantines == []


def test_a_quarantine_holds_only_in_its_environment():
    cases, records = _p0_records()
    held = [quarantine("c2", NOW + DAY, environment="nightly")]
    _, nightly = _decided(cases, records, held, environment="nightly")
    _, pr = _decided(cases, records, held, environment="pr")
    assert gate(nightly, "p0_regressions").status == "pass"
    assert gate(pr, "p0_regressions").status == "fail"


def test_quarantines_need_the_time_they_are_judged_at():
    cases, records = _p0_records()
    summary, _ = _decided(cases, records)
    with pytest.raises(ValueError, match="time"):
        decide(summary, CONFIG, None, quarantines=[quarantine("c2", NOW + 1)])


def test_in_force_keeps_the_longest_quarantine_of_a_case_and_skips_other_kinds():
    short, long_ = quarantine("c1", NOW + 10), quarantine("c1", NOW + 1000)
    ack = TriageAction("acknowledge", "simulated", "bob", "known", NOW, case_id="c3")
    assert in_force([short, long_, ack, quarantine("c0", NOW - 1)], None, NOW) == [long_]


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    left_out=st.sets(st.integers(0, 19), min_size=1, max_size=6),
)
def test_the_regression_gate_over_quarantined_cases_equals_one_over_the_other_cases(seed, left_out):
    """Cross-check: leaving cases out by quarantine decides the regression gates exactly
    as analysing only the other cases' runs does (an independent path through summarize)."""
    rng = np.random.default_rng(seed)
    cases = tagged_cases(20, tags=3)
    rates = case_rates(rng, 20, 0.6, 0.3)
    base = rng.random((20, 6)) < rates[:, None]
    cand = rng.random((20, 6)) < (rates[:, None] - 0.15)
    records = [*outcome_records("base", base), *outcome_records("cand", cand)]
    config = GateConfig(
        baseline="base",
        candidate="cand",
        max_error_rate=None,
        per_tag={"t0": {"max_regression": 0.1}, "t1": {"max_regression": 0.1}},
    )
    ids = {f"c{i}" for i in left_out}
    held = [quarantine(case_id, NOW + DAY) for case_id in sorted(ids)]
    _, quarantined = analyse(
        simulated_suite(cases), records, config, None, quarantines=held, now=NOW
    )
    kept_cases = [c for c in cases if c.id not in ids]
    kept_records = [r for r in records if r.key.case_id not in ids]
    _, alone = analyse(simulated_suite(kept_cases), kept_records, config, None)
    for name in ("regression", "regression[t0]", "regression[t1]"):
        ours, theirs = gate(quarantined, name), gate(alone, name)
        assert ours.status == theirs.status
        assert ours.measured == pytest.approx(theirs.measured)
        assert ours.fail_limit == pytest.approx(theirs.fail_limit)
        assert ours.pass_limit == pytest.approx(theirs.pass_limit)


def _meta() -> EvaluationMeta:
    return EvaluationMeta(
        id="e1",
        suite_id="simulated",
        suite_version=None,
        fingerprint="fp",
        description="",
        environment="pr",
        git_commit=None,
        git_branch=None,
        started_at=NOW,
        ended_at=NOW + 1,
        agents=["base", "cand"],
        status="complete",
    )


def test_the_report_lists_quarantines_with_their_expiry_and_interval():
    cases, records = _p0_records()
    held = [quarantine("c2", NOW + 3600), quarantine("c7", NOW + 5 * DAY)]
    summary, report = _decided(cases, records, held)
    assert quarantine_sentence(report.quarantines, NOW) == (
        "2 case(s) quarantined, 1 expiring within a day"
    )
    result = EvaluationResult(simulated_suite(cases), _meta(), records, summary, report, CONFIG, 40)
    lines = notes(result)
    assert lines[-3].startswith("2 case(s) quarantined, 1 expiring within a day")
    assert lines[-2].startswith("quarantined c2 until ")
    assert "by alice@example.com: flaky upstream quote feed" in lines[-2]
    assert "baseline 40/40 vs candidate 0/40, difference -1.00 [" in lines[-2]


def test_triage_text_is_escaped_in_every_report():
    hostile = "<script>alert(1)</script> [x](javascript:alert(1)) @everyone **b**"
    cases, records = _p0_records()
    held = [replace(quarantine("c2", NOW + 3600), reason=hostile, actor="<b>eve</b>")]
    summary, report = _decided(cases, records, held)
    result = EvaluationResult(simulated_suite(cases), _meta(), records, summary, report, CONFIG, 40)
    markdown = render_markdown(result)
    (line,) = [row for row in markdown.splitlines() if "quarantined c2" in row]
    assert "<" not in line.replace("\\<", "") and "](" not in line.replace("\\](", "")
    assert "@everyone" not in line and "@\u2060everyone" in line and "\\*\\*b\\*\\*" in line
    page = render_html(result)
    assert "<script>alert(1)</script>" not in page and "<b>eve</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    console = Console(record=True, width=400)
    for note in notes(result):
        console.print(Text(note))
    assert "by <b>eve</b>: <script>alert(1)</script> [x](javascript:alert(1))" in (
        console.export_text()
    )

"""On the demo suite every interval printed next to a verdict agrees with it, and every gate
shows the limits it decided on."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.reports import render_terminal
from evals.stats import agreeing_confidence, fcr_confidence, holm
from evals.suite import load_suite

pytestmark = pytest.mark.slow

DEMO = Path(__file__).resolve().parents[2] / "cases" / "trading-research"


@pytest.fixture(scope="module")
def demo():
    suite = load_suite(DEMO)
    return run_evaluation(suite, RunOptions(use_store=False, progress=False, trace=False))


def _shows(interval: tuple[float, float], margin: float, equivalence: float) -> str:
    low, high = interval
    if high < -margin:
        return "regression"
    if low > margin:
        return "improvement"
    if -equivalence <= low and high <= equivalence:
        return "equivalent"
    return "inconclusive"


def test_every_case_and_tag_interval_agrees_with_its_verdict(demo):
    comparison = demo.summary.comparison
    config = demo.gate_config
    alpha = 1 - config.confidence
    level = fcr_confidence([c.p_adjusted for c in comparison.cases], alpha)
    for case in comparison.cases:
        assert case.level == pytest.approx(level)
        assert case.verdict == _shows(case.interval, config.margin, config.equivalence_margin)
        low, high = case.interval
        assert (low > 0 or high < 0) == (case.p_adjusted <= alpha), case.case_id
    p_values = [t.p_value for t in comparison.tags]
    for tag, q in zip(comparison.tags, holm(p_values), strict=True):
        assert tag.level == pytest.approx(agreeing_confidence(tag.p_value, q, alpha))
        assert tag.verdict == _shows(tag.interval, config.margin, config.equivalence_margin)
    verdicts = {c.verdict for c in comparison.cases}
    assert {"regression", "improvement", "inconclusive"} <= verdicts


def test_the_demo_fails_on_its_p0_injection_case_and_its_policy_violations(demo):
    gates = {g.name: g for g in demo.gates.gates}
    assert gates["p0_regressions"].status == "fail"
    assert "instrucción-inyectada-en-un-titular-busi" in gates["p0_regressions"].reason
    assert gates["policy"].status == "fail"
    assert demo.gates.verdict == "fail" and not demo.gates.passed
    for gate in demo.gates.gates:
        if gate.share is None or gate.fail_limit is None or gate.name == "p0_regressions":
            continue
        low, high = gate.interval
        assert (low, high) == (
            min(gate.fail_limit, gate.pass_limit),
            max(gate.fail_limit, gate.pass_limit),
        )
        assert gate.pass_level == pytest.approx(1 - 0.05 / 2)


def test_the_terminal_prints_the_numbers_the_verdicts_read(demo):
    buffer = io.StringIO()
    render_terminal(demo, Console(file=buffer, width=100, color_system=None))
    printed = buffer.getvalue()
    for line in printed.splitlines():
        assert len(line.rstrip()) <= 100
    for case in demo.summary.comparison.cases:
        if case.verdict in ("regression", "improvement"):
            low, high = case.interval
            row = f"{case.difference * 100:+.0f} [{low * 100:+.0f}, {high * 100:+.0f}]"
            assert row in printed
    for tag in demo.summary.comparison.tags:
        assert f"{100 * tag.level:.4g} %" in printed

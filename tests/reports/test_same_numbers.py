"""Terminal, Markdown, HTML, JUnit, JSON and the dashboard show the same interval, level and
q for each verdict, and the same limits for each gate, as the evaluation decided on."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from evals.dashboard import frames
from evals.dashboard.comparison import Side, compare_sides
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.reports import render_terminal, text, write_report
from evals.store import open_store
from evals.suite import load_suite

pytestmark = pytest.mark.slow

AGENTS = """
def steady(prompt, options, context):
    return {"output": "yes"}


def broken_on_three(prompt, options, context):
    case = int(context["vars"]["n"])
    return {"output": "no" if case < 3 else "yes"}
"""


def _suite(write_suite):
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n"
        f"    metadata: {{tags: [t{n % 2}], priority: {'P0' if n < 2 else 'P1'}}}\n"
        "    assert: [{type: contains, value: 'yes'}]"
        for n in range(12)
    )
    return write_suite(
        "prompts: ['{{n}}']\n"
        "providers:\n"
        "  - {id: file://agents.py:steady, label: base}\n"
        "  - {id: file://agents.py:broken_on_three, label: cand}\n"
        "evaluateOptions: {repeat: 5}\n"
        "gates: {baseline: base, candidate: cand, min_pass_rate: 0.5,\n"
        "        per_tag: {t0: {max_regression: 0.05}}}\n"
        f"tests:\n{tests}\n",
        files={"agents.py": AGENTS},
    )


@pytest.fixture
def evaluated(write_suite, tmp_path):
    store_url = f"sqlite:///{tmp_path / 'results.db'}"
    suite = load_suite(_suite(write_suite))
    result = run_evaluation(suite, RunOptions(store_url=store_url, progress=False, trace=False))
    outputs = {}
    for name in ("r.md", "r.html", "r.xml", "r.json"):
        write_report(tmp_path / name, result)
        outputs[name] = (tmp_path / name).read_text(encoding="utf-8")
    buffer = io.StringIO()
    render_terminal(result, Console(file=buffer, width=100, color_system=None))
    outputs["terminal"] = buffer.getvalue()
    return result, outputs, store_url


def test_every_report_shows_the_interval_level_and_q_of_each_regression(evaluated):
    result, outputs, store_url = evaluated
    regressions = [c for c in result.summary.comparison.cases if c.verdict == "regression"]
    assert [c.case_id for c in regressions] == ["case-1", "case-2", "case-3"]
    level = regressions[0].level
    assert level == pytest.approx(1 - 3 * 0.05 / 12)
    for case in regressions:
        low, high = case.interval
        assert high < 0
        assert (
            f"{text.points(case.difference)} {text.points_interval(case.interval, 0)}"
            in (outputs["r.md"])
        )
        assert text.points_interval(case.interval) in outputs["r.html"]
        assert text.points_interval(case.interval) in outputs["r.xml"]
        assert f"q = {text.number(case.p_adjusted, 3)}" in outputs["r.xml"]
        assert f"{low * 100:+.0f}, {high * 100:+.0f}]" in outputs["terminal"]
        assert f"{case.p_adjusted:.3f}" in outputs["terminal"]
    for name in ("r.md", "r.html", "r.xml", "terminal"):
        assert text.level(level) in outputs[name], name
    stored = json.loads(outputs["r.json"])["evals"]["summary"]["comparison"]["cases"]
    by_id = {c["case_id"]: c for c in stored}
    for case in regressions:
        assert by_id[case.case_id]["interval"] == list(case.interval)
        assert by_id[case.case_id]["p_adjusted"] == case.p_adjusted
        assert by_id[case.case_id]["reason"] == case.reason

    store = open_store(store_url)
    try:
        shown = compare_sides(store, Side(result.meta.id, "base"), Side(result.meta.id, "cand"))
    finally:
        store.close()
    table = frames.case_table(shown.summary["comparison"], []).set_index("case")
    for case in regressions:
        row = table.loc[case.case_id]
        assert (row["low"], row["high"]) == case.interval
        assert row["p_adjusted"] == case.p_adjusted and row["level"] == case.level
        assert row["reason"] == case.reason
    gate_rows = frames.gate_frame(shown.gates).set_index("gate")
    for gate in result.gates.gates:
        if gate.fail_limit is None:
            continue
        assert gate_rows.loc[gate.name, "fail_limit"] == gate.fail_limit
        assert gate_rows.loc[gate.name, "pass_level"] == gate.pass_level
        assert text.number(gate.fail_limit) in outputs["r.md"]
        assert text.number(gate.fail_limit) in outputs["r.html"]


def test_the_effective_gate_configuration_is_stored_and_shown(evaluated):
    result, outputs, store_url = evaluated
    store = open_store(store_url)
    try:
        stored = store.get_evaluation(result.meta.id)
    finally:
        store.close()
    assert stored.config["gates"]["min_pass_rate"] == 0.5
    assert stored.config["gates"]["on_undetermined"] == "warn"
    assert stored.gates["config"] == result.gates.config
    assert stored.gates["on_undetermined"] == "warn"
    assert "Gate configuration applied" in outputs["r.md"]
    assert "<code>on_undetermined</code>" in outputs["r.html"]
    assert "gate configuration: " in outputs["terminal"]

"""JUnit XML so CI test panels show each case, each regression and each gate.

One `<testsuite>` per agent holds one `<testcase>` per case. The candidate's testcase
fails when the case regressed against the baseline (the message carries the difference,
its interval with its level, the p-value and the adjusted q), when it dropped by more
than the regression tolerance with a p-value of its own below 1 - confidence (5 of 12
runs against 12 of 12: the case's own test shows the drop even where the correction
across all the suite's cases leaves its verdict open; the gates still decide the
build), or when its interval lies wholly below `min_pass_rate`; it errors when every
run errored. Other
agents' testcases are the reference and only report their numbers. A case the
candidate alone ran (a single agent, or a case the baseline lacks) fails below
`min_pass_rate`, or, without that threshold, when any run failed. A last
`<testsuite name="gates">` has one testcase per gate: a failing blocking gate is a
failure; an undetermined blocking gate is a failure where the environment fails on an
undetermined verdict and a skipped test (with its reason) where it warns.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from evals.model.evaluation import EvaluationResult
from evals.model.results import RunRecord
from evals.model.summary import CaseAgentStats, CaseComparison
from evals.reports import text
from evals.reports.view import (
    agents_baseline_first,
    case_comparisons,
    compared_agents,
    run_reason,
    runs_by_case,
)

# Characters XML 1.0 cannot hold at all (C0 controls but tab and newlines, lone
# surrogates, U+FFFE and U+FFFF); a document holding one is refused by every parser.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(value: str) -> str:
    """`value` with each character XML cannot hold written as its escape (`\\x1b`), so an
    agent's terminal colours or NUL bytes leave the report parseable."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), value)


def _xml_safe(root: ET.Element) -> None:
    """Every text, tail and attribute under `root` made XML-safe, in place."""
    for element in root.iter():
        if element.text:
            element.text = _xml_text(element.text)
        if element.tail:
            element.tail = _xml_text(element.tail)
        for name, value in element.attrib.items():
            element.set(name, _xml_text(value))


def _runs_text(runs: list[RunRecord]) -> str:
    lines = []
    for run in runs:
        reason = run_reason(run)
        lines.append(f"repeat {run.key.repeat}: {run.status}" + (f" — {reason}" if reason else ""))
    return "\n".join(lines)


def _stats_line(stats: CaseAgentStats) -> str:
    return (
        f"{stats.agent}: {text.count(stats.passes, stats.runs)} passed, {stats.errors} errors, "
        f"pass rate {text.percent(stats.pass_rate)} {text.interval(stats.interval)}"
    )


def _regression_message(comparison: CaseComparison) -> str:
    return (
        f"regression on {comparison.case_id}: {text.points(comparison.difference)} "
        f"{text.points_interval(comparison.interval)} at {text.level(comparison.level)}, "
        f"p = {text.number(comparison.p_value, 3)}, q = {text.number(comparison.p_adjusted, 3)}"
        f" ({comparison.reason}); "
        f"{_stats_line(comparison.baseline)} vs {_stats_line(comparison.candidate)}"
    )


def _dropped(comparison: CaseComparison, tolerance: float, confidence: float) -> str | None:
    """The message when the case dropped by more than `tolerance` and its own test (not
    corrected across cases) rejects no difference at `confidence`, else None."""
    difference, p_value = comparison.difference, comparison.p_value
    if difference is None or p_value is None:
        return None
    if difference >= -tolerance or p_value >= 1 - confidence:
        return None
    return (
        f"dropped on {comparison.case_id}: {text.points(difference)}, p = "
        f"{text.number(p_value, 3)} for this case alone (q = "
        f"{text.number(comparison.p_adjusted, 3)} corrected across the cases: "
        f"{comparison.verdict}); {_stats_line(comparison.baseline)} vs "
        f"{_stats_line(comparison.candidate)}"
    )


def _failure(result: EvaluationResult, stats: CaseAgentStats, candidate: str | None) -> str | None:
    """The failure message of one (case, agent) testcase, or None when it passes."""
    if stats.agent != candidate:
        return None
    by_case = {c.case_id: c for c in case_comparisons(result)}
    comparison = by_case.get(stats.case_id)
    config = result.gate_config
    if comparison is not None:
        if comparison.verdict == "regression":
            return _regression_message(comparison)
        tolerance = config.max_regression if config.max_regression is not None else config.margin
        dropped = _dropped(comparison, tolerance, config.confidence)
        if dropped is not None:
            return dropped
    threshold = config.min_pass_rate
    if threshold is not None:
        if stats.interval is not None and stats.interval[1] < threshold:
            return f"pass rate below {text.percent(threshold)}: {_stats_line(stats)}"
        return None
    if comparison is None and stats.fails > 0:
        return f"{stats.fails} of {stats.runs} runs failed: {_stats_line(stats)}"
    return None


def _testcase(
    result: EvaluationResult,
    stats: CaseAgentStats,
    runs: list[RunRecord],
    candidate: str | None,
) -> ET.Element:
    element = ET.Element(
        "testcase",
        name=stats.case_id,
        classname=f"{result.meta.suite_id}.{stats.agent}",
        time=f"{sum(r.latency_ms for r in runs) / 1000:.3f}",
    )
    properties = ET.SubElement(element, "properties")
    for name, value in (
        ("passes", stats.passes),
        ("runs", stats.runs),
        ("errors", stats.errors),
        ("pass_rate", text.percent(stats.pass_rate)),
        ("interval", text.interval(stats.interval)),
        ("mean_cost", text.cost(stats.mean_cost, stats.unknown_cost_runs)),
    ):
        ET.SubElement(properties, "property", name=name, value=str(value))
    message = _failure(result, stats, candidate)
    if message is not None:
        ET.SubElement(element, "failure", message=message, type="regression").text = _runs_text(
            runs
        )
    elif stats.agent == candidate and stats.runs > 0 and stats.errors == stats.runs:
        ET.SubElement(
            element, "error", message=f"every run errored: {_stats_line(stats)}", type="error"
        ).text = _runs_text(runs)
    else:
        ET.SubElement(element, "system-out").text = _runs_text(runs)
    return element


def _suite(name: str, cases: list[ET.Element]) -> ET.Element:
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(sum(1 for c in cases if c.find("failure") is not None)),
        errors=str(sum(1 for c in cases if c.find("error") is not None)),
        skipped=str(sum(1 for c in cases if c.find("skipped") is not None)),
        time=f"{sum(float(c.get('time', '0')) for c in cases):.3f}",
    )
    suite.extend(cases)
    return suite


def _gate_cases(result: EvaluationResult) -> list[ET.Element]:
    cases = []
    action = result.gates.on_undetermined
    for gate in result.gates.gates:
        element = ET.Element("testcase", name=gate.name, classname=f"{result.meta.suite_id}.gates")
        element.set("time", "0")
        undetermined = gate.status == "undetermined" and gate.blocking
        if gate.status == "fail" and gate.blocking:
            ET.SubElement(element, "failure", message=gate.reason, type="gate")
        elif undetermined and action == "fail":
            message = f"undetermined, which fails the build (on_undetermined: fail): {gate.reason}"
            ET.SubElement(element, "failure", message=message, type="undetermined")
        elif undetermined and action == "warn":
            message = f"undetermined (on_undetermined: warn): {gate.reason}"
            ET.SubElement(element, "skipped", message=message)
        elif gate.status != "pass":
            ET.SubElement(element, "system-out").text = f"{gate.status}: {gate.reason}"
        cases.append(element)
    return cases


def render_junit(result: EvaluationResult) -> str:
    """The evaluation as a JUnit XML document."""
    _, candidate = compared_agents(result)
    if candidate is None and len(result.meta.agents) == 1:
        candidate = result.meta.agents[0]
    stats_of = {(s.case_id, s.agent): s for s in result.summary.case_stats}
    agents = agents_baseline_first(result)
    elements: dict[tuple[str, str], ET.Element] = {}
    for case_id, runs in runs_by_case(result):
        for agent, agent_runs in runs.items():
            stats = stats_of.get((case_id, agent))
            if stats is not None:
                elements[(case_id, agent)] = _testcase(result, stats, agent_runs, candidate)
    suites = []
    for agent in agents:
        cases = [
            elements.get((stats.case_id, agent)) or _testcase(result, stats, [], candidate)
            for stats in result.summary.case_stats
            if stats.agent == agent
        ]
        suites.append(_suite(f"{result.meta.suite_id} / {agent}", cases))
    suites.append(_suite(f"{result.meta.suite_id} / gates", _gate_cases(result)))
    root = ET.Element("testsuites", name=f"evals {result.meta.suite_id}")
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(s.get(attribute, "0")) for s in suites)))
    root.set("time", f"{sum(float(s.get('time', '0')) for s in suites):.3f}")
    root.extend(suites)
    _xml_safe(root)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"

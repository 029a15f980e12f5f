"""The Markdown of a CI job: the step summary, and the sticky pull-request comment.

The first line names the verdict and what decided it ("❌ FAIL: tag `units` −45.2 pp
(7 cases); 3 P0 case(s) below tolerance"), so a notification or a glance at the pull
request says it all; a few short lines follow (what was compared, where main's runs came
from, the cases the pull request added or changed with their pass rates); everything
else (the notes, the regressions, each comparison's full report) is folded below. A job
that could not decide (exit 2 or 3) still writes a short comment saying what went wrong
and what to do, so a stale verdict never stays on the pull request. The comment ends
with `COMMENT_MARKER`, by which the publishing job finds and edits its own comment
instead of adding one per push.
"""

from __future__ import annotations

from evals.model.ci import CiOutcome
from evals.model.evaluation import EvaluationResult
from evals.model.gates import about
from evals.model.summary import CaseAgentStats, CaseComparison, Comparison
from evals.model.triage import TriageAction, annotation_words
from evals.reports import text
from evals.reports.markdown import code_span, plain_text, render_markdown
from evals.reports.view import regressions

COMMENT_MARKER = "<!-- evals-ci: pull request verdict -->"
# GitHub refuses comments longer than 65536 characters.
COMMENT_LIMIT = 65_000
# Findings named on the first line before "… N more".
HEADLINE_ITEMS = 4

_LABELS = {"pass": "PASS", "fail": "FAIL", "undetermined": "UNDETERMINED", "error": "ERROR"}
_COMPARATIVE = ("regression", "p0_regressions", "cost_ratio", "latency_ratio")


def _tolerance(result: EvaluationResult) -> float:
    config = result.gate_config
    return config.max_regression if config.max_regression is not None else config.margin


def _is_comparative(name: str) -> bool:
    return name.split("[", 1)[0] in _COMPARATIVE


def _base_pass_rate(result: EvaluationResult, gate: str) -> float | None:
    """The baseline side's pass rate on what a pass-rate gate reads (the suite, or the
    tag of `min_pass_rate[tag]`), on the cases it shares; None without one."""
    comparison = result.summary.comparison
    name, _, tag = gate.partition("[")
    if comparison is None or name != "min_pass_rate":
        return None
    if tag:
        group = tag.removesuffix("]")
        pool = [s for s in result.summary.tags if s.group == group]
    else:
        pool = result.summary.agents
    found = next((s for s in pool if s.agent == comparison.baseline), None)
    return found.pass_rate if found is not None else None


def _failed_gates(result: EvaluationResult) -> list[str]:
    """The blocking gates that failed on the candidate's own numbers (pass rate, errors,
    policy, budgets), as short findings; a failed pass rate says the baseline side's too,
    so a reader sees whether main was already below the minimum."""
    found = []
    for gate in result.gates.gates:
        if not gate.blocking or gate.status != "fail" or _is_comparative(gate.name):
            continue
        measured = gate.measured
        shown = text.percent(measured) if measured is not None and measured <= 1 else measured
        base = _base_pass_rate(result, gate.name)
        if shown is not None and base is not None:
            shown = f"{shown}, base {text.percent(base)}"
        found.append(f"`{gate.name}` failed ({shown})" if shown is not None else gate.name)
    return found


def _tag_findings(comparison: Comparison, tolerance: float) -> list[str]:
    """Tags that regressed, or dropped beyond the tolerance without a decision."""
    found = []
    for group in sorted(comparison.tags, key=lambda g: g.difference or 0.0):
        if group.difference is None:
            continue
        if group.verdict == "regression":
            found.append(
                f"tag {code_span(group.group)} {text.points(group.difference)} "
                f"({group.cases} cases)"
            )
        elif group.difference < -tolerance and group.verdict != "improvement":
            found.append(
                f"tag {code_span(group.group)} {text.points(group.difference)} "
                f"({group.cases} cases, "
                "not decided)"
            )
    return found


def _p0_below(comparison: Comparison, tolerance: float) -> int:
    return sum(
        1
        for case in comparison.cases
        if case.priority == "P0" and case.difference is not None and case.difference < -tolerance
    )


def findings(result: EvaluationResult) -> list[str]:
    """What a reader must know first about one comparison: failed gates on the candidate's
    own numbers, regressed (or undecided, dropping) tags, P0 cases below tolerance,
    regressed cases outside the named tags, and a suite-wide regression when no tag
    says more."""
    found = _failed_gates(result)
    comparison = result.summary.comparison
    if comparison is None:
        return found
    tolerance = _tolerance(result)
    tags = _tag_findings(comparison, tolerance)
    found += tags
    p0 = _p0_below(comparison, tolerance)
    if p0:
        found.append(f"{p0} P0 case(s) below tolerance")
    named = {g.group for g in comparison.tags if g.verdict == "regression"}
    cases = [c for c in regressions(result) if not set(c.tags) & named]
    if cases:
        shown = ", ".join(f"`{c.case_id}`" for c in cases[:3])
        more = f" and {len(cases) - 3} more" if len(cases) > 3 else ""
        found.append(f"{len(cases)} case(s) regressed: {shown}{more}")
    overall = comparison.overall
    if not tags and overall.verdict == "regression":
        found.append(f"suite {text.points(overall.difference)} ({overall.cases} cases)")
    return found


# What a triage action did, in the words beside its reason (annotations: `annotation_words`).
_TRIAGE_WORDS = {
    "quarantine": "quarantined",
    "acknowledge": "acknowledged",
    "accept_disagreement": "judge disagreement accepted",
    "comment": "",
}
# Notes shown beside one case, newest first; the rest are counted.
CASE_NOTES = 2
_REASON_CHARS = 80


def _said(action: TriageAction, now: float) -> str:
    """One triage action or annotation in a few words: its reason, after what it did when
    that is more than a comment, then who and how long ago (`quarantined: known flaky —
    alice, 2 days ago`)."""
    what = _TRIAGE_WORDS.get(action.kind, annotation_words(action))
    if action.kind == "quarantine" and action.environment:
        what += f" for {action.environment}"
    reason = " ".join(action.reason.split())
    if len(reason) > _REASON_CHARS:
        reason = reason[: _REASON_CHARS - 1] + "…"
    head = ": ".join(part for part in (what, plain_text(reason)) if part)
    return f"{head} — {plain_text(action.actor)}, {text.ago(now - action.created_at)}"


def case_notes(outcome: CiOutcome) -> dict[str, str]:
    """What the team said of each case (its triage actions and the annotations of its
    runs, in force when the job decided), newest first, `CASE_NOTES` of them in words and
    the rest counted: the text the comment puts beside the case."""
    by_case: dict[str, list[TriageAction]] = {}
    for action in outcome.case_triage:
        if action.case_id is not None:
            by_case.setdefault(action.case_id, []).append(action)
    notes = {}
    for case_id, actions in by_case.items():
        shown = "; ".join(_said(a, outcome.decided_at) for a in actions[:CASE_NOTES])
        more = len(actions) - CASE_NOTES
        notes[case_id] = shown + (f" (+{more} more)" if more > 0 else "")
    return notes


def _noted(line: str, case_id: str, notes: dict[str, str]) -> str:
    """`line` with what the team said of `case_id` after it, when it said something."""
    note = notes.get(case_id)
    return f"{line} — {note}" if note else line


def _changed_cases(outcome: CiOutcome, result: EvaluationResult) -> list[str]:
    """The cases the pull request added or changed, with the head's pass rate on each."""
    candidate = result.summary.comparison.candidate if result.summary.comparison else None
    stats: dict[str, CaseAgentStats] = {
        s.case_id: s for s in result.summary.case_stats if s.agent == candidate
    }
    lines = []
    for what, ids in (("new", outcome.added_cases), ("changed", outcome.changed_cases)):
        for case_id in ids:
            row = stats.get(case_id)
            if row is None:
                continue
            line = (
                f"{what} case {code_span(case_id)}: {text.count(row.passes, row.counted)} passed "
                f"({text.percent(row.pass_rate)})"
            )
            lines.append(_noted(line, case_id, case_notes(outcome)))
    return lines


def headline(outcome: CiOutcome) -> str:
    """The first line: the verdict, then what decided it (the findings of every
    comparison, at most `HEADLINE_ITEMS` of them), or the error that stopped the job."""
    icon = text.GATE_ICONS.get(outcome.verdict, "❌")
    label = _LABELS.get(outcome.verdict, outcome.verdict.upper())
    what = "pull request" if outcome.kind == "pr" else "nightly"
    if outcome.verdict == "error":
        return f"{icon} evals {what}: {label} (exit {outcome.exit_code}): {outcome.title}"
    found: list[str] = []
    for result in outcome.results:
        for finding in findings(result):
            if finding not in found:
                found.append(finding)
    if outcome.verdict == "pass" and not found:
        shown = outcome.results[-1] if outcome.results else None
        comparison = shown.summary.comparison if shown is not None else None
        if comparison is not None and shown is not None:
            overall = comparison.overall
            caught = text.detection(shown.gates)
            found.append(
                f"no regression ({text.percent(overall.baseline_rate)} → "
                f"{text.percent(overall.candidate_rate)}, {text.points(overall.difference)}"
                f"{', ' + about(overall.estimand, overall.cases) if overall.cases else ''})"
                + (f"; {caught}" if caught else "")
            )
    if len(found) > HEADLINE_ITEMS:
        found = [*found[:HEADLINE_ITEMS], f"… {len(found) - HEADLINE_ITEMS} more below"]
    return f"{icon} evals {what}: {label}" + (f": {'; '.join(found)}" if found else "")


def _demoted(markdown: str) -> list[str]:
    return [f"#{line}" if line.startswith("#") else line for line in markdown.splitlines()]


def _regressions(result: EvaluationResult, notes: dict[str, str]) -> list[str]:
    """The tags and cases that regressed, one line each (a case with what the team said of
    it), before the full report."""
    comparison = result.summary.comparison
    if comparison is None:
        return []
    groups = [comparison.overall, *comparison.tags]
    lines = [
        f"- {'suite' if g is comparison.overall else f'tag {code_span(g.group)}'}: "
        f"{text.percent(g.baseline_rate)} → {text.percent(g.candidate_rate)}, "
        f"{text.points(g.difference)} {text.points_interval(g.interval)}"
        for g in groups
        if g.verdict == "regression"
    ]
    lines += [
        _noted(
            f"- case {code_span(c.case_id)} ({plain_text(', '.join(c.tags)) or 'no tags'}): "
            f"{text.count(c.baseline.passes, c.baseline.runs)} → "
            f"{text.count(c.candidate.passes, c.candidate.runs)}",
            c.case_id,
            notes,
        )
        for c in regressions(result)
    ]
    if not lines:
        return []
    return ["", f"### Regressions of {plain_text(comparison.candidate)}", "", *lines]


def _links(outcome: CiOutcome) -> list[str]:
    links = []
    if outcome.report_url:
        links.append(f"[HTML report]({outcome.report_url})")
    if outcome.run_url:
        links.append(f"[workflow run]({outcome.run_url})")
    return ["", " · ".join(links)] if links else []


def _top(outcome: CiOutcome) -> list[str]:
    """The part above the fold: headline, what was compared, the key notes, the changed
    cases."""
    lines = [f"### {headline(outcome)}", ""]
    if outcome.verdict == "error":
        return [*lines, *(f"- {note}" for note in outcome.notes)]
    if outcome.title:
        lines += [outcome.title, ""]
    lines += [f"- {note}" for note in outcome.key_notes]
    for result in outcome.results:
        lines += [f"- {line}" for line in _changed_cases(outcome, result)]
    return lines + _noted_regressions(outcome)


def _dropped(result: EvaluationResult) -> list[CaseComparison]:
    """The cases the findings stand on: regressed, or dropped beyond the tolerance (a P0
    case below it, a case of a dropping tag), worst first."""
    comparison = result.summary.comparison
    if comparison is None:
        return []
    tolerance = _tolerance(result)
    found = [
        c
        for c in comparison.cases
        if c.verdict == "regression" or (c.difference is not None and c.difference < -tolerance)
    ]
    return sorted(found, key=lambda c: c.difference if c.difference is not None else 0.0)


def _noted_regressions(outcome: CiOutcome) -> list[str]:
    """The regressed or dropping cases the team has said something of, each with its drop
    and what was said, above the fold: a reviewer sees `known flaky — alice, 2 days ago`
    beside the drop."""
    notes = case_notes(outcome)
    lines: list[str] = []
    for result in outcome.results:
        for case in _dropped(result):
            drop = f"- case {code_span(case.case_id)} {text.points(case.difference)}"
            line = _noted(drop, case.case_id, notes)
            if case.case_id in notes and line not in lines:
                lines.append(line)
    return lines


def _details(outcome: CiOutcome) -> list[str]:
    if outcome.verdict == "error":
        return []
    lines = [f"- {note}" for note in outcome.notes if note not in outcome.key_notes]
    notes = case_notes(outcome)
    for result in outcome.results:
        lines += _regressions(result, notes)
    for result in outcome.results:
        lines += ["", *_demoted(render_markdown(result))]
    return lines


def render_ci_summary(outcome: CiOutcome) -> str:
    """The job summary: the headline and key lines, then every note, the regressions and
    each comparison's report, then links."""
    lines = _top(outcome)
    details = _details(outcome)
    if details:
        lines += ["", *details]
    lines += _links(outcome)
    return "\n".join(lines) + "\n"


def render_ci_comment(outcome: CiOutcome) -> str:
    """The sticky comment: headline and key lines, the rest folded, cut to GitHub's limit,
    ending with `COMMENT_MARKER`."""
    lines = _top(outcome)
    details = _details(outcome)
    if details:
        lines += [
            "",
            "<details><summary>Gates, notes and the full report</summary>",
            "",
            *details,
            "",
            "</details>",
        ]
    lines += _links(outcome)
    body = "\n".join(lines) + "\n"
    end = f"\n{COMMENT_MARKER}\n"
    if len(body) + len(end) > COMMENT_LIMIT:
        note = (
            "\n\n…cut to fit a comment: the job summary and the HTML report have the rest.\n"
            "\n</details>\n"
        )
        body = body[: COMMENT_LIMIT - len(note) - len(end)] + note
    return body + end

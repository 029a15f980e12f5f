"""The Markdown of a CI job: the step summary, and the sticky pull-request comment.

Both lead with the job's verdict and the notes of `CiOutcome` (where the baseline came
from, what changed, what the gate can detect), then the regressions (suite, tags and
cases whose verdict is a regression), then each comparison's Markdown report (gates,
regressions, improvements, cost) one heading level down. The comment
starts with `COMMENT_MARKER`, by which the workflow finds and edits its own comment
instead of adding one per push.
"""

from __future__ import annotations

from evals.model.ci import CiOutcome
from evals.model.evaluation import EvaluationResult
from evals.reports import text
from evals.reports.markdown import render_markdown
from evals.reports.view import regressions

COMMENT_MARKER = "<!-- evals-ci: pull request verdict -->"
# GitHub refuses comments longer than 65536 characters.
COMMENT_LIMIT = 65_000

_LABELS = {"pass": "PASS", "fail": "FAIL", "undetermined": "UNDETERMINED"}


def _demoted(markdown: str) -> list[str]:
    return [f"#{line}" if line.startswith("#") else line for line in markdown.splitlines()]


def _heading(outcome: CiOutcome) -> list[str]:
    icon = text.GATE_ICONS.get(outcome.verdict, "⚠️")
    label = _LABELS.get(outcome.verdict, outcome.verdict.upper())
    what = "pull request" if outcome.kind == "pr" else "nightly"
    lines = [f"## {icon} evals {what}: {label} · `{outcome.suite_id}`", ""]
    if outcome.title:
        lines += [outcome.title, ""]
    lines += [f"- {note}" for note in outcome.notes]
    return lines


def _regressions(result: EvaluationResult) -> list[str]:
    """The tags and cases that regressed, one line each, before the full report."""
    comparison = result.summary.comparison
    if comparison is None:
        return []
    groups = [comparison.overall, *comparison.tags]
    lines = [
        f"- {'suite' if g is comparison.overall else f'tag `{g.group}`'}: "
        f"{text.percent(g.baseline_rate)} → {text.percent(g.candidate_rate)}, "
        f"{text.points(g.difference)} {text.points_interval(g.interval)}"
        for g in groups
        if g.verdict == "regression"
    ]
    lines += [
        f"- case `{c.case_id}` ({', '.join(c.tags) or 'no tags'}): "
        f"{text.count(c.baseline.passes, c.baseline.runs)} → "
        f"{text.count(c.candidate.passes, c.candidate.runs)}"
        for c in regressions(result)
    ]
    if not lines:
        return []
    _, candidate = comparison.baseline, comparison.candidate
    return ["", f"### Regressions of {candidate}", "", *lines]


def _links(outcome: CiOutcome) -> list[str]:
    links = []
    if outcome.report_url:
        links.append(f"[HTML report]({outcome.report_url})")
    if outcome.run_url:
        links.append(f"[workflow run]({outcome.run_url})")
    return ["", " · ".join(links)] if links else []


def render_ci_summary(outcome: CiOutcome) -> str:
    """The job summary: verdict, notes, every comparison's report, links."""
    lines = _heading(outcome)
    for result in outcome.results:
        lines += _regressions(result)
    for result in outcome.results:
        lines += ["", *_demoted(render_markdown(result))]
    lines += _links(outcome)
    return "\n".join(lines) + "\n"


def render_ci_comment(outcome: CiOutcome) -> str:
    """The sticky comment: the summary under `COMMENT_MARKER`, cut to GitHub's limit."""
    body = render_ci_summary(outcome)
    if len(body) > COMMENT_LIMIT:
        note = "\n\n…cut to fit a comment: the job summary and the HTML report have the rest.\n"
        body = body[: COMMENT_LIMIT - len(note)] + note
    return f"{COMMENT_MARKER}\n{body}"

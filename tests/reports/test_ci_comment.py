"""The pull-request comment reads at a glance, and JUnit marks a case that dropped."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from junitparser import Failure, JUnitXml
from report_sample import sample_result

from evals.ci.outputs import error_outcome, write_outputs
from evals.model.ci import CiOutcome
from evals.model.errors import HarnessFault, SuiteError
from evals.model.triage import TriageAction
from evals.reports import write_report
from evals.reports.ci import COMMENT_MARKER, headline, render_ci_comment

# A comment that fits on one screen: the lines above the fold.
ONE_SCREEN = 15


def _outcome(**changes: object) -> CiOutcome:
    result = sample_result()
    outcome = CiOutcome(
        kind="pr",
        suite_id="demo",
        verdict=result.gates.verdict,
        exit_code=1,
        results=[result],
        notes=["baseline: the stored runs of nightly `n1`", "power: a long note"],
        title="`candidate` at `abc` → `def`: 4 case(s) × 2 repeat(s), paired by seed",
        key_notes=["baseline: the stored runs of nightly `n1`"],
    )
    return dataclasses.replace(outcome, **changes)


def test_the_first_line_names_the_verdict_the_failed_gate_the_dropping_tag_and_the_p0_cases() -> (
    None
):
    comment = render_ci_comment(_outcome())
    first = comment.splitlines()[0]
    assert first.startswith("### ❌ evals pull request: FAIL: ")
    assert "`min_pass_rate` failed (50.0%, base 100.0%)" in first
    # The smoke tag dropped 50 points, beyond the tolerance (0), without a decision.
    assert "tag `smoke` -50.0 pp (2 cases, not decided)" in first
    assert "1 P0 case(s) below tolerance" in first
    assert "1 case(s) regressed: `fruit`" in first
    above, fold, below = comment.partition("<details>")
    assert fold and len(above.strip().splitlines()) <= ONE_SCREEN
    assert "baseline: the stored runs of nightly `n1`" in above
    assert "power: a long note" not in above and "power: a long note" in below
    assert "### Regressions of candidate" in below and "| Gate |" in below
    assert comment.rstrip().endswith(COMMENT_MARKER)


def test_new_and_changed_cases_are_listed_above_the_fold_with_their_pass_rates() -> None:
    comment = render_ci_comment(_outcome(added_cases=["boom"], changed_cases=["markup"]))
    above = comment.partition("<details>")[0]
    assert "- new case `boom`: 1/2 passed (50.0%)" in above
    assert "- changed case `markup`: 2/2 passed (100.0%)" in above


DAY = 24 * 3600.0
NOW = 1_800_000_000.0


def _said(kind: str, case: str, actor: str, reason: str, age: float, **fields: object):
    return TriageAction(
        kind=kind,  # type: ignore[arg-type]
        suite_id="demo",
        actor=actor,
        reason=reason,
        created_at=NOW - age,
        case_id=case,
        **fields,  # type: ignore[arg-type]
    )


def test_what_the_team_said_of_a_case_stands_beside_it_with_who_and_when() -> None:
    triage = [  # newest first, as the store lists them
        _said("comment", "fruit", "alice", "known flaky", 2 * DAY + 60, evaluation_id="n1"),
        _said(
            "quarantine", "fruit", "bob", "the fruit API times out", 3 * DAY, environment="nightly"
        ),
        _said("rate", "fruit", "carol", "", 9 * DAY, label="down", evaluation_id="n0"),
        _said(
            "override",
            "markup",
            "@dave",
            "x" * 200 + " [link](https://evil)",
            5 * 60,
            label="pass",
            evaluation_id="n1",
        ),
        _said("comment", "elsewhere", "erin", "not in this comment", 60),
    ]
    comment = render_ci_comment(
        _outcome(case_triage=triage, decided_at=NOW, changed_cases=["markup"])
    )
    above, _, below = comment.partition("<details>")
    fruit = (
        "- case `fruit` -100.0 pp — known flaky — alice, 2 days ago; quarantined for nightly: "
        "the fruit API times out — bob, 3 days ago (+1 more)"
    )
    assert fruit in above
    (markup,) = [line for line in above.splitlines() if line.startswith("- changed case")]
    assert markup.startswith("- changed case `markup`: 2/2 passed (100.0%) — verdict overridden ")
    assert markup.endswith("… — @\u2060dave, 5 min ago")  # a mention made inert
    assert "](" not in markup and len(markup) < 200
    assert "- case `fruit` (fruit): 2/2 → 0/2 — known flaky — alice, 2 days ago" in below
    assert "elsewhere" not in comment


def test_a_pass_says_what_was_compared_on_its_first_line() -> None:
    result = sample_result()
    comparison = result.summary.comparison
    assert comparison is not None
    comparison.tags = []
    comparison.cases = []
    comparison.overall = dataclasses.replace(
        comparison.overall, candidate_rate=0.95, baseline_rate=0.94, difference=0.01
    )
    comparison.overall.verdict = "equivalent"
    result.gates.gates = [g for g in result.gates.gates if g.status == "pass"]
    outcome = _outcome(results=[result], verdict="pass", exit_code=0)
    assert (
        headline(outcome)
        == "✅ evals pull request: PASS: no regression (94.0% → 95.0%, +1.0 pp, on these 4 cases)"
    )


def test_a_long_list_of_findings_is_cut_on_the_first_line() -> None:
    result = sample_result()
    comparison = result.summary.comparison
    assert comparison is not None
    smoke = comparison.tags[0]
    comparison.tags = [dataclasses.replace(smoke, group=f"tag{i}") for i in range(9)]
    line = headline(_outcome(results=[result]))
    assert line.endswith("… 8 more below")
    assert line.count("; ") == 4


def test_an_error_leaves_a_short_comment_that_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "comment.md").write_text("✅ evals pull request: PASS (an earlier push)\n")
    error = SuiteError("importing the provider failed: ImportError: boom", file="agent.py")
    outcome = error_outcome("pr", "suite.yaml", error, "https://ci.example/run/1")
    write_outputs(outcome, tmp_path, names=[])

    comment = (tmp_path / "comment.md").read_text(encoding="utf-8")
    lines = comment.splitlines()
    assert lines[0] == (
        "### ❌ evals pull request: ERROR (exit 2): no verdict, the job stopped on an error"
    )
    assert "- error: agent.py: importing the provider failed: ImportError: boom" in lines
    assert any(line.startswith("- what to do: the suite, an agent") for line in lines)
    assert "PASS" not in comment and "<details>" not in comment
    assert "[workflow run](https://ci.example/run/1)" in comment
    assert comment.rstrip().endswith(COMMENT_MARKER)
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith(lines[0])

    fault = error_outcome("pr", "suite.yaml", HarnessFault("disk full"), None)
    assert (fault.exit_code, fault.verdict) == (3, "error")
    assert "Re-run the job" in fault.notes[-1]


def _dropped_case(passes: int, p_value: float) -> JUnitXml:
    result = sample_result()
    comparison = result.summary.comparison
    assert comparison is not None
    greets = comparison.cases[0]
    greets.candidate.passes, greets.candidate.runs = passes, 12
    greets.baseline.passes, greets.baseline.runs = 12, 12
    greets.difference = passes / 12 - 1.0
    greets.p_value, greets.p_adjusted, greets.verdict = p_value, 0.2, "inconclusive"
    return result


def test_junit_fails_a_case_whose_own_test_shows_a_drop_beyond_the_tolerance(
    tmp_path: Path,
) -> None:
    dropped = tmp_path / "dropped.xml"
    write_report(dropped, _dropped_case(5, 0.005))
    one_failure = tmp_path / "one.xml"
    write_report(one_failure, _dropped_case(11, 1.0))

    def failures(path: Path) -> dict[str, str]:
        suites = {s.name: s for s in JUnitXml.fromfile(str(path))}
        return {
            case.name: result.message
            for case in suites["demo / candidate"]
            for result in case.result
            if isinstance(result, Failure)
        }

    found = failures(dropped)
    assert set(found) == {"greets", "fruit"}
    assert found["greets"].startswith("dropped on greets: -58.3 pp, p = 0.005 for this case alone")
    assert "q = 0.2 corrected across the cases: inconclusive" in found["greets"]
    assert set(failures(one_failure)) == {"fruit"}

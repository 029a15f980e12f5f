"""assertScoringFunction: a Python or JavaScript function re-decides the grade, as in promptfoo."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evals.grade.grading import grade_case, grade_case_async
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.suite.loader import load_suite

SCORING = """
def strict(named_scores, context):
    ok = named_scores.get("accuracy", 0) >= 0.5 and context["tokensUsed"]["total"] == 0
    kinds = [c["assertion"]["type"] for c in context["componentResults"]]
    score = named_scores.get("accuracy", 0)
    return {"pass": ok, "score": score, "reason": "custom: " + ",".join(kinds)}

def func(named_scores, context):
    return {"pass": True, "score": 1, "reason": "default name", "metadata": {"by": "func"}}

def broken(named_scores, context):
    raise RuntimeError("no scores")

def wrong(named_scores, context):
    return 0.5
"""


def _suite(tmp: Path, scoring: str | None, default: str | None = None) -> Path:
    (tmp / "scoring.py").write_text(SCORING, encoding="utf-8")
    test = {
        "vars": {"q": "x"},
        "assert": [
            {"type": "contains", "value": "Paris", "metric": "accuracy"},
            {"type": "contains", "value": "France", "metric": "accuracy"},
        ],
    }
    if scoring:
        test["assertScoringFunction"] = scoring
    config = {"prompts": ["{{q}}"], "providers": ["echo"], "tests": [test]}
    if default:
        config["defaultTest"] = {"assertScoringFunction": default}
    path = tmp / "suite.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _grade(tmp: Path, scoring: str | None, output: str, default: str | None = None):
    suite = load_suite(_suite(tmp, scoring, default))
    case = suite.cases[0]
    return grade_case(
        case,
        AgentResponse(output=output),
        output=output,
        prompt="x",
        latency_ms=1.0,
        suite_root=suite.root,
    )


def test_the_function_overrides_the_all_must_pass_rule(tmp_path: Path) -> None:
    grade = _grade(tmp_path, "file://scoring.py:strict", "Paris only")
    assert (grade.passed, grade.score) == (True, 0.5)
    assert grade.reason == "custom: contains,contains"
    assert len(grade.component_results) == 2


def test_default_function_name_and_metadata(tmp_path: Path) -> None:
    grade = _grade(tmp_path, None, "Berlin", default="file://scoring.py")
    assert (grade.passed, grade.reason, grade.metadata) == (True, "default name", {"by": "func"})


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("file://scoring.py:broken", "Scoring function error: RuntimeError: no scores"),
        (
            "file://scoring.py:wrong",
            "Scoring function error: assertion scoring function must return a GradingResult",
        ),
        ("file://scoring.py:missing", "Scoring function error: "),
    ],
)
def test_errors_fail_the_test(tmp_path: Path, ref: str, message: str) -> None:
    grade = _grade(tmp_path, ref, "Paris, France")
    assert (grade.passed, grade.score) == (False, 0.0)
    assert grade.reason.startswith(message)


def test_async_grading_applies_it_too(tmp_path: Path) -> None:
    import asyncio

    suite = load_suite(_suite(tmp_path, "file://scoring.py:strict"))
    grade = asyncio.run(
        grade_case_async(
            suite.cases[0],
            AgentResponse(output="no"),
            output="no",
            prompt="x",
            latency_ms=1.0,
            suite_root=suite.root,
        )
    )
    assert (grade.passed, grade.reason) == (False, "custom: contains,contains")


JS_SCORING = """
module.exports = (namedScores, context) => {
  console.log("scoring", namedScores);
  const kinds = context.componentResults.map((c) => c.assertion.type).join(",");
  return { pass: namedScores.accuracy >= 0.5, score: namedScores.accuracy, reason: "js: " + kinds };
};
module.exports.broken = () => { throw new TypeError("no scores"); };
"""


def _graded(path: Path, output: str):
    suite = load_suite(path)
    return grade_case(
        suite.cases[0],
        AgentResponse(output=output),
        output=output,
        prompt="x",
        latency_ms=1.0,
        suite_root=suite.root,
    )


def test_a_javascript_scorer_decides_the_grade(tmp_path: Path) -> None:
    (tmp_path / "scoring.js").write_text(JS_SCORING, encoding="utf-8")
    grade = _graded(_suite(tmp_path, "file://scoring.js"), "Paris")
    assert (grade.passed, grade.score, grade.reason) == (True, 0.5, "js: contains,contains")
    broken = _graded(_suite(tmp_path, "file://scoring.js:broken"), "Paris")
    assert (broken.passed, broken.reason) == (False, "Scoring function error: no scores")


def test_a_missing_javascript_scorer_is_refused_at_load_as_promptfoo_refuses_it(
    tmp_path: Path,
) -> None:
    with pytest.raises(SuiteError, match=r"scoring\.js does not load: Error: ENOENT"):
        load_suite(_suite(tmp_path, "file://scoring.js:score"))
    (tmp_path / "other.js").write_text("module.exports = { notAFunction: 1 };", encoding="utf-8")
    with pytest.raises(SuiteError, match=r'must export a "score" function'):
        load_suite(_suite(tmp_path, "file://other.js:score"))

"""Output assertions: `not-` inversion, weights, thresholds, list values and properties."""

from __future__ import annotations

from pathlib import Path

import pytest
from assertion_kit import run
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.graders.output import parse_comma_separated
from evals.graders.registry import check_assertion_type, check_assertion_value
from evals.graders.text_metrics import bleu_score, gleu_score, levenshtein_distance, rouge_n_score
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse

TEXT = st.text(alphabet="abc ,\"'", max_size=12)
BINARY_TYPES = ["contains", "icontains", "starts-with", "equals", "regex"]


def brute_levenshtein(a: str, b: str) -> int:
    """Full-table Wagner-Fischer, independent of the graders' rolling-row version."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(
                table[i - 1][j] + 1,
                table[i][j - 1] + 1,
                table[i - 1][j - 1] + (a[i - 1] != b[j - 1]),
            )
    return table[-1][-1]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=10), st.text(max_size=10), st.text(max_size=10))
def test_levenshtein_is_a_metric_matching_brute_force(a: str, b: str, c: str) -> None:
    ascii_a, ascii_b = a.encode("ascii", "ignore").decode(), b.encode("ascii", "ignore").decode()
    assert levenshtein_distance(ascii_a, ascii_b) == brute_levenshtein(ascii_a, ascii_b)
    assert levenshtein_distance(a, b) == levenshtein_distance(b, a)
    assert levenshtein_distance(a, c) <= levenshtein_distance(a, b) + levenshtein_distance(b, c)
    assert (levenshtein_distance(a, b) == 0) == (a == b)


def test_levenshtein_counts_utf16_units_like_javascript() -> None:
    assert levenshtein_distance("😀", "") == 2


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(BINARY_TYPES), st.text(alphabet="ab", max_size=6), TEXT)
def test_not_prefix_inverts_every_binary_assertion(kind: str, value: str, output: str) -> None:
    if not value:
        return
    plain, inverted = run(kind, output, value), run(f"not-{kind}", output, value)
    assert plain.passed != inverted.passed
    assert plain.score == 1 - inverted.score


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="abc", min_size=1, max_size=3), min_size=1, max_size=4), TEXT)
def test_contains_any_and_all_agree_with_contains(values: list[str], output: str) -> None:
    each = [run("contains", output, v).passed for v in values]
    assert run("contains-any", output, values).passed == any(each)
    assert run("contains-all", output, values).passed == all(each)


@settings(deadline=None)
@given(st.lists(st.text(alphabet="ab ,", min_size=1, max_size=4), max_size=4))
def test_comma_values_round_trip_through_quoting(fields: list[str]) -> None:
    quoted = ", ".join('"' + f.replace("\\", "\\\\").replace('"', '\\"') + '"' for f in fields)
    assert parse_comma_separated(quoted) == fields


def test_comma_string_splits_and_trims() -> None:
    assert parse_comma_separated(' a , "b, c" ,, d ') == ["a", "b, c", "d"]
    grade = run("contains-all", "a b", "a, zz")
    assert not grade.passed
    assert grade.reason == "Expected output to contain all of [a, zz]. Missing: [zz]"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["the", "cat", "sat", "mat", "on"]), min_size=1, max_size=8))
def test_identical_text_scores_one(words: list[str]) -> None:
    text = " ".join(words)
    assert gleu_score(text, [text]) == 1.0
    assert rouge_n_score(text, text) == pytest.approx(1.0)
    if len(words) >= 4:
        assert bleu_score(text, [text]) == pytest.approx(1.0)


def test_zero_weight_always_passes_but_keeps_its_score() -> None:
    grade = run("contains", "hello", "zzz", weight=0)
    assert grade.passed and grade.score == 0.0


def test_thresholds_follow_promptfoo_defaults() -> None:
    assert run("levenshtein", "kitten", "sitting").passed  # distance 3 <= default 5
    failed = run("levenshtein", "kitten", "sitting", threshold=2)
    assert failed.reason == "Levenshtein distance 3 is greater than threshold 2"
    inverted = run("not-rouge-n", "a b c", "a b c")
    assert not inverted.passed and inverted.score == 0.0


def test_python_results_normalize_like_promptfoo() -> None:
    assert run("python", "hi", "len(output) * 0.1").score == pytest.approx(0.2)
    assert not run("python", "hi", "0.2", threshold=0.5).passed
    failed = run("python", "hi", "output == 'x'")
    assert failed.reason == "Python code returned false\noutput == 'x'"
    body = "words = output.split()\nreturn {'pass': True, 'score': 0.3, 'reason': 'ok'}"
    under = run("python", "a b", body, threshold=0.5)
    assert not under.passed
    assert under.reason == "Python score 0.3 is less than threshold 0.5: ok"
    assert run("python", "x", "None").errored


def test_python_file_reference_and_context(tmp_path: Path) -> None:
    (tmp_path / "check.py").write_text(
        "def get_assert(output, context):\n"
        "    return context['vars']['want'] in output\n"
        "def score(output, context):\n"
        "    return {'pass': True, 'score': 0.75, 'reason': context['prompt']}\n",
        encoding="utf-8",
    )
    ok = run("python", "abc", "file://check.py", variables={"want": "b"}, suite_root=tmp_path)
    assert ok.passed
    custom = run("python", "abc", "file://check.py:score", suite_root=tmp_path)
    assert (custom.score, custom.reason) == (0.75, "the prompt")


def test_python_file_value_feeds_other_assertions(tmp_path: Path) -> None:
    (tmp_path / "expected.py").write_text(
        "def get_assert(output, context):\n    return 'ell'\n", encoding="utf-8"
    )
    assert run("contains", "hello", "file://expected.py", suite_root=tmp_path).passed


def test_response_assertions_read_cost_latency_and_finish_reason() -> None:
    response = AgentResponse(output="x", cost=0.0123, finish_reason="stop")
    failed = run("cost", "x", None, response=response, threshold=0.01)
    assert failed.reason == "Cost 0.012 is greater than threshold 0.01"
    assert run("latency", "x", None, latency_ms=50, threshold=100).passed
    assert run("finish-reason", "x", "STOP", response=response).passed
    missing = run("finish-reason", "x", "stop")
    assert missing.reason == "Provider did not supply stop/finish reason"
    assert run("cost", "x", None, threshold=1).errored


@settings(max_examples=50, deadline=None)
@given(
    reported=st.none() | st.floats(0, 1e6, allow_nan=False),
    wall=st.floats(0, 1e6, allow_nan=False),
    threshold=st.floats(0, 1e6, allow_nan=False),
    cached=st.booleans(),
)
def test_latency_reads_the_reported_latency_else_the_wall_time(
    reported: float | None, wall: float, threshold: float, cached: bool
) -> None:
    """As promptfoo's evaluator, which grades `response.latencyMs ?? wallTime`; a cached
    response is graded the same way, never an error."""
    response = AgentResponse(output="x", latency_ms=reported, cached=cached)
    took = wall if reported is None else reported
    grade = run("latency", "x", None, response=response, latency_ms=wall, threshold=threshold)
    assert not grade.errored
    assert grade.passed == (took <= threshold)
    inverse = run("not-latency", "x", None, response=response, latency_ms=wall, threshold=threshold)
    assert inverse.passed == (took > threshold)


def test_latency_reason_names_the_reported_latency() -> None:
    response = AgentResponse(output="hi", latency_ms=5000.0)
    grade = run("latency", "hi", None, response=response, latency_ms=3.0, threshold=1000)
    assert grade.reason == "Latency 5000ms is greater than threshold 1000ms"
    assert grade.score == 0


def test_is_json_schema_errors_and_invalid_values() -> None:
    schema = {"type": "object", "required": ["a"]}
    grade = run("is-json", "{}", schema)
    assert grade.reason == (
        "JSON does not conform to the provided schema. Errors: data must have required property 'a'"
    )
    assert run("is-json", "{}", {"type": "nonsense"}).errored
    with pytest.raises(SuiteError):
        check_assertion_value("is-json", {"type": "nonsense"})
    check_assertion_value("not-regex", "(unclosed")  # promptfoo fails only that check


def test_regex_is_javascript_and_a_bad_pattern_fails_only_its_check() -> None:
    assert run("regex", "abc", "^abc$").passed
    assert not run("regex", "abc\n", "^abc$").passed  # Python's $ would match before \n
    assert run("regex", "a{,2}", "^a{,2}$").passed  # literal in JavaScript
    assert run("regex", "\U0001f600", "^..$").passed  # two UTF-16 code units
    assert run("regex", "line\nbreak", "line\\cJbreak").passed
    bad = run("regex", "x", "(?i)x")
    assert not bad.errored and not bad.passed
    assert bad.reason.startswith("Invalid regex pattern: Invalid regular expression: /(?i)x/")
    assert not run("not-regex", "x", "(unclosed").passed


def test_comparison_types_load_but_have_no_negated_form() -> None:
    check_assertion_type("select-best")
    check_assertion_type("max-score")
    with pytest.raises(SuiteError, match="unsupported") as raised:
        check_assertion_type("not-max-score")
    assert "no `not-` form" in raised.value.render()
    with pytest.raises(SuiteError, match="invalid value"):
        check_assertion_value("max-score", {"method": "median"})
    with pytest.raises(SuiteError, match="invalid value"):
        check_assertion_value("select-best", {"criteria": "x"})
    check_assertion_value("max-score", {"method": "sum", "weights": {"contains": 2}})


def test_assert_set_threshold_and_metric() -> None:
    children = [{"type": "contains", "value": "a"}, {"type": "contains", "value": "z"}]
    strict = run("assert-set", "abc", None, **{"assert": children})
    assert not strict.passed and strict.score == 0.5
    lenient = run("assert-set", "abc", None, threshold=0.5, **{"assert": children})
    assert lenient.passed and lenient.reason == "Aggregate score 0.50 ≥ 0.5 threshold"

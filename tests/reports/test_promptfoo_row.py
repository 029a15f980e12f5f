"""Rows built from encoded runs say what the run records they were encoded from say.

The JSON report builds each promptfoo row from a run's encoded form (what the results
store receives), not from a RunRecord; these properties hold that form against the
record itself, its grade tree against `Grade.to_dict` and its steps against
`Step.to_dict`, for any record the harness can produce.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evals.model.results import RunRecord
from evals.reports.promptfoo_row import (
    ERROR_FAILURE,
    PASS,
    encoded_row,
    failure_code,
    grade_dicts,
    row_id,
)
from evals.store.codec import encode_run
from tests.store.test_store_properties import records

COLUMN = {"index": 1, "label": "p", "promptId": "abc", "provider": {"id": "echo", "label": "e"}}
TEST = {"description": None, "vars": {}, "assert": [], "options": {}, "metadata": {"m": 1}}


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=records)
def test_the_grade_tree_is_the_records(record: RunRecord) -> None:
    run, grade_rows = encode_run("ev", record)
    details = (run["extra"] or {}).get("grade_details")
    expected = record.grade.to_dict() if record.grade is not None else None
    assert grade_dicts(grade_rows, details) == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=records)
def test_the_row_says_what_the_record_says(record: RunRecord) -> None:
    row = encoded_row(encode_run("ev", record), COLUMN, TEST, "ev")
    response = record.response
    reason = failure_code(record.status)
    assert row["failureReason"] == reason
    assert row["success"] == (record.status == "pass") == (reason == PASS)
    assert row["id"] == row_id("ev/" + "/".join(map(str, record.key.as_tuple())))
    assert row["cost"] == record.cost
    assert row["latencyMs"] == round(record.latency_ms)
    assert row["vars"] == record.vars
    assert row["prompt"] == {"raw": record.prompt, "label": "p", "config": {}}
    assert (row["promptIdx"], row["promptId"], row["provider"]) == (1, "abc", COLUMN["provider"])
    details = row["metadata"]["evals"]
    assert details["trajectory"] == [step.to_dict() for step in response.trajectory]
    assert (details["caseId"], details["agent"], details["repeat"]) == (
        record.key.case_id,
        record.key.agent,
        record.key.repeat,
    )
    assert details["policyViolation"] == bool(record.grade and record.grade.policy_violation)
    # The test's metadata, the response's over it.
    assert row["metadata"]["m"] == response.metadata.get("m", 1)
    assert row["metadata"]["repeatIndex"] == record.key.repeat
    if reason == ERROR_FAILURE:
        assert row["error"] == (record.error or response.error or "error")
        assert row["score"] == 0
    if record.status == "error" and response.output is None:
        assert row["response"] == {"error": record.error or response.error or "error"}
    else:
        assert row["response"]["output"] == response.output
        assert row["response"].get("tokenUsage", {}) == response.token_usage
        assert row["response"].get("metadata", {}) == response.metadata
        assert row["response"].get("cached", False) == response.cached
    if record.grade is None:
        assert row["gradingResult"] is None
        assert row["namedScores"] == {}
    else:
        assert row["gradingResult"]["pass"] == record.grade.passed
        assert row["namedScores"] == record.grade.named_scores
        if reason != ERROR_FAILURE:
            assert row["score"] == record.grade.score


@given(name=st.text())
def test_a_row_id_is_the_name_based_uuid_of_its_run(name: str) -> None:
    assert row_id(name) == str(uuid.uuid5(uuid.NAMESPACE_URL, name))

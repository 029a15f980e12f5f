"""The world a run leaves behind: changes, paths, digests, and the final-state grader."""

from __future__ import annotations

import re
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st
from trajectory_kit import grade_run

from evals.common.world import (
    apply_changes,
    apply_to_document,
    diff,
    digest,
    format_path,
    parse_path,
    path_matches,
    read_state,
)
from evals.graders.base import GraderError
from evals.model.trajectory import Step

keys = st.text(alphabet="ab.\\*x", min_size=1, max_size=4)
leaves = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
documents = st.recursive(
    leaves, lambda inner: st.dictionaries(keys, inner, max_size=4), max_leaves=12
)


@given(documents, documents)
def test_applying_the_changes_of_two_states_gives_the_second(before, after):
    assert apply_to_document(before, diff(before, after)) == after


@given(st.lists(keys, min_size=1, max_size=4))
def test_paths_survive_dots_and_backslashes_in_keys(segments):
    assert parse_path(format_path(segments)) == tuple(segments)


@given(st.dictionaries(keys, leaves, max_size=6))
def test_the_digest_does_not_depend_on_key_order(document):
    assert digest(dict(reversed(list(document.items())))) == digest(document)


def test_patterns_match_segment_by_segment_and_cover_what_lies_below():
    assert path_matches(parse_path("orders.*.status"), ("orders", "A1", "status"))
    assert not path_matches(parse_path("orders.*.status"), ("orders", "A1", "amount"))
    assert path_matches(parse_path("orders.A1"), ("orders", "A1", "amount"))
    assert path_matches(parse_path("**.amount"), ("orders", "A1", "amount"))
    assert not path_matches(parse_path("refunds"), ("orders", "A1"))


def test_a_database_reads_as_rows_under_their_keys_and_replays_changes(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT, amount REAL);"
            "CREATE TABLE notes (body TEXT);"
            "INSERT INTO orders VALUES ('A1', 'delivered', 40), ('A2', 'shipped', 5);"
            "INSERT INTO notes VALUES ('hello');"
        )
    before = read_state(path)
    assert before["orders"]["A1"] == {"id": "A1", "status": "delivered", "amount": 40.0}
    assert before["notes"] == {"1": {"body": "hello"}}  # no primary key: the rowid
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(path.read_bytes())
    with sqlite3.connect(path) as db:
        db.execute("UPDATE orders SET status = 'refunded' WHERE id = 'A1'")
        db.execute("DELETE FROM orders WHERE id = 'A2'")
        db.execute("INSERT INTO orders VALUES ('A3', 'new', 1)")
    after = read_state(path)
    changes = diff(before, after)
    assert {c["path"] for c in changes} == {"orders.A1.status", "orders.A2", "orders.A3"}
    apply_changes(copy, changes)
    assert read_state(copy) == after
    assert digest(read_state(copy)) == digest(after)


def _outcome(changes, final="abc", turns=None):
    steps = [
        Step(kind="message", name="assistant", metadata={"turn": t, "changes": c})
        for t, c in (turns or {}).items()
    ]
    return {"response": {"metadata": {"environment": {"changes": changes, "digest": final}}}}, steps


REFUNDED = [
    {"path": "orders.A1.status", "before": "delivered", "after": "refunded"},
    {"path": "refunds.R-2", "after": {"id": "R-2", "order_id": "A1", "amount": 40.0}},
]


def _grade(value, changes, final="abc", turns=None):
    extra, steps = _outcome(changes, final, turns)
    return grade_run("final-state", value, steps, **extra)


def test_expected_changes_with_values_rows_and_globs_pass():
    grade = _grade(
        {
            "changes": {"orders.A1.status": "refunded", "refunds.*": {"order_id": "A1"}},
            "only": True,
            "forbid": ["customers.*"],
        },
        REFUNDED,
    )
    assert grade.passed, grade.reason
    assert grade.reason == "final state as expected (2 change(s), digest abc)"


def test_each_broken_expectation_is_named_with_the_turn_of_the_change():
    turns = {2: [REFUNDED[0]], 3: [REFUNDED[1]]}
    grade = _grade(
        {
            "changes": {"orders.A1.status": "cancelled", "orders.A9.status": "refunded"},
            "forbid": ["refunds"],
        },
        REFUNDED,
        turns=turns,
    )
    assert not grade.passed
    assert grade.reason == (
        'expected orders.A1.status to become "cancelled", got orders.A1.status: "delivered" '
        '→ "refunded" (turn 2); expected orders.A9.status to change, it did not; forbidden '
        'change refunds.R-2: (absent) → {"id": "R-2", "order_id": "A1", "amount": 40.0} (turn 3)'
    )
    assert grade.score == 0.0
    assert grade.metadata["turn"] == 2


def test_only_unchanged_and_digest():
    assert (
        "unexpected change refunds.R-2"
        in _grade({"changes": ["orders.A1.status"], "only": True}, REFUNDED).reason
    )
    assert _grade({"unchanged": True}, []).passed
    assert "the state changed: orders.A1.status" in _grade({"unchanged": True}, REFUNDED).reason
    assert _grade({"digest": "ABC"}, [], final="abc").passed
    assert _grade({"digest": "abd"}, [], final="abc").reason == (
        "final state digest abc, expected abd"
    )
    assert not grade_run("not-final-state", {"unchanged": True}, [], **_outcome([])[0]).passed


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("orders", "must be a mapping"),
        ({"chnages": {}}, "unknown option(s) ['chnages']"),
        ({"only": "yes"}, "only must be true or false"),
        ({"changes": 3}, "changes must map paths"),
    ],
)
def test_malformed_values_are_refused(value, message):
    from evals.graders.final_state import check_value

    with pytest.raises(GraderError, match=re.escape(message)):
        check_value(value)


def test_a_run_without_a_world_cannot_be_graded():
    grade = grade_run("final-state", {"unchanged": True}, [])
    assert grade.errored  # the run becomes an error row
    assert "declare the suite's environment" in grade.reason

"""Which cases two versions of a suite share, and what the differences say."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.analysis.comparability import agent_change, suite_differences
from evals.model.gates import GateConfig
from evals.model.suite import Case, SuiteOutline


def _outline(cases: dict[str, str], fingerprint: str = "s1", **extra) -> SuiteOutline:
    return SuiteOutline(
        "suite",
        None,
        fingerprint,
        ["agent"],
        [Case(i, cid, cid, {}, [], fingerprint=fp) for i, (cid, fp) in enumerate(cases.items())],
        **extra,
    )


versions = st.dictionaries(
    st.sampled_from([f"case-{i}" for i in range(8)]), st.sampled_from(["a", "b", "c"]), max_size=8
)


@pytest.mark.slow
@given(versions, versions)
def test_every_case_is_shared_added_changed_or_removed_exactly_once(before, after) -> None:
    found = suite_differences(_outline(before, "s1"), _outline(after, "s2"))

    candidate = found.shared + found.added + found.changed
    assert sorted(candidate) == sorted(after)
    assert set(found.removed) == set(before) - set(after)
    assert all(before[c] == after[c] for c in found.shared)
    assert all(before[c] != after[c] for c in found.changed)
    assert set(found.added) == set(after) - set(before)


@given(versions)
def test_the_same_suite_shares_every_case_and_says_nothing(cases) -> None:
    found = suite_differences(_outline(cases), _outline(cases))

    assert found.same_suite and found.shared == list(cases) and found.lines() == []


def test_the_lines_list_the_differences() -> None:
    before = _outline(
        {"one": "a", "two": "a", "gone": "a"}, "s1", gates=GateConfig(), prompts_fingerprint="p1"
    )
    after = _outline(
        {"one": "a", "two": "b", "new": "a"},
        "s2",
        gates=GateConfig(min_pass_rate=0.9),
        prompts_fingerprint="p2",
    )

    lines = suite_differences(before, after).lines()

    assert lines[0] == "the suite changed: compared on the 1 case(s) both versions share"
    assert "1 case(s) only in the candidate's suite (in its own gates, not compared): new" in lines
    assert "1 case(s) only in the baseline's suite (not compared): gone" in lines
    assert any(line.startswith("1 case(s) changed") and line.endswith(": two") for line in lines)
    assert any("prompts changed" in line for line in lines)
    assert any("gate thresholds changed" in line for line in lines)


def test_outlines_without_case_fingerprints_match_cases_by_id_and_say_so() -> None:
    found = suite_differences(_outline({"one": "", "two": ""}), _outline({"one": "a"}, "s2"))

    assert found.shared == ["one"] and found.removed == ["two"]
    assert any("matched by id" in line for line in found.lines())


def test_agent_changes_are_described_not_refused() -> None:
    assert agent_change("agent", "aaaa", "aaaa") == "agent agent: unchanged (fingerprint aaaa)"
    assert agent_change("agent", "aaaa", "bbbb") == "agent agent: changed (fingerprint aaaa → bbbb)"
    assert "unknown" in agent_change("agent", None, "bbbb")

"""Which agents a pull request compares: the changed ones, else the gates' candidate."""

from __future__ import annotations

from pathlib import Path

import pytest
from ci_suite import write_ci_suite

from evals.ci.checkout import SuiteIdentity
from evals.ci.pr import compared_agents
from evals.model.errors import SuiteError
from evals.suite import load_suite


@pytest.fixture
def head(tmp_path: Path):
    return load_suite(write_ci_suite(tmp_path / "suite", cases=2))


def _base(head, **changed: str) -> SuiteIdentity:
    fingerprints = {**head.agent_fingerprints, **changed}
    return SuiteIdentity(head.outline(), fingerprints)


def test_the_agents_whose_code_changed_are_compared(head) -> None:
    both = _base(head, baseline="old", candidate="old")
    assert compared_agents(head, both, None) == (
        ["baseline", "candidate"],
        ["changed agent(s): baseline, candidate"],
    )
    assert compared_agents(head, _base(head, candidate="old"), None)[0] == ["candidate"]


def test_with_no_agent_changed_the_gates_candidate_is_compared(head) -> None:
    agents, notes = compared_agents(head, _base(head), None)

    assert agents == ["candidate"]
    assert notes == ["no agent changed between base and head; compared: candidate"]


def test_an_agent_new_in_the_pull_request_is_named_and_left_out(head) -> None:
    base = SuiteIdentity(head.outline(), {"baseline": "old"})

    agents, notes = compared_agents(head, base, None)

    assert agents == ["baseline"]
    assert "new in this pull request, not compared: candidate" in notes
    assert compared_agents(head, base, ["candidate"])[0] == []


def test_an_unknown_agent_asked_for_is_an_input_error(head) -> None:
    with pytest.raises(SuiteError, match="no agent 'nobody'"):
        compared_agents(head, _base(head), ["nobody"])

"""With a `policy:` block in the suite file, every answer a test gets through `evals_agent` is
graded against it, whatever the test does after: a test that fails first, raises, or never
checks the policy still counts the violation, in the store, the reports and the gate."""

from __future__ import annotations

import json
import textwrap

# numpy loads here, before pytester's in-process runs: it refuses a second load in one process
import numpy  # noqa: F401
import pytest

import tests.testing.project  # noqa: F401 - the modules an evaluation loads, loaded once

pytestmark = pytest.mark.slow

pytest_plugins = ["pytester"]

SUPPORT_AGENT = """
def answer(prompt, options, context):
    tools = [{"kind": "tool", "name": "lookup_order", "arguments": {"id": prompt}}]
    if "refund" in prompt:
        tools.append({"kind": "tool", "name": "issue_refund", "arguments": {"id": prompt}})
    return {"output": f"done: {prompt}", "trajectory": tools}
"""

SUITE = """
description: support desk
providers:
  - id: file://support_agent.py:answer
    label: desk
policy:
  deny: [issue_refund]
gates:
  zero_policy_violations: true
evaluateOptions: {repeat: 2}
"""

CONFTEST = """
import pytest

@pytest.fixture
def desk(evals_agent):
    return evals_agent
"""

TESTS = """
import pytest
from evals.testing import assert_policy


@pytest.mark.evals(case="fails-first")
def test_fails_before_checking_policy(desk):
    reply = desk("refund order 7")
    assert reply.output == "something else"
    assert_policy(reply)


@pytest.mark.evals(case="never-checks")
def test_never_checks_policy(desk):
    reply = desk("refund order 8")
    assert reply.output.startswith("done")


@pytest.mark.evals(case="raises")
def test_raises_after_the_answer(desk):
    desk("refund order 9")
    raise KeyError("lookup table")


@pytest.mark.evals(case="clean")
def test_clean_answer(desk):
    assert desk("status of order 10").output.startswith("done")


@pytest.mark.evals(case="checked")
def test_checks_the_policy_itself(desk):
    reply = desk("status of order 11")
    assert_policy(reply)


@pytest.mark.evals(case="two-turns")
def test_second_turn_breaks_it(desk):
    desk("status of order 12")
    reply = desk("now refund order 12")
    assert reply.output
"""


def test_every_answer_is_graded_for_the_suite_policy_whatever_the_test_does(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(support_agent=textwrap.dedent(SUPPORT_AGENT))
    pytester.makeconftest(textwrap.dedent(CONFTEST))
    pytester.makepyfile(test_desk=textwrap.dedent(TESTS))
    (pytester.path / "evals.yaml").write_text(SUITE, encoding="utf-8")
    pytester.makeini("[pytest]\nevals_suite = evals.yaml\n")

    result = pytester.runpytest(
        "--evals", "--evals-no-store", "--evals-output", "report.json", "-p", "no:cacheprovider"
    )

    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    cases = {c["case_id"]: c for c in report["evals"]["summary"]["case_stats"]}
    violations = {case: stats["policy_violations"] for case, stats in cases.items()}
    assert violations == {
        "fails-first": 2,
        "never-checks": 2,
        "raises": 2,
        "clean": 0,
        "checked": 0,
        "two-turns": 2,
    }
    # a test that passed but broke the policy is a failed run; one that raised stays an error
    assert cases["never-checks"]["passes"] == 0
    assert cases["raises"]["errors"] == 2
    assert cases["clean"]["passes"] == cases["checked"]["passes"] == 2
    gates = {g["name"]: g for g in report["evals"]["gates"]["gates"]}
    assert gates["policy"]["status"] == "fail"
    rows = report["results"]["results"]
    checked = [r for r in rows if r["testCase"]["description"] == "test_checks_the_policy_itself"]
    for row in checked:  # the test's own bare check is not graded twice
        kinds = [c["assertion"]["type"] for c in row["gradingResult"]["componentResults"]]
        assert kinds == ["policy"]
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*policy*fail*"])

"""The exit code follows the gates' verdict and the environment's on_undetermined; a broken
candidate fails the build; `evals validate` warns of gates that cannot pass."""

from __future__ import annotations

import pytest

from evals.cli import main

AGENTS = """
def steady(prompt, options, context):
    return {"output": "yes" if (int(context["vars"]["n"]) + context["repeat"]) % 3 else "no"}


def broken(prompt, options, context):
    raise RuntimeError("OPENAI_API_KEY is not set")
"""


def _suite(write_suite, candidate: str, gates: str = "") -> str:
    tests = "\n".join(
        f"  - vars: {{n: {n}}}\n"
        f"    metadata: {{priority: {'P0' if n == 0 else 'P1'}}}\n"
        "    assert: [{type: contains, value: 'yes'}]"
        for n in range(10)
    )
    path = write_suite(
        "prompts: ['{{n}}']\n"
        "providers:\n"
        "  - {id: file://agents.py:steady, label: base}\n"
        f"  - {{id: file://agents.py:{candidate}, label: cand}}\n"
        "evaluateOptions: {repeat: 3}\n"
        f"gates: {{baseline: base, candidate: cand{gates}}}\n"
        f"tests:\n{tests}\n",
        files={"agents.py": AGENTS},
    )
    return str(path)


def test_undetermined_warns_in_a_pull_request_and_fails_a_release(write_suite, capsys):
    path = _suite(write_suite, "steady")
    assert main(["run", path, "--no-store", "--no-progress", "--env", "pr"]) == 0
    out = capsys.readouterr().out
    assert "UNDETERMINED — warning only, the build passes (on_undetermined: warn)" in out
    block = out[out.rindex("\n\n") :].splitlines()
    assert [line.split()[1:3] for line in block if line.startswith("  ⚠️ ")] == [
        ["error_rate", "undetermined:"],
        ["regression", "undetermined:"],
        ["p0_regressions", "undetermined:"],
    ]
    assert main(["run", path, "--no-store", "--no-progress", "--env", "release"]) == 1
    out = capsys.readouterr().out
    assert "UNDETERMINED — fails the build (on_undetermined: fail)" in out


def test_a_candidate_whose_every_run_raises_fails_the_build(write_suite, capsys):
    """Before: every run was an error, errors were left out of the rates and the
    verdict, undetermined, exited 0."""
    path = _suite(write_suite, "broken")
    assert main(["run", path, "--no-store", "--no-progress", "--env", "pr"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "FAIL" in out
    assert "most often agent_error (30)" in out
    assert "OPENAI_API_KEY is not set" in out


@pytest.mark.slow
def test_validate_warns_of_gates_that_cannot_pass_where_undetermined_fails(write_suite, capsys):
    path = _suite(write_suite, "steady", ", environments: {release: {repeat: 5}, pr: {}}")
    assert main(["validate", path]) == 0
    err = capsys.readouterr().err
    assert "environment release fails on an undetermined verdict" in err
    assert "tolerance of 0" in err
    assert "needs at least 17 repeats" in err
    assert "50 runs per agent without an error cannot show an error rate within 0.05" in err
    assert "environment pr" not in err
    relaxed = _suite(
        write_suite,
        "steady",
        ", max_regression: 0.1, environments: {release: {repeat: 20, max_error_rate: 0.1}}",
    )
    assert main(["validate", relaxed]) == 0
    assert "undetermined" not in capsys.readouterr().err

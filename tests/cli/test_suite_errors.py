"""Bad suites fail before any run with one clear message: file, line, what to change."""

from __future__ import annotations

import json

import pytest

from evals.cli import main
from evals.model.errors import ExitCode

AGENT = """
def call_api(prompt, options, context):
    return {"output": prompt}
"""

ECHO_HEAD = """\
prompts: ['{{q}}']
providers: [echo]
"""

TWO_AGENTS_HEAD = """\
prompts: ['{{q}}']
providers:
  - {id: file://agent.py, label: baseline}
  - {id: file://agent.py, label: candidate}
"""


@pytest.mark.parametrize(
    ("suite", "message", "line", "fix"),
    [
        pytest.param(
            ECHO_HEAD
            + "tests:\n  - vars: {q: hi}\n    assert:\n      - type: contains\n       value: hi\n",
            "YAML syntax error",
            7,
            "fix the indentation",
            id="yaml-syntax-error-names-the-line",
        ),
        pytest.param(
            ECHO_HEAD + "tests:\n  vars: {q: hi}\n",
            "tests must be a list, not a mapping",
            4,
            "'- '",
            id="tests-must-be-a-list",
        ),
        pytest.param(
            TWO_AGENTS_HEAD
            + "tests: [{vars: {q: hi}}]\ngates:\n  baseline: baseline\n  candidate: candidat\n",
            "gates.candidate names agent 'candidat'",
            8,
            "baseline, candidate",
            id="gates-naming-a-missing-agent",
        ),
        pytest.param(
            "prompts: ['{{q}}']\nproviders: [ecoh]\ntests: [{vars: {q: hi}}]\n",
            "unknown provider id 'ecoh'",
            2,
            "echo",
            id="unknown-provider-id-suggests-a-known-one",
        ),
    ],
)
def test_bad_suite_names_file_line_and_fix(write_suite, suite_error, suite, message, line, fix):
    path = write_suite(suite, files={"agent.py": AGENT})
    err = suite_error(path)
    assert err.file == str(path)
    assert message in err.message
    assert err.line is not None
    if line is not None:
        assert err.line == line
    assert fix in (err.fix or "")


@pytest.mark.parametrize(
    "body",
    [
        ECHO_HEAD + "tests:\n  - assert:\n    - type: contains\n   value: x\n",
        ECHO_HEAD + "tests: 3\n",
        ECHO_HEAD + "tests: [{}]\ngates: {candidate: other}\n",
    ],
)
def test_cli_exits_with_invalid_suite_code_and_writes_nothing(tmp_path, body, capsys):
    suite = tmp_path / "suite.yaml"
    suite.write_text(body, encoding="utf-8")
    store = tmp_path / "store.db"
    code = main(["run", str(suite), "--store", f"sqlite:///{store}", "--no-progress"])
    assert code == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert str(suite) in err
    assert err.count("\n") <= 3
    assert not store.exists()


@pytest.mark.parametrize(
    ("body", "notice", "error"),
    [
        pytest.param(
            ECHO_HEAD
            + "tests:\n  - vars: {q: hi}\n    assert:\n      - type: contians\n        value: hi\n",
            ":6: unknown assertion type 'contians' (did you mean 'contains'?)",
            "Error: Unknown assertion type: contians",
            id="unknown-assertion-type",
        ),
        pytest.param(
            "prompts: ['{{q}}']\nproviders:\n"
            "  - id: file://agents/missing.py\n    label: baseline\n"
            "tests: [{vars: {q: hi}}]\n",
            ":3: provider 'baseline' file not found: agents/missing.py",
            "the provider file does not exist",
            id="missing-provider-file",
        ),
    ],
)
def test_what_promptfoo_errors_row_by_row_validate_refuses_and_run_errors(
    tmp_path, body, notice, error, capsys
):
    """promptfoo runs such a config and errors the rows affected; `evals run` does the same
    after saying so, and `evals validate` refuses the suite, naming the line and the fix."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(body, encoding="utf-8")
    assert main(["validate", str(suite)]) == ExitCode.INVALID_INPUT
    assert f"error: {suite}{notice}" in capsys.readouterr().err
    out = tmp_path / "out.json"
    code = main(["run", str(suite), "--no-store", "--no-progress", "-o", str(out)])
    assert code != ExitCode.OK
    assert f"warning: {suite}{notice}" in capsys.readouterr().err
    (row,) = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    assert row["success"] is False and error in row["error"]


def test_and_or_combinators_are_error_rows_as_in_promptfoo_and_validate_warns(tmp_path, capsys):
    """promptfoo 0.121 runs `and` / `or` as error rows; evals matches it and warns at load."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        ECHO_HEAD
        + "tests:\n"
        + "  - vars: {q: hello world}\n    assert:\n      - type: or\n        assert:\n"
        + "          - {type: contains, value: hello}\n"
        + "  - vars: {q: hi}\n    assert: [{type: contains, value: hi}]\n",
        encoding="utf-8",
    )
    assert main(["validate", str(suite)]) == 0
    warned = capsys.readouterr()
    assert "write `and` as `type: assert-set`" in warned.out + warned.err
    assert "'assert' is silently dropped" not in warned.out + warned.err
    out = tmp_path / "out.json"
    main(["run", str(suite), "--no-store", "--no-progress", "-o", str(out)])
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    by_prompt = {row["vars"]["q"]: row for row in rows}
    assert by_prompt["hello world"]["success"] is False
    assert by_prompt["hello world"]["score"] == 0
    assert "Unknown assertion type: or" in by_prompt["hello world"]["error"]
    assert by_prompt["hi"]["success"] is True

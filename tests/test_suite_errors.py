"""Bad suites fail before any run with one clear message: file, line, what to change."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.cli import main
from evals.errors import ExitCode, SuiteError
from evals.suite import load_suite

AGENT = """
def call_api(prompt, options, context):
    return {"output": prompt}
"""


def _error(path: Path) -> SuiteError:
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    return info.value


def test_yaml_syntax_error_names_file_and_line(write_suite):
    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          - vars: {q: hi}
            assert:
              - type: contains
               value: hi
        """
    )
    err = _error(path)
    assert err.file == str(path)
    assert err.line == 7
    assert "YAML syntax error" in err.message
    assert err.fix


def test_unknown_assertion_type_suggests_the_close_one(write_suite):
    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          - vars: {q: hi}
            assert:
              - type: contians
                value: hi
        """
    )
    err = _error(path)
    assert "unknown assertion type 'contians'" in err.message
    assert err.line == 6
    assert "contains" in (err.fix or "")


def test_javascript_assertion_points_to_python(write_suite):
    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          - assert:
              - type: javascript
                value: output.length > 3
        """
    )
    err = _error(path)
    assert "python" in (err.fix or "")


def test_missing_provider_file(write_suite):
    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers:
          - id: file://agents/missing.py
            label: baseline
        tests: [{vars: {q: hi}}]
        """
    )
    err = _error(path)
    assert "provider 'baseline' file not found: agents/missing.py" in err.message
    assert err.file == str(path)
    assert err.line == 3


def test_tests_must_be_a_list(write_suite):
    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          vars: {q: hi}
        """
    )
    err = _error(path)
    assert "tests must be a list, not a mapping" in err.message
    assert err.line == 4
    assert "'- '" in (err.fix or "")


def test_gates_naming_a_missing_agent(write_suite):
    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers:
          - {id: file://agent.py, label: baseline}
          - {id: file://agent.py, label: candidate}
        tests: [{vars: {q: hi}}]
        gates:
          baseline: baseline
          candidate: candidat
        """,
        files={"agent.py": AGENT},
    )
    err = _error(path)
    assert "gates.candidate names agent 'candidat'" in err.message
    assert "baseline, candidate" in (err.fix or "")
    assert err.line is not None


def test_unknown_provider_id(write_suite):
    path = write_suite(
        """\
        prompts: ['{{q}}']
        providers: [ecoh]
        tests: [{vars: {q: hi}}]
        """
    )
    err = _error(path)
    assert "unknown provider id 'ecoh'" in err.message
    assert "echo" in (err.fix or "")


@pytest.mark.parametrize(
    "body",
    [
        "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - assert:\n    - type: contains\n   value: x\n",
        "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - assert: [{type: nope}]\n",
        "prompts: ['{{q}}']\nproviders: [file://nope.py]\ntests: [{}]\n",
        "prompts: ['{{q}}']\nproviders: [echo]\ntests: 3\n",
        "prompts: ['{{q}}']\nproviders: [echo]\ntests: [{}]\ngates: {candidate: other}\n",
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

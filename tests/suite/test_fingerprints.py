"""Suite, agent and case fingerprints: each changes with what it stands for, and only then."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from evals.suite import load_suite
from evals.suite.fingerprint import imported_names

ROOT = Path(__file__).resolve().parents[2]

AGENT = """
from helper import answer

def call_api(prompt, options, context):
    return {"output": answer(prompt)}
"""

SUITE = """
prompts: ["{{q}}"]
providers:
  - id: file://agent.py
    label: agent
    config: {model: small, api_key: sk-one, worker: false}
  - {id: "exec: python script.py", label: script}
tests:
  - vars: {q: one}
    assert: [{type: contains, value: "one"}]
  - vars: {q: two}
    assert: [{type: python, value: file://check.py}]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "helper.py").write_text("def answer(p):\n    return p\n", encoding="utf-8")
    (tmp_path / "script.py").write_text("print('hi')\n", encoding="utf-8")
    (tmp_path / "check.py").write_text("def get_assert(o, c):\n    return True\n", "utf-8")
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path


def _identity(project: Path) -> tuple[str, dict[str, str], dict[str, str]]:
    suite = load_suite(project / "suite.yaml")
    return suite.fingerprint, suite.agent_fingerprints, {c.id: c.fingerprint for c in suite.cases}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_agent_code_and_config_change_the_agent_never_the_suite(project: Path) -> None:
    suite, agents, cases = _identity(project)

    _edit(project / "helper.py", "return p", "return p.upper()")
    after_helper = _identity(project)
    assert after_helper[0] == suite and after_helper[2] == cases
    assert after_helper[1]["agent"] != agents["agent"]
    assert after_helper[1]["script"] == agents["script"]

    _edit(project / "suite.yaml", "model: small", "model: large")
    after_model = _identity(project)
    assert after_model[0] == suite
    assert after_model[1]["agent"] not in (agents["agent"], after_helper[1]["agent"])

    _edit(project / "script.py", "hi", "hello")
    assert _identity(project)[1]["script"] != agents["script"]


def test_credentials_and_isolation_are_not_part_of_an_agent(project: Path) -> None:
    before = _identity(project)

    _edit(project / "suite.yaml", "api_key: sk-one, worker: false", "api_key: sk-two, worker: true")

    assert _identity(project) == before


def test_a_changed_assertion_changes_the_suite_and_that_case_only(project: Path) -> None:
    suite, agents, cases = _identity(project)

    _edit(project / "check.py", "return True", "return False")
    after = _identity(project)

    assert after[0] != suite and after[1] == agents
    assert after[2]["case-1"] == cases["case-1"] and after[2]["case-2"] != cases["case-2"]

    _edit(project / "suite.yaml", 'value: "one"', 'value: "uno"')
    edited = _identity(project)
    assert edited[2]["case-1"] != cases["case-1"] and edited[2]["case-2"] == after[2]["case-2"]


def test_the_same_content_elsewhere_has_the_same_fingerprints(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    copy = tmp_path_factory.mktemp("copy")
    for path in project.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())

    assert _identity(copy) == _identity(project)


def test_a_project_package_the_agent_imports_is_part_of_it(tmp_path: Path) -> None:
    package = tmp_path / "evals_fp_probe_lib"
    package.mkdir()
    (package / "__init__.py").write_text("from .core import answer\n", encoding="utf-8")
    (package / "core.py").write_text("def answer(p):\n    return p\n", encoding="utf-8")
    suite_dir = tmp_path / "suites" / "one"
    suite_dir.mkdir(parents=True)
    (suite_dir / "agent.py").write_text(
        AGENT.replace("from helper import", "from evals_fp_probe_lib import"), "utf-8"
    )
    (suite_dir / "suite.yaml").write_text(
        "prompts: ['{{q}}']\nproviders: [file://agent.py]\ntests: [{vars: {q: x}}]\n", "utf-8"
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    sys.path.insert(0, str(tmp_path))
    try:
        before = load_suite(suite_dir / "suite.yaml").agent_fingerprints
        _edit(package / "core.py", "return p", "return p * 2")
        after = load_suite(suite_dir / "suite.yaml").agent_fingerprints
    finally:
        sys.path.remove(str(tmp_path))
    assert before != after


def _ast_names(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level <= 1:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.slow
def test_the_import_scan_finds_every_import_the_parser_finds() -> None:
    files = [*ROOT.glob("evals/**/*.py"), *ROOT.glob("cases/**/*.py"), *ROOT.glob("graders/*.py")]
    assert len(files) > 50
    for path in files:
        source = path.read_text(encoding="utf-8")
        assert _ast_names(source) <= imported_names(source), path


def test_what_an_agent_fingerprint_cannot_see_is_named(tmp_path: Path) -> None:
    """The drift guard's automatic reuse trusts a fingerprint only where it sees the code:
    the project's Python files and models named by id and config."""
    from evals.model.suite import ProviderSpec
    from evals.suite.fingerprint import fingerprint_gap

    (tmp_path / "agent.py").write_text("def run(p, o, c):\n    return {'output': p}\n", "utf-8")
    (tmp_path / "agent.js").write_text("module.exports = require('./lib');\n", "utf-8")

    def gap(provider_id: str) -> str | None:
        return fingerprint_gap(ProviderSpec(id=provider_id, label="a"), tmp_path)

    assert gap("file://agent.py:run") is None
    assert gap("openai:gpt-4o-mini") is None
    assert gap("echo") is None
    assert "not a file of the project" in (gap("https://agents.example/answer") or "")
    assert "not a file of the project" in (gap("exec: /usr/bin/env some-agent") or "")
    assert "agent.js is not Python" in (gap("file://agent.js") or "")


@pytest.mark.extra("langgraph")
def test_a_framework_agents_module_is_part_of_its_fingerprint(tmp_path: Path) -> None:
    graph = "from langgraph.graph import StateGraph\n\ndef build():\n    return None\n"
    (tmp_path / "graph.py").write_text(graph, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(
        "prompts: ['{{q}}']\n"
        "providers: [{id: 'langgraph:graph.py:build', label: agent}]\n"
        "tests: [{vars: {q: one}}]\n",
        encoding="utf-8",
    )
    before = load_suite(tmp_path / "suite.yaml")
    assert before.providers[0].fingerprint_gap is None
    _edit(tmp_path / "graph.py", "return None", "return 1")
    assert load_suite(tmp_path / "suite.yaml").agent_fingerprints != before.agent_fingerprints

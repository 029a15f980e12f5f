"""The files a Ray job ships: the suite folder and the agents' local code, checked on
arrival against the bundle's digest."""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path

import pytest

from evals.run.bundle import bundle_files, stage_bundle, verify_bundle
from evals.suite import load_suite


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "bundled_helpers").mkdir()
    (tmp_path / "bundled_helpers" / "__init__.py").write_text("")
    (tmp_path / "bundled_helpers" / "tools.py").write_text("def tool():\n    return 'x'\n")
    suite = tmp_path / "suites" / "support"
    suite.mkdir(parents=True)
    (suite / "agent.py").write_text(
        "from bundled_helpers.tools import tool\n\ndef call_api(prompt, options, context):\n"
        "    return {'output': tool()}\n"
    )
    (suite / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    (suite / "results.db").write_bytes(b"sqlite")
    (suite / "__pycache__").mkdir()
    (suite / "__pycache__" / "agent.cpython-311.pyc").write_bytes(b"pyc")
    (suite / "notes.md").write_text("read me\n")
    (suite / "suite.yaml").write_text(
        'prompts: ["{{q}}"]\nproviders: [{id: file://agent.py, label: a}]\n'
        "tests: [{vars: {q: hi}}]\n"
    )
    return suite


def test_the_bundle_holds_the_suite_folder_and_the_agents_imports_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))  # the driver imports the project's modules
    suite = load_suite(_project(tmp_path) / "suite.yaml")
    shipped = {path.relative_to(tmp_path).as_posix() for path in bundle_files(suite)}
    assert shipped == {
        "suites/support/agent.py",
        "suites/support/notes.md",
        "suites/support/suite.yaml",
        "bundled_helpers/__init__.py",
        "bundled_helpers/tools.py",
    }
    staged = stage_bundle(suite, tmp_path / "staged")
    assert staged.suite_path == "suites/support/suite.yaml"
    assert staged.files == 5
    assert (tmp_path / "staged" / "bundled_helpers" / "tools.py").read_text().startswith("def tool")
    env = staged.runtime_env(suite)
    assert env["env_vars"]["EVALS_SUITE_FINGERPRINT"] == suite.fingerprint
    assert "sk-secret" not in str(env)


def test_a_changed_added_or_missing_file_fails_the_check(tmp_path: Path) -> None:
    suite = load_suite(_project(tmp_path) / "suite.yaml")
    staged = stage_bundle(suite, tmp_path / "staged")
    assert verify_bundle(staged.directory, staged.digest) is None
    notes = staged.directory / "suites" / "support" / "notes.md"
    notes.write_text("read me again\n")
    assert "not the bundle" in (verify_bundle(staged.directory, staged.digest) or "")
    notes.write_text("read me\n")
    assert verify_bundle(staged.directory, staged.digest) is None
    (staged.directory / "extra.py").write_text("")
    assert verify_bundle(staged.directory, staged.digest) is not None
    (staged.directory / "extra.py").unlink()
    (staged.directory / "suites" / "support" / "agent.py").unlink()
    assert verify_bundle(staged.directory, staged.digest) is not None


def test_bytecode_written_by_importing_the_shipped_code_is_not_a_change(tmp_path: Path) -> None:
    suite = load_suite(_project(tmp_path) / "suite.yaml")
    staged = stage_bundle(suite, tmp_path / "staged")
    agent = staged.directory / "suites" / "support" / "agent.py"
    compiled = importlib.util.cache_from_source(str(agent))
    py_compile.compile(str(agent), cfile=compiled, doraise=True)
    assert Path(compiled).is_file()
    assert verify_bundle(staged.directory, staged.digest) is None
    (staged.directory / "stray.pyc").write_bytes(b"")
    assert verify_bundle(staged.directory, staged.digest) is None

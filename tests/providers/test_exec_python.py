"""`exec: python ...` runs the interpreter running evals, and a script's imports are checked
before any run: a missing module stops the suite with exit 2 naming what installs it."""

from __future__ import annotations

import sys

from evals.agents.script_imports import findable, install_hint, missing_imports
from evals.cli import main
from evals.common.extras import extra_of_module
from evals.gates.error_rate import first_line
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

WHICH = """
import sys
print(sys.executable)
"""


def test_python_in_an_exec_command_is_the_running_interpreter(write_suite, tmp_path, monkeypatch):
    """Before: `python` was looked up on PATH, so without an activated virtualenv the
    script ran in another interpreter (no evals, no extras) and every run errored."""
    for command in ("python", "python3"):
        path = write_suite(
            f"prompts: ['{{{{q}}}}']\nproviders: ['exec: {command} which.py']\n"
            "tests: [{vars: {q: hi}}]\n",
            files={"which.py": WHICH},
        )
        monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
        result = run_evaluation(load_suite(path), RunOptions(use_store=False, progress=False))
        (record,) = result.records
        assert record.status == "pass", record.error
        assert record.response.output == sys.executable


def test_a_script_importing_a_missing_module_stops_at_load(write_suite, tmp_path, capsys):
    path = write_suite(
        "prompts: ['{{q}}']\nproviders:\n  - {id: 'exec: python agent.py', label: base}\n"
        "tests: [{vars: {q: hi}}]\n",
        files={
            "agent.py": "import json\nimport helper\nprint('hi')\n",
            "helper.py": "import os\nimport surely_not_installed_pkg.sub\n",
        },
    )
    store = tmp_path / "runs.db"

    code = main(["run", str(path), "--store", f"sqlite:///{store}", "--no-progress"])

    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert (
        f"{path}:3: provider 'base' (agent.py) imports surely_not_installed_pkg.sub, which is "
        f"not installed for {sys.executable}"
    ) in err
    assert "install the package that provides 'surely_not_installed_pkg'" in err
    assert not store.exists()


def test_optional_imports_and_scripts_that_edit_sys_path_are_left_alone(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(
        "from __future__ import annotations\nimport json, os\nfrom evals.kits import Tool\n"
        "try:\n    import not_here_a\nexcept ImportError:\n    pass\n"
        "def f():\n    import not_here_b\n",
        encoding="utf-8",
    )
    assert missing_imports(script) == []
    (tmp_path / "edits.py").write_text(
        "import sys\nsys.path.insert(0, 'lib')\nimport only_in_lib\n", encoding="utf-8"
    )
    assert missing_imports(tmp_path / "edits.py") == []
    (tmp_path / "plain.py").write_text("import only_in_lib\n", encoding="utf-8")
    assert missing_imports(tmp_path / "plain.py") == ["only_in_lib"]


def test_a_missing_module_an_extra_provides_names_the_extra():
    """The instrumented examples import the [instrumentation] extra's modules: without it
    they stop naming the extra, as the README says of every missing extra."""
    assert not findable("openinference.instrumentation.no_such_submodule")
    assert findable("evals.kits") and findable("json") and findable("evals.model.results")
    assert extra_of_module("openinference.instrumentation.openai") == "instrumentation"
    assert extra_of_module("opentelemetry.instrumentation.openai") == "instrumentation"
    assert extra_of_module("opentelemetry.sdk.trace") is None
    assert extra_of_module("pydantic_ai.models.test") == "pydantic-ai"
    assert "pip install -e '.[instrumentation]'" in install_hint("openinference.instrumentation")


def test_a_gate_reason_quotes_the_exception_line_not_the_traceback():
    message = (
        "command 'python' exited with code 1: Traceback (most recent call last):\n"
        '  File "agent.py", line 3, in <module>\n    import x\n'
        "ModuleNotFoundError: No module named 'x'"
    )
    assert first_line(message) == (
        "command 'python' exited with code 1: ModuleNotFoundError: No module named 'x'"
    )
    assert first_line("agent raised RuntimeError: boom") == "agent raised RuntimeError: boom"
    assert len(first_line("x" * 1000)) == 200

"""Configs promptfoo refuses to run are refused by evals at load, before any run.

Each `refused/<name>/promptfooconfig.yaml` is a config the real promptfoo 0.121 CLI stops
on without writing results; `promptfoo.txt` beside it holds the start of the line of its
output that names the error. evals must refuse the same config (exit 2, nothing run or
stored); the slow test runs the CLI again to check promptfoo still refuses it, with that
error (the promptfoo tier, skipped where the CLI is missing).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evals.cli import main
from evals.compat.promptfoo_check import error_line
from evals.compat.promptfoo_rows import run_promptfoo
from evals.model.errors import ExitCode, SuiteError
from evals.suite import load_suite

REFUSED = Path(__file__).parent / "refused"
NAMES = sorted(p.parent.name for p in REFUSED.glob("*/promptfooconfig.yaml"))
CLI = Path(os.environ.get("EVALS_PROMPTFOO") or shutil.which("promptfoo") or "promptfoo")


def test_there_are_refused_configs_each_with_promptfoos_error():
    assert len(NAMES) >= 4
    for name in NAMES:
        assert (REFUSED / name / "promptfoo.txt").read_text(encoding="utf-8").strip(), name


@pytest.mark.parametrize("name", NAMES)
def test_evals_refuses_the_config_at_load(name, tmp_path, capsys):
    config = REFUSED / name / "promptfooconfig.yaml"
    with pytest.raises(SuiteError) as refused:
        load_suite(config)
    assert refused.value.file == str(config.resolve())
    assert refused.value.fix
    store = tmp_path / "store.db"
    code = main(["run", str(config), "--store", f"sqlite:///{store}", "--no-progress"])
    assert code == ExitCode.INVALID_INPUT
    assert capsys.readouterr().err.startswith("error: ")
    assert not store.exists()


@pytest.mark.promptfoo
@pytest.mark.parametrize("name", NAMES)
def test_promptfoo_refuses_it_too(name):
    output, proc = run_promptfoo(REFUSED / name, "promptfooconfig.yaml", CLI, {})
    assert output is None
    expected = (REFUSED / name / "promptfoo.txt").read_text(encoding="utf-8").strip()
    assert error_line(proc.stderr + proc.stdout).startswith(expected)

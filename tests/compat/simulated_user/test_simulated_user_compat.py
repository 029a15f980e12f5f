"""promptfoo's simulated-user configurations, as its documentation writes them, run in evals
with a local user provider; rows agree with the goldens the real promptfoo CLI wrote.

Each `*/golden.json` was written by the promptfoo CLI (version and command inside;
`regenerate.py` rebuilds them) with its hosted user answered locally by the same Python user
each config names as its `config.provider` for evals, and the agents and the judge served
locally (`servers.py`). A row agrees when its verdict, score, named scores and components
agree (as for every compatibility config) and its transcript is the same.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from evals.compat.promptfoo_rows import differences, golden_rows, harness_rows
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite
from tests.compat.simulated_user.servers import environment, services
from tests.reports.promptfoo_cli import PROMPTFOO, needs_promptfoo

HERE = Path(__file__).parent
NAMES = sorted(p.parent.name for p in HERE.glob("*/golden.json"))


@pytest.fixture(scope="module")
def served():
    with services() as base, pytest.MonkeyPatch.context() as patch:
        for key, value in environment(base).items():
            patch.setenv(key, value)
        yield base


def _transcripts(rows: dict) -> dict:
    return {key: row["output"] for key, row in rows.items()}


def test_every_documented_form_has_a_golden():
    assert len(NAMES) >= 8
    assert sorted(p.parent.name for p in HERE.glob("*/promptfooconfig.yaml")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_the_config_runs_with_a_local_user_and_agrees_with_promptfoo(served, name):
    golden = json.loads((HERE / name / "golden.json").read_text(encoding="utf-8"))
    result = run_evaluation(
        load_suite(HERE / name / "promptfooconfig.yaml"),
        RunOptions(use_store=False, progress=False, concurrency=2),
    )
    assert all(r.status != "error" for r in result.records), [r.error for r in result.records]
    assert differences(golden, result) == []
    assert _transcripts(harness_rows(result)) == _transcripts(golden_rows(golden))


@pytest.mark.slow
@needs_promptfoo
def test_the_goldens_are_what_promptfoo_writes_today(served, tmp_path):
    """Run the real CLI again on every config: the goldens are not stale."""
    if shutil.which("python3") is None:
        pytest.skip("promptfoo's Python providers need python3 on PATH")
    from tests.compat.simulated_user.regenerate import golden

    for name in NAMES:
        stored = json.loads((HERE / name / "golden.json").read_text(encoding="utf-8"))
        fresh = golden(name, PROMPTFOO, served)
        assert _transcripts(golden_rows(fresh)) == _transcripts(golden_rows(stored)), name
        assert [r["success"] for r in fresh["rows"]] == [r["success"] for r in stored["rows"]]
    assert os.environ["PROMPTFOO_REMOTE_GENERATION_URL"].startswith(served)

"""Every compatibility config gives promptfoo's verdicts, row by row.

Each `configs/<name>/golden.json` was produced by the real promptfoo CLI (version and
command inside; `regenerate.py` rebuilds them). The harness runs the same config as a
library and must agree on every row's verdict, score, named scores and components.
Grader calls of model-graded assertions go to the local judge of tests/graders/judge_server.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite
from tests.compat.compat_rows import differences
from tests.graders.judge_server import base_url, judge_server

CONFIGS = Path(__file__).parent / "configs"
NAMES = sorted(p.parent.name for p in CONFIGS.glob("*/golden.json"))


@pytest.fixture(scope="module", autouse=True)
def local_judge():
    """Model-graded assertions reach the same local judge as when the goldens were made."""
    with judge_server() as judge, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_BASE_URL", base_url(judge))
        patch.setenv("OPENAI_API_KEY", "local-judge")
        yield judge


def test_there_are_at_least_forty_goldens():
    assert len(NAMES) >= 40


@pytest.mark.parametrize("name", NAMES)
def test_config_matches_promptfoo(name):
    golden = json.loads((CONFIGS / name / "golden.json").read_text(encoding="utf-8"))
    suite = load_suite(CONFIGS / name / "promptfooconfig.yaml")
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False, concurrency=2))
    assert differences(golden, result) == []

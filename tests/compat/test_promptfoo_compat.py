"""Every compatibility config gives promptfoo's verdicts, row by row.

Each `configs/<name>/golden.json` was produced by the real promptfoo CLI (version and
command inside; `regenerate.py` rebuilds them). The harness runs the same config as a
library and must agree on every row's verdict, score, named scores and components.
Grader calls of model-graded assertions go to the local judge of tests/graders/judge_server.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evals.compat.promptfoo_rows import differences
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite
from tests.graders.judge_server import base_url, judge_server

CONFIGS = Path(__file__).parent / "configs"
NAMES = sorted(p.parent.name for p in CONFIGS.glob("*/golden.json"))

# Configs whose rows differ from promptfoo's on purpose, and why. Each is a strict xfail:
# the test fails loudly if the harness starts to agree.
KNOWN_DIFFERENCES: dict[str, str] = {
    "test_data_env": "test data never reads the environment: a CSV value holding "
    "{{ env.NAME }} stays as written, where promptfoo renders the secret into the prompt",
}
# Configs that need an interpreter promptfoo's goldens were written with.
NEEDS = {"ruby_asserts": "ruby", "script_context": "ruby"}


@pytest.fixture(scope="module", autouse=True)
def local_judge():
    """Model-graded assertions reach the same local judge as when the goldens were made."""
    with judge_server() as judge, pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_BASE_URL", base_url(judge))
        patch.setenv("OPENAI_API_KEY", "local-judge")
        yield judge


def test_every_config_has_a_golden_with_rows_and_there_are_at_least_forty():
    assert len(NAMES) >= 40
    folders = [p for p in CONFIGS.iterdir() if p.is_dir() and not p.name.startswith("_")]
    assert sorted(p.name for p in folders) == NAMES
    for name in NAMES:
        golden = json.loads((CONFIGS / name / "golden.json").read_text(encoding="utf-8"))
        assert golden["rows"], name


def _param(name: str):
    marks = []
    if name in KNOWN_DIFFERENCES:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[name]))
    if name in NEEDS:
        program = NEEDS[name]
        marks.append(pytest.mark.skipif(shutil.which(program) is None, reason=f"needs {program}"))
    return pytest.param(name, marks=marks)


def test_every_known_difference_has_a_golden():
    assert set(KNOWN_DIFFERENCES) <= set(NAMES)


@pytest.mark.parametrize("name", [_param(n) for n in NAMES])
def test_config_matches_promptfoo(name):
    golden = json.loads((CONFIGS / name / "golden.json").read_text(encoding="utf-8"))
    suite = load_suite(CONFIGS / name / "promptfooconfig.yaml")
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False, concurrency=2))
    assert differences(golden, result) == []


def test_json_report_carries_derived_metrics():
    """Each prompt column of the -o JSON report has promptfoo's named scores, derived ones too."""
    from evals.reports.data_files import render_json

    golden = json.loads((CONFIGS / "derived_metrics" / "golden.json").read_text("utf-8"))
    suite = load_suite(CONFIGS / "derived_metrics" / "promptfooconfig.yaml")
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False, concurrency=2))
    document = json.loads(render_json(result))
    written = {
        (p["label"], p["provider"]): p["metrics"]["namedScores"]
        for p in document["results"]["prompts"]
    }
    for column in golden["columns"]:
        scores = written[(column["label"], column["provider"])]
        assert scores.keys() == column["namedScores"].keys()
        for name, value in column["namedScores"].items():
            assert scores[name] == pytest.approx(value, abs=5e-5)

"""`file://` references in a Python provider's config are loaded before its first call,
as promptfoo's processConfigFileReferences loads them, and `basePath` is added."""

from __future__ import annotations

import json

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

AGENT = """\
import json


def call_api(prompt, options, context):
    return {"output": json.dumps(options["config"], sort_keys=True)}
"""

SUITE = """\
prompts: ['{{ q }}']
providers:
  - id: file://agent.py
    label: loaded
    config:
      params: file://configs/params.py:get_params
      model: {settings: file://configs/settings.yaml, stops: [file://configs/stop.txt, end]}
      schema: file://configs/schema.json
  - id: file://agent.py
    label: broken
    config: {table: file://configs/table.csv}
tests:
  - vars: {q: hi}
"""


def test_config_files_are_loaded_and_a_bad_one_errs_every_run(tmp_path, monkeypatch):
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "params.py").write_text("def get_params():\n    return {'max_tokens': 5}\n")
    (configs / "settings.yaml").write_text("temperature: 0.5\n")
    (configs / "stop.txt").write_text("STOP\r\n")
    (configs / "schema.json").write_text('{"type": "object"}')
    (configs / "table.csv").write_text("a\n1\n")
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "suite.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    result = run_evaluation(load_suite(tmp_path / "suite.yaml"), RunOptions(use_store=False))
    by_agent = {r.key.agent: r for r in result.records}
    assert json.loads(by_agent["loaded"].response.output) == {
        "basePath": ".",
        "params": {"max_tokens": 5},
        "model": {"settings": {"temperature": 0.5}, "stops": ["STOP\r\n", "end"]},
        "schema": {"type": "object"},
    }
    broken = by_agent["broken"]
    assert broken.status == "error"
    assert "Unsupported file extension: .csv" in (broken.error or "")

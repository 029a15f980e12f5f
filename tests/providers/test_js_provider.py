"""JavaScript providers (`file://provider.js`): the class a file exports, built and called in
the sandbox as promptfoo builds and calls it; what cannot load stops the suite, what goes
wrong in a run is that run's error row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evals.model.errors import SuiteError
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite

COMPAT = Path(__file__).parents[1] / "compat" / "configs" / "javascript_providers"
REPO = Path(__file__).parents[2]


def _suite(root: Path, provider: str, files: dict[str, str], tests: str) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    suite = root / "promptfooconfig.yaml"
    suite.write_text(
        f"prompts: ['Q: {{{{q}}}}']\nproviders: ['{provider}']\ntests:\n{tests}", encoding="utf-8"
    )
    return suite


def _run(suite: Path, **options: object):
    return run_evaluation(load_suite(suite), RunOptions(use_store=False, progress=False, **options))


def test_error_rows_start_as_promptfoos_do() -> None:
    """Each row promptfoo's CLI errored (golden written by it) errs here with the same first
    line: the exception, promptfoo's TypeError for an undefined answer or a class without
    callApi, the provider's own error field."""
    golden = json.loads((COMPAT / "golden.json").read_text(encoding="utf-8"))
    result = _run(COMPAT / "promptfooconfig.yaml", concurrency=2)
    ours = {
        (r.key.agent, json.dumps(result.suite.cases[r.case_index].vars, sort_keys=True)): r
        for r in result.records
    }
    errored = [row for row in golden["rows"] if row["failureReason"] == 2]
    assert len(errored) >= 12
    for row in errored:
        record = ours[(row["provider"], json.dumps(row["vars"], sort_keys=True))]
        assert record.status == "error"
        assert record.error.splitlines()[0] == row["error"].splitlines()[0]


BAD_PROVIDERS = {
    "syntax.js": ("module.exports = class { id() { return 'x' } async callApi( { }", "SyntaxError"),
    "throws.js": (
        "module.exports = class { constructor() { throw new Error('no key configured') }"
        " id() { return 'x' } }",
        "Error: no key configured",
    ),
    "plain.js": (
        "module.exports = { id: () => 'o', callApi: async () => ({output: 'a'}) }",
        "does not export a provider class",
    ),
    "noid.js": (
        "module.exports = class { async callApi() { return {output: 'a'} } }",
        "has no id() method",
    ),
    "fetches.js": (
        "const fetch = require('node-fetch');\nmodule.exports = class { id() { return 'f' } }",
        "require('node-fetch') is not available",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_PROVIDERS))
def test_a_provider_that_does_not_load_stops_the_suite(tmp_path: Path, name: str) -> None:
    source, message = BAD_PROVIDERS[name]
    suite = _suite(tmp_path, f"file://{name}", {name: source}, "  - vars: {q: a}\n")
    with pytest.raises(SuiteError) as raised:
        load_suite(suite)
    assert message in raised.value.message
    assert name in raised.value.message
    assert raised.value.file == str(suite)


def test_a_missing_file_or_a_function_name_is_refused(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "file://./nowhere.js", {}, "  - vars: {q: a}\n")
    with pytest.raises(SuiteError, match=r"not found: \./nowhere\.js"):
        load_suite(suite)
    ok = "module.exports = class { id() { return 'a' } callApi() { return {output: 'a'} } }"
    suite = _suite(tmp_path, "file://ok.js:callApi", {"ok.js": ok}, "  - vars: {q: a}\n")
    with pytest.raises(SuiteError, match="the class its file exports"):
        load_suite(suite)


COUNTER = """
export default class Counter {
  constructor(options) {
    this.calls = 0;
    this.prefix = options.config.prefix;
  }
  id() { return 'counter'; }
  async callApi(prompt, context) {
    this.calls += 1;
    await new Promise((resolve) => setTimeout(resolve, 60000));
    return { output: `${this.prefix} ${this.calls} ${context.vars.q}`, cost: 0.5 };
  }
}
"""


def test_one_instance_serves_every_run_one_call_at_a_time(tmp_path: Path) -> None:
    """The instance keeps its state across runs (calls counted 1..n, none twice, though
    the runner has several in flight); a timer of a minute costs no wall time."""
    (tmp_path / "counter.mjs").write_text(COUNTER, encoding="utf-8")
    tests = "".join(f"  - vars: {{q: q{i}}}\n" for i in range(8))
    suite = tmp_path / "promptfooconfig.yaml"
    suite.write_text(
        "prompts: ['{{q}}']\nproviders:\n  - {id: file://counter.mjs, config: {prefix: n}}\n"
        f"tests:\n{tests}",
        encoding="utf-8",
    )
    result = _run(suite, concurrency=4, timeout_s=20)
    assert [r.status for r in result.records] == ["pass"] * 8
    assert {r.key.agent for r in result.records} == {"counter"}
    counts = sorted(int(str(r.response.output).split()[1]) for r in result.records)
    assert counts == list(range(1, 9))
    assert {r.response.cost for r in result.records} == {0.5}


HOSTILE = """
module.exports = class Hostile {
  id() { return 'hostile'; }
  async callApi(prompt, context) {
    const kind = context.vars.q;
    if (kind === 'loop') { for (;;) {} }
    if (kind === 'reject') { return Promise.reject(new RangeError('out of range')); }
    if (kind === 'circular') { const a = {}; a.self = a; return { output: a }; }
    if (kind === 'tokens') { return { output: 'x', tokenUsage: { total: 'many' } }; }
    return { output: 'fine ' + kind };
  }
};
"""


@pytest.mark.slow
def test_a_provider_that_hangs_rejects_or_answers_garbage_errs_only_its_rows(
    tmp_path: Path,
) -> None:
    tests = "".join(
        f"  - vars: {{q: {q}}}\n" for q in ("reject", "circular", "tokens", "ok", "loop")
    )
    suite = _suite(tmp_path, "file://hostile.js", {"hostile.js": HOSTILE}, tests)
    # one run at a time, the loop last: runs queued behind it on the agent's thread would
    # spend their timeout waiting for the sandbox to stop it (CPU seconds, on a busy machine
    # later than the run's timeout)
    result = _run(suite, timeout_s=1.0, concurrency=1)
    by_case = {result.suite.cases[r.case_index].vars["q"]: r for r in result.records}
    assert by_case["ok"].status == "pass"
    assert by_case["ok"].response.output == "fine ok"
    for kind in ("loop", "reject", "circular", "tokens"):
        assert by_case[kind].status == "error", kind
    loop_error = by_case["loop"].error
    assert "timed out after 1 s" in loop_error or "JavaScript ran longer than 1 s" in loop_error
    assert by_case["reject"].error == "RangeError: out of range"
    assert "tokenUsage.total" in by_case["tokens"].error


SUPPORT_BOT = """
// providers/support_bot.ts: the team's provider, typed
interface Reply { output: string; tokenUsage: { prompt: number; completion: number } }

export default class SupportBot {
  private readonly tone: string;
  constructor(options: { id?: string; config: { tone?: string } }) {
    this.tone = options.config.tone ?? 'neutral';
  }
  id(): string { return 'support-bot'; }
  async callApi(prompt: string, context: { vars: Record<string, string> }): Promise<Reply> {
    const answer = context.vars.topic === 'refund'
      ? `(${this.tone}) Refunds take 5 days.`
      : `(${this.tone}) Please see the help centre about ${context.vars.topic}.`;
    return { output: answer, tokenUsage: { prompt: prompt.length, completion: answer.length } };
  }
}
"""


@pytest.mark.slow
def test_a_team_runs_its_typescript_provider_from_the_command_line(tmp_path: Path) -> None:
    """The README's `evals run` on a 20-case suite whose provider is the team's TypeScript
    class, output piped to a file: every case runs, the refund cases fail their check."""
    (tmp_path / "providers").mkdir()
    (tmp_path / "providers" / "support_bot.ts").write_text(SUPPORT_BOT, encoding="utf-8")
    topics = ["refund", "login", "billing", "shipping"] * 5
    tests = "".join(
        f"  - vars: {{topic: {t}}}\n    assert: [{{type: icontains, value: 'help centre'}}]\n"
        for t in topics
    )
    (tmp_path / "support.yaml").write_text(
        "description: support bot\nprompts: ['Customer asks about {{topic}}']\n"
        "providers:\n  - {id: file://./providers/support_bot.ts, config: {tone: warm}}\n"
        f"tests:\n{tests}",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with (tmp_path / "log.txt").open("w") as log:
        proc = subprocess.run(
            [sys.executable, "-m", "evals", "run", "support.yaml", "--no-store", "-o", "out.json"],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            timeout=300,
        )
    log_text = (tmp_path / "log.txt").read_text(encoding="utf-8")
    assert proc.returncode == 100, log_text
    rows = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 20
    assert {row["provider"]["label"] or row["provider"]["id"] for row in rows} == {"support-bot"}
    passed = {row["vars"]["topic"] for row in rows if row["success"]}
    assert passed == {"login", "billing", "shipping"}
    assert all(row["response"]["output"].startswith("(warm)") for row in rows)

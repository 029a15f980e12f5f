"""Sharded adaptive runs through one shared store give the unsharded adaptive run.

Shard processes (`evals run --adaptive --shard i/n`) each run their part of a look, wait
until every shard's part is stored, decide on the whole suite's runs and go on; shard 1
stores the merged evaluation. Checked on SQLite and PostgreSQL: the merged runs, gates and
adaptive summary equal the unsharded run's, also when a shard is killed and restarted, and
a look whose shard never comes fails with a clear error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals.model.options import RunOptions
from evals.model.summary import AdaptiveSummary
from evals.pipeline.adaptive import design_for, run_adaptive, shard_evaluation_id
from evals.store import open_store
from evals.suite import load_suite

pytestmark = pytest.mark.slow

AGENTS = """\
import os, time


def right(prompt, options, context):
    return {"output": "yes", "cost": 0.01}


def half(prompt, options, context):
    time.sleep(float(os.environ.get("SLOW_MS", "0")) / 1000)
    case = int(context["vars"]["n"])
    if context["vars"]["tag"] == "steady":
        return {"output": "yes", "cost": 0.01}
    return {"output": "yes" if (case + context["repeat"]) % 2 == 0 else "no", "cost": 0.01}
"""

SUITE = """\
prompts: ['{{n}}']
providers:
  - {id: file://agents.py:right, label: base}
  - {id: file://agents.py:half, label: cand}
evaluateOptions: {maxConcurrency: 2}
gates:
  baseline: base
  candidate: cand
  max_regression: 0.6
  max_error_rate: null
  per_tag: {steady: {max_regression: 0.3}, shaky: {max_regression: 0.5}}
tests:
"""

LAST, EVERY = 10, 2


def _suite(folder: Path) -> Path:
    """Eight steady cases decided early and four shaky ones that run on."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agents.py").write_text(AGENTS, encoding="utf-8")
    tests = "".join(
        f"  - vars: {{n: {n}, tag: {tag}}}\n    metadata: {{tags: [{tag}]}}\n"
        "    assert: [{type: contains, value: 'yes'}]\n"
        for n, tag in [(n, "steady") for n in range(8)] + [(n, "shaky") for n in range(8, 12)]
    )
    path = folder / "suite.yaml"
    path.write_text(SUITE + tests, encoding="utf-8")
    return path


def _shard(suite: Path, url: str, index: int, count: int, ident: str, **env: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "evals",
        "run",
        str(suite),
        "--adaptive",
        str(LAST),
        "--look-every",
        str(EVERY),
        "--shard",
        f"{index}/{count}",
        "--store",
        url,
        "--evaluation-id",
        ident,
        "--shard-wait",
        env.get("wait", "120"),
        "--quiet",
        "--no-progress",
    ]


def _start(command: list[str], cwd: Path, slow_ms: int = 0) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SLOW_MS": str(slow_ms)}
    return subprocess.Popen(
        command, cwd=cwd, env=env, stderr=subprocess.PIPE, start_new_session=True
    )


def _runs(url: str, ident: str) -> list[tuple]:
    store = open_store(url)
    try:
        return sorted(
            (r.key.as_tuple(), r.seed, r.response.output, r.passed) for r in store.load_runs(ident)
        )
    finally:
        store.close()


def _stored(url: str, ident: str) -> int:
    store = open_store(url)
    try:
        return len(store.completed_keys(ident))
    finally:
        store.close()


def _unsharded(suite: Path, tmp_path: Path) -> tuple[list[tuple], dict, str]:
    loaded = load_suite(suite)
    design = design_for(loaded.gates.for_environment(None), LAST, EVERY)
    url = f"sqlite:///{tmp_path / 'whole.db'}"
    whole = run_adaptive(loaded, RunOptions(store_url=url, progress=False), design)
    assert len(whole.looks) >= 3 and whole.runs < whole.fixed_runs
    return _runs(url, whole.result.meta.id), whole.summary(), whole.result.gates.verdict


def _merged(url: str, ident: str) -> tuple[list[tuple], AdaptiveSummary, str]:
    store = open_store(url)
    try:
        meta = store.get_evaluation(ident)
    finally:
        store.close()
    assert meta is not None and meta.shard is None and meta.status == "complete"
    assert meta.gates is not None
    summary = AdaptiveSummary.from_dict(meta.gates["adaptive"])
    return _runs(url, ident), summary, meta.gates["verdict"]


def _finish(processes: list[subprocess.Popen[bytes]]) -> list[int]:
    codes = []
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode in (0, 1), err.decode()
        codes.append(process.returncode)
    return codes


def test_three_shards_through_one_store_give_the_unsharded_adaptive_run(
    store_url: str, tmp_path: Path
) -> None:
    suite = _suite(tmp_path / "suite")
    runs, summary, verdict = _unsharded(suite, tmp_path)

    shards = [_start(_shard(suite, store_url, i, 3, "ad"), tmp_path) for i in (1, 2, 3)]
    codes = _finish(shards)

    assert len(set(codes)) == 1
    merged_runs, merged_summary, merged_verdict = _merged(store_url, "ad")
    assert merged_runs == runs
    assert merged_summary == summary
    assert merged_verdict == verdict
    # Each shard stored only its own part, and the parts cover the merged runs.
    parts = [_runs(store_url, shard_evaluation_id("ad", (i, 3))) for i in (1, 2, 3)]
    assert sorted(run for part in parts for run in part) == runs
    assert all(parts)


def test_a_killed_shard_restarts_and_the_run_ends_as_the_unsharded_one(
    store_url: str, tmp_path: Path
) -> None:
    suite = _suite(tmp_path / "suite")
    runs, summary, verdict = _unsharded(suite, tmp_path)
    first = _start(_shard(suite, store_url, 1, 2, "kill"), tmp_path)
    second_command = _shard(suite, store_url, 2, 2, "kill")
    second = _start(second_command, tmp_path, slow_ms=150)
    part = shard_evaluation_id("kill", (2, 2))
    deadline = time.monotonic() + 120
    while _stored(store_url, part) < 14 and time.monotonic() < deadline:
        assert second.poll() is None, "the shard ended before it could be killed"
        time.sleep(0.05)
    os.killpg(second.pid, signal.SIGKILL)
    second.wait(timeout=30)
    killed_at = _stored(store_url, part)
    assert 14 <= killed_at < len(runs) // 2
    assert first.poll() is None  # shard 1 waits for shard 2's runs

    restarted = _start(second_command, tmp_path)
    _finish([first, restarted])

    merged_runs, merged_summary, merged_verdict = _merged(store_url, "kill")
    assert (merged_runs, merged_summary, merged_verdict) == (runs, summary, verdict)


def test_a_look_whose_shard_never_comes_fails_naming_it(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    url = f"sqlite:///{tmp_path / 'alone.db'}"
    alone = _start(_shard(suite, url, 1, 2, "alone", wait="2"), tmp_path)
    _, err = alone.communicate(timeout=120)
    assert alone.returncode == 3
    message = err.decode()
    assert "look 1 of adaptive run alone waited 2 s for the other shards' runs" in message
    assert "shard 2/2 (alone-shard-2-of-2) lacks 24 of its 24 runs" in message
    assert "--shard-wait" in message

"""The JSON, YAML, JSONL and CSV reports against files promptfoo 0.121 wrote itself."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from promptfoo_cli import PROMPTFOO, needs_promptfoo, promptfoo_import
from report_sample import sample_result

from evals.reports import write_report
from evals.reports.data_files import render_csv, render_json, render_jsonl, render_yaml

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return json.loads((GOLDEN / "promptfoo-output.json").read_text())


@pytest.fixture(scope="module")
def ours() -> dict[str, Any]:
    return json.loads(render_json(sample_result()))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _assert_same_shape(theirs: Any, mine: Any, where: str) -> None:
    """Every key promptfoo writes is present with the same JSON type (recursively)."""
    assert _kind(mine) == _kind(theirs), f"{where}: {_kind(mine)} != {_kind(theirs)}"
    if isinstance(theirs, dict):
        missing = set(theirs) - set(mine)
        assert not missing, f"{where}: missing {sorted(missing)}"
        for key in theirs:
            if key in ("vars", "namedScores", "namedScoresCount", "namedScoreWeights", "metadata"):
                continue  # free-form maps whose keys depend on the suite
            _assert_same_shape(theirs[key], mine[key], f"{where}.{key}")


def _row(document: dict[str, Any], reason: int) -> dict[str, Any]:
    return next(r for r in document["results"]["results"] if r["failureReason"] == reason)


def test_top_level_and_results_keys_match_promptfoo(golden, ours):
    expected = set(golden) - {"metadata"}
    assert expected <= set(ours)
    assert set(ours) - set(golden) == {"evals"}
    assert set(ours["results"]) == set(golden["results"])
    assert ours["results"]["version"] == golden["results"]["version"] == 3
    _assert_same_shape(golden["results"]["stats"], ours["results"]["stats"], "stats")
    assert {"platform", "arch", "exportedAt", "evaluationCreatedAt"} <= set(ours["metadata"])


def test_prompt_columns_match_promptfoo(golden, ours):
    assert len(ours["results"]["prompts"]) == len(golden["results"]["prompts"]) == 2
    for theirs, mine in zip(golden["results"]["prompts"], ours["results"]["prompts"], strict=True):
        _assert_same_shape(theirs, mine, "prompt")
        assert mine["id"] == theirs["id"]  # sha256 of the label, as promptfoo computes it
        assert mine["provider"] == theirs["provider"]


@pytest.mark.parametrize("reason", [0, 1, 2], ids=["pass", "fail", "error"])
def test_rows_match_promptfoo_for_each_outcome(golden, ours, reason):
    theirs, mine = _row(golden, reason), _row(ours, reason)
    _assert_same_shape(theirs, mine, f"row[{reason}]")
    assert set(mine) == set(theirs)
    assert mine["success"] is (reason == 0)
    if reason == 2:
        assert mine["gradingResult"] is None and mine["response"] == {"error": mine["error"]}
        assert mine["score"] == 0


@pytest.mark.parametrize("source", ["golden", "ours"])
def test_prompt_metrics_are_sums_of_rows(source, golden, ours):
    """The arithmetic is checked on promptfoo's own file too, so the rule tested is its rule."""
    document = golden if source == "golden" else ours
    results = document["results"]
    for index, prompt in enumerate(results["prompts"]):
        rows = [r for r in results["results"] if r["promptIdx"] == index]
        metrics = prompt["metrics"]
        assert metrics["score"] == pytest.approx(sum(r["score"] for r in rows))
        assert metrics["testPassCount"] == sum(r["failureReason"] == 0 for r in rows)
        assert metrics["testFailCount"] == sum(r["failureReason"] == 1 for r in rows)
        assert metrics["testErrorCount"] == sum(r["failureReason"] == 2 for r in rows)
        components = [
            c for r in rows for c in (r["gradingResult"] or {}).get("componentResults", [])
        ]
        assert metrics["assertPassCount"] == sum(c["pass"] for c in components)
        assert metrics["assertFailCount"] == sum(not c["pass"] for c in components)
        assert metrics["totalLatencyMs"] == sum(r["latencyMs"] for r in rows)
        assert metrics["cost"] == pytest.approx(sum(r["cost"] for r in rows))
        usage = metrics["tokenUsage"]
        assert usage["numRequests"] == len(rows)
        for key in ("prompt", "completion", "total"):
            assert usage[key] == sum(
                (r["response"].get("tokenUsage") or {}).get(key, 0) for r in rows
            )
        for name, total in metrics["namedScores"].items():
            values = [r["namedScores"][name] for r in rows if name in r["namedScores"]]
            assert total == pytest.approx(sum(values))
            assert metrics["namedScoresCount"][name] == len(values)
    stats = results["stats"]
    prompts = results["prompts"]
    assert stats["successes"] == sum(p["metrics"]["testPassCount"] for p in prompts)
    assert stats["failures"] == sum(p["metrics"]["testFailCount"] for p in prompts)
    assert stats["errors"] == sum(p["metrics"]["testErrorCount"] for p in prompts)
    assert stats["tokenUsage"]["total"] == sum(p["metrics"]["tokenUsage"]["total"] for p in prompts)


@pytest.mark.parametrize("source", ["golden", "ours"])
def test_repeats_are_consecutive_test_indices(source, golden, ours):
    document = golden if source == "golden" else ours
    rows = document["results"]["results"]
    repeat = 2
    for row in rows:
        first = next(r for r in rows if r["testIdx"] == row["testIdx"] - row["testIdx"] % repeat)
        assert row["testCase"]["description"] == first["testCase"]["description"]
    assert [(r["testIdx"], r["promptIdx"]) for r in rows] == sorted(
        (r["testIdx"], r["promptIdx"]) for r in rows
    )
    if source == "ours":
        for row in rows:
            assert row["metadata"]["repeatIndex"] == row["testIdx"] % repeat
            assert row["metadata"]["evals"]["repeat"] == row["metadata"]["repeatIndex"]


def test_our_counts_and_evals_section(ours):
    result = sample_result()
    stats = ours["results"]["stats"]
    assert (stats["successes"], stats["failures"], stats["errors"]) == (12, 3, 1)
    candidate = ours["results"]["prompts"][1]["metrics"]
    runs = candidate["testPassCount"] + candidate["testFailCount"] + candidate["testErrorCount"]
    assert runs == 8 and candidate["testPassCount"] / runs == 0.5  # errors in the denominator
    evals = ours["evals"]
    assert evals["evaluationId"] == result.meta.id
    assert evals["suite"] == {
        "id": "demo",
        "version": "1.0",
        "fingerprint": "abc123",
        "description": "demo suite",
        "path": str(result.suite.path),
    }
    assert evals["git"] == {"commit": "deadbeef", "branch": "feature"}
    assert evals["gates"]["verdict"] == "fail"
    assert evals["summary"]["comparison"]["overall"]["verdict"] == "regression"
    assert evals["summary"]["case_stats"][0]["interval"] == [0.6, 1.0]
    trajectory = ours["results"]["results"][0]["metadata"]["evals"]["trajectory"]
    assert [s["kind"] for s in trajectory] == ["model", "tool"]


def test_non_finite_numbers_become_null():
    result = sample_result()
    result.summary.agents[0].icc = math.nan
    result.summary.agents[1].icc = math.inf
    text = render_json(result)
    assert "NaN" not in text and "Infinity" not in text
    agents = json.loads(text)["evals"]["summary"]["agents"]
    assert agents[0]["icc"] is None and agents[1]["icc"] is None


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["pass", "fail", "error"]), min_size=16, max_size=16))
def test_counts_follow_any_mix_of_outcomes(statuses):
    result = sample_result()
    for record, status in zip(result.records, statuses, strict=True):
        record.status = status
        if status == "error":
            record.grade = None
            record.error = "boom"
    document = json.loads(render_json(result))
    for index, agent in enumerate(("baseline", "candidate")):
        mine = [s for r, s in zip(result.records, statuses, strict=True) if r.key.agent == agent]
        metrics = document["results"]["prompts"][index]["metrics"]
        assert metrics["testPassCount"] == mine.count("pass")
        assert metrics["testFailCount"] == mine.count("fail")
        assert metrics["testErrorCount"] == mine.count("error")
    stats = document["results"]["stats"]
    assert stats["successes"] + stats["failures"] + stats["errors"] == 16


def test_yaml_and_jsonl_carry_the_same_rows(ours):
    result = sample_result()
    from_yaml = yaml.safe_load("".join(render_yaml(result)))
    assert from_yaml["results"]["results"] == ours["results"]["results"]
    lines = "".join(render_jsonl(result)).splitlines()
    assert [json.loads(line) for line in lines] == ours["results"]["results"]


def test_csv_follows_promptfoo_table():
    golden_rows = list(csv.reader((GOLDEN / "promptfoo-output.csv").open()))
    rows = list(csv.reader(io.StringIO("".join(render_csv(sample_result())))))
    assert rows[0] == golden_rows[0]  # same suite layout gives the same header
    assert len(rows) == 1 + 4 * 2  # one line per case and repeat
    status_columns = [i for i, name in enumerate(rows[0]) if name == "Status"]
    statuses = [[row[i] for i in status_columns] for row in rows[1:]]
    assert statuses[4] == ["PASS", "ERROR"]
    assert statuses[2] == ["PASS", "FAIL"]
    assert all(len(row) == len(rows[0]) for row in rows)


def test_csv_neutralizes_formulas():
    result = sample_result()
    result.records[0].response.output = "=HYPERLINK(1)"
    rows = list(csv.reader(io.StringIO("".join(render_csv(result)))))
    assert "'=HYPERLINK(1)" in rows[1]


@needs_promptfoo
def test_promptfoo_imports_our_json_and_its_viewer_opens_it(tmp_path):
    out = tmp_path / "out.json"
    write_report(out, sample_result())
    env = promptfoo_import(out, tmp_path)
    _opens_in_promptfoo_view(env, tmp_path, json.loads(out.read_text())["evalId"])


def _opens_in_promptfoo_view(env: dict[str, str], cwd: Path, eval_id: str) -> None:
    """`promptfoo view` lists the imported evaluation and serves its results table."""
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(PROMPTFOO), "view", "--port", str(port), "--no"],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/results", timeout=5) as reply:
                    listed = json.load(reply)["data"]
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.5)
        assert eval_id in [row["evalId"] for row in listed]
        with urllib.request.urlopen(
            f"{base}/api/eval/{eval_id}/table?limit=50", timeout=10
        ) as reply:
            table = json.load(reply)["table"]
        assert table["head"]["prompts"][0]["metrics"]["testPassCount"] >= 1
        assert len(table["body"]) >= 1
    finally:
        server.terminate()
        server.wait(timeout=20)

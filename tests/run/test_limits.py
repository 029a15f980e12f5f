"""The suite's `limits:` and `pass_env:`: parsing, which calls a key covers, and the
limiter's concurrency, pacing and token allowance on one event loop."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.model.errors import SuiteError
from evals.model.suite import CallLimit, ProviderSpec
from evals.run.limiter import CallLimiter, limit_keys
from evals.suite import load_suite
from evals.suite.limits import parse_limits, parse_pass_env


def _suite(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(
        f"""prompts: ["{{{{q}}}}"]
providers: [{{id: echo, label: a}}]
{extra}
tests: [{{vars: {{q: hi}}}}]
"""
    )
    return path


def test_limits_and_pass_env_load_and_leave_the_suite_fingerprint_alone(tmp_path: Path) -> None:
    plain = load_suite(_suite(tmp_path, ""))
    limited = load_suite(
        _suite(
            tmp_path,
            "limits: {openai: {concurrency: 4, requests_per_minute: 120.5}}\n"
            "pass_env: [OPENAI_API_KEY]",
        )
    )
    assert limited.limits == {"openai": CallLimit(concurrency=4, requests_per_minute=120.5)}
    assert limited.pass_env == ["OPENAI_API_KEY"]
    assert limited.fingerprint == plain.fingerprint


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("limits: [openai]", "limits must be a mapping"),
        ("limits: {openai: {concurrency: 2.5}}", "positive whole number"),
        ("limits: {openai: {requests_per_minute: 0}}", "positive number"),
        ("limits: {openai: {rpm: 3}}", "unknown key 'rpm'"),
        ("pass_env: OPENAI_API_KEY", "list of environment variable names"),
        ("pass_env: ['not a name']", "list of environment variable names"),
    ],
)
def test_bad_limits_name_the_file_and_line(tmp_path: Path, extra: str, needle: str) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(_suite(tmp_path, extra))
    assert needle in str(caught.value)
    assert caught.value.line == 3
    assert parse_limits({}, "x") == {} and parse_pass_env({}, "x") == []


def test_a_key_covers_label_id_scheme_or_everything() -> None:
    spec = ProviderSpec(id="openai:gpt-4o-mini", label="candidate")
    names = ["openai", "candidate", "openai:gpt-4o-mini", "*", "anthropic", "gpt-4o-mini"]
    assert limit_keys(spec, "candidate", names) == (
        "*",
        "candidate",
        "openai",
        "openai:gpt-4o-mini",
    )
    assert limit_keys(spec, "candidate", ["anthropic"]) == ()


async def _calls(limiter: CallLimiter, count: int, hold_s: float) -> list[tuple[float, float]]:
    spans: list[tuple[float, float]] = []

    async def one() -> None:
        await limiter.acquire(("k",))
        start = time.monotonic()
        await asyncio.sleep(hold_s)
        spans.append((start, time.monotonic()))
        await limiter.release(("k",), 0)

    await asyncio.gather(*(one() for _ in range(count)))
    return spans


@settings(max_examples=8)
@given(st.integers(1, 4), st.integers(5, 12))
def test_concurrency_never_exceeds_the_cap(cap: int, count: int) -> None:
    limiter = CallLimiter({"k": CallLimit(concurrency=cap)})
    spans = asyncio.run(_calls(limiter, count, 0.01))
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    level = peak = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    assert peak == min(cap, count)


def test_requests_per_minute_space_the_starts() -> None:
    limiter = CallLimiter({"k": CallLimit(requests_per_minute=1200)})  # one per 50 ms
    begun = time.monotonic()
    starts = sorted(start for start, _ in asyncio.run(_calls(limiter, 10, 0.0)))
    # the k-th start never comes before k intervals have passed (a late wake-up may
    # bring two starts closer, never ahead of the pace)
    assert all(start >= begun + k * 0.05 - 0.001 for k, start in enumerate(starts))
    assert starts[-1] - begun < 9 * 0.05 + 1.0


def test_tokens_per_minute_hold_new_calls_until_the_allowance_refills() -> None:
    now = [0.0]
    limiter = CallLimiter({"k": CallLimit(tokens_per_minute=600)}, clock=lambda: now[0])

    async def scenario() -> list[float]:
        waits: list[float] = []
        await limiter.acquire(("k",))
        await limiter.release(("k",), 900)  # 300 tokens over the minute's allowance
        task = asyncio.ensure_future(limiter.acquire(("k",)))
        await asyncio.sleep(0)
        waits.append(float(task.done()))
        now[0] = 29.0  # refilled 290 of the 300 owed: still waiting
        await asyncio.sleep(0.05)
        waits.append(float(task.done()))
        now[0] = 31.0
        await asyncio.wait_for(task, 2.0)
        waits.append(float(task.done()))
        return waits

    assert asyncio.run(scenario()) == [0.0, 0.0, 1.0]


def test_an_unset_passed_variable_stops_the_run_before_any_store_or_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray")
    from evals.cli import main

    monkeypatch.delenv("EVALS_SURELY_UNSET", raising=False)
    suite = _suite(tmp_path, "pass_env: [EVALS_SURELY_UNSET]")
    store = tmp_path / "store.db"
    code = main(["run", str(suite), "--executor", "ray", "--store", str(store), "--no-progress"])
    assert code == 2
    assert "pass_env names EVALS_SURELY_UNSET, not set" in capsys.readouterr().err
    assert not store.exists()
    (tmp_path / "plain").mkdir()
    plain = _suite(tmp_path / "plain", "")
    code = main(["run", str(plain), "--executor", "ray", "--pass-env", "EVALS_SURELY_UNSET"])
    assert code == 2
    assert "EVALS_SURELY_UNSET" in capsys.readouterr().err

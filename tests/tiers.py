"""The test tiers: which tests `python -m pytest` runs, and what a test needs to run.

`python -m pytest` with neither test paths nor `-m` runs the fast tier: every test but
those of the slower tiers (SLOWER_TIERS), in a few minutes on two cores. Naming files or
tests runs them whatever their tier; `-m EXPRESSION` chooses by marker (`.ci/run` runs
`-m "slow or browser or ..."` after the fast tier). docs/testing.md describes the tiers.

A test marked with what it needs (a browser, a PostgreSQL server, the promptfoo CLI, Ray,
an optional extra) is skipped with the reason and the fix when that is missing here.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SLOWER_TIERS = ("slow", "browser", "hostile", "cluster", "promptfoo")
"""Markers of the tests the fast tier leaves out."""

SLOWER_TIERS_EXPRESSION = " or ".join(SLOWER_TIERS)
"""The `-m` expression that selects every slower tier."""

FAST_TIER_EXPRESSION = f"not ({SLOWER_TIERS_EXPRESSION})"

TESTS = Path(__file__).resolve().parent

FOLDER_TIERS = {TESTS / "hostile": "hostile", TESTS / "ray": "cluster"}
"""Folders whose every test belongs to a tier, so a test added there is tiered too."""

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "instrumentation": (
        "openinference.instrumentation.openai",
        "openinference.instrumentation.langchain",
        "opentelemetry.instrumentation.openai",
        "opentelemetry.instrumentation.langchain",
    ),
    "openai-agents": ("agents",),
    "langgraph": ("langgraph", "langchain_core"),
    "pydantic-ai": ("pydantic_ai",),
}
"""The optional extras beyond `[dev]` that tests use, with the modules each installs."""


def importable(module: str) -> bool:
    """Whether `module` (dotted) can be imported here, without importing it: a missing
    parent package is a missing module, not an error."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def promptfoo_cli() -> Path | None:
    """The promptfoo CLI the tests run ($EVALS_PROMPTFOO, else `promptfoo` on PATH), when
    it and node are installed."""
    chosen = os.environ.get("EVALS_PROMPTFOO") or shutil.which("promptfoo")
    if not chosen or shutil.which("node") is None or not Path(chosen).exists():
        return None
    return Path(chosen)


def find_uv() -> str:
    """The uv binary (PATH, or the one the project's CI script installs) for tests that
    build their own virtual environments; without it the test is skipped with the reason."""
    found = shutil.which("uv") or next(
        (str(p) for p in (TESTS.parent / ".ci" / "uv" / "bin" / "uv",) if p.is_file()), None
    )
    if found is None:
        pytest.skip("uv is needed to build the test's virtual environments (pip install uv)")
    return found


def _missing_extra(names: tuple[str, ...]) -> str | None:
    for name in names:
        missing = [m for m in EXTRA_MODULES[name] if not importable(m)]
        if missing:
            return (
                f"needs the [{name}] extra ({', '.join(missing)} not installed): "
                f"pip install -e '.[{name}]'"
            )
    return None


def _chromium() -> str | None:
    path = os.environ.get("EVALS_TEST_CHROMIUM")
    if path and Path(path).exists():
        return None
    return "needs headless Chromium: set EVALS_TEST_CHROMIUM to a Chromium binary"


def _postgres() -> str | None:
    if os.environ.get("EVALS_TEST_POSTGRES_URL"):
        return None
    return (
        "needs a PostgreSQL server: set EVALS_TEST_POSTGRES_URL to the URL "
        "tests/store/start_postgres.sh prints"
    )


def _promptfoo() -> str | None:
    if promptfoo_cli() is not None:
        return None
    return (
        "needs the promptfoo CLI and node: npm install promptfoo@0.121, then set "
        "EVALS_PROMPTFOO to its bin/promptfoo"
    )


def _ray() -> str | None:
    return None if importable("ray") else "needs Ray: pip install -e '.[ray]'"


REQUIREMENTS: dict[str, Callable[[], str | None]] = {
    "browser": _chromium,
    "postgres": _postgres,
    "promptfoo": _promptfoo,
    "cluster": _ray,
}
"""Each marker that names something a test needs, and why it is missing (None: present)."""


def mark_by_folder(item: pytest.Item) -> None:
    """Give a test the tier of the folder it lives in (FOLDER_TIERS)."""
    for folder, tier in FOLDER_TIERS.items():
        if item.path.is_relative_to(folder):
            item.add_marker(tier)


def skip_when_missing(item: pytest.Item) -> None:
    """Skip `item`, with the reason and the fix, when something its markers name is
    missing: `browser`, `postgres`, `promptfoo`, `cluster`, `extra(NAME, ...)`."""
    reasons = [REQUIREMENTS[m.name]() for m in item.iter_markers() if m.name in REQUIREMENTS]
    reasons += [_missing_extra(m.args) for m in item.iter_markers(name="extra")]
    reason = next((r for r in reasons if r), None)
    if reason is not None:
        item.add_marker(pytest.mark.skip(reason=reason))


def in_slower_tier(item: pytest.Item) -> bool:
    """Whether `item` belongs to one of the slower tiers."""
    return any(item.get_closest_marker(tier) is not None for tier in SLOWER_TIERS)


def _chose_markers(config: pytest.Config) -> bool:
    return any(
        arg in ("-m", "--markexpr") or (arg.startswith("-m") and not arg.startswith("--"))
        for arg in config.invocation_params.args
    )


def select_default_tier(config: pytest.Config) -> None:
    """Select the fast tier when the command names no tests and chooses no markers.

    pytest-xdist's workers parse the same command line, so they select the same tests."""
    if config.args_source == pytest.Config.ArgsSource.ARGS or _chose_markers(config):
        return
    config.option.markexpr = FAST_TIER_EXPRESSION
    config.pluginmanager.register(SlowHint(), "evals-slow-hint")


def header(config: pytest.Config) -> str:
    """The line under pytest's header that says which tiers this run selects."""
    chosen = config.option.markexpr
    if chosen == FAST_TIER_EXPRESSION:
        return (
            f"tiers: the fast tier; the slower tiers ({', '.join(SLOWER_TIERS)}) run with "
            f'-m "{SLOWER_TIERS_EXPRESSION}" (docs/testing.md)'
        )
    return f"tiers: chosen by -m {chosen!r}" if chosen else "tiers: every tier of the tests named"


SLOW_HINT_SECONDS = 5.0
"""A fast-tier test taking longer than this (setup, call and teardown) is named at the end
of the run, as one that should probably be marked slow."""


class SlowHint:
    """A plugin that times the tests of a fast-tier run and names, at its end, those that
    took longer than SLOW_HINT_SECONDS (pytest-xdist hands the workers' reports to the
    main process, which prints the summary)."""

    def __init__(self) -> None:
        self.durations: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Add one phase of a test to its duration."""
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        """Name the fast tier's tests that took long enough to belong to a slower tier."""
        if config.option.markexpr != FAST_TIER_EXPRESSION:
            return
        slow = sorted(
            ((s, n) for n, s in self.durations.items() if s > SLOW_HINT_SECONDS), reverse=True
        )
        if not slow:
            return
        terminalreporter.write_line(
            f"{len(slow)} test(s) of the fast tier took more than {SLOW_HINT_SECONDS:.0f} s "
            "here; if they do on a quiet machine too, mark them slow (docs/testing.md):",
            yellow=True,
        )
        for seconds, name in slow[:10]:
            terminalreporter.write_line(f"  {seconds:.1f} s  {name}", yellow=True)

"""People judging outputs: annotations of runs are checked, kept in the triage log with
who and when, and become `evals calibrate` labels; in headless Chromium, an override made
on the Case page reaches `evals calibrate`, and the Outputs grid shows both agents'
answers side by side with the annotation.

The browser test is skipped unless EVALS_TEST_CHROMIUM names a Chromium binary.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from evals.cli import main
from evals.model.errors import SuiteError
from evals.model.triage import TriageAction
from evals.team import triage
from evals.team.labels import deciding
from tests.dashboard.browser import ConsoleErrors, ScriptRuns, chromium, serve
from tests.dashboard.nightly_project import BREAKS, build_history

CHROMIUM = os.environ.get("EVALS_TEST_CHROMIUM")
RUN = {"evaluation_id": "e", "case_id": "c", "agent": "a", "prompt_id": "p", "repeat": 0}


@pytest.mark.parametrize(
    ("kind", "label", "comment", "message"),
    [
        ("override", None, "why", "needs a label: one of pass, fail"),
        ("override", "pass", "", "needs a reason"),
        ("rate", "sideways", "", "one of up, down"),
        ("comment", "pass", "text", "takes no label"),
        ("veto", None, "x", "unknown annotation"),
    ],
)
def test_an_annotation_is_checked_before_it_is_stored(
    kind: str, label: str | None, comment: str, message: str
) -> None:
    with pytest.raises(SuiteError, match=message):
        triage.new_annotation(kind, "s", "ann", comment, now=0.0, label=label, **RUN)


def test_a_runs_label_comes_from_its_override_else_its_newest_thumb() -> None:
    def note(kind: str, label: str | None, repeat: int, at: float) -> TriageAction:
        return TriageAction(
            kind,
            "s",
            "ann",
            "r",
            at,
            case_id="c",
            evaluation_id="e",
            agent="a",  # type: ignore[arg-type]
            prompt_id="p",
            repeat=repeat,
            label=label,
        )

    newest_first = [
        note("rate", "down", 0, 5.0),
        note("override", "pass", 0, 4.0),
        note("rate", "up", 1, 3.0),
        note("rate", "down", 1, 2.0),
        note("comment", None, 2, 1.0),
    ]
    chosen = {a.repeat: (a.kind, a.label) for a in deciding(newest_first)}
    assert chosen == {0: ("override", "pass"), 1: ("rate", "up")}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    folder = tmp_path_factory.mktemp("judgement")
    store = f"sqlite:///{folder / 'store.db'}"
    build_history(folder / "project", store, range(1, BREAKS + 1))
    return store, folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM:
        pytest.skip("set EVALS_TEST_CHROMIUM to a Chromium binary")
    with chromium(CHROMIUM) as launched:
        yield launched


def _cli(arguments: list[str]) -> int:
    """`evals ...` on a thread of its own: Playwright's event loop holds the main one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(main, arguments).result()


@pytest.mark.browser
@pytest.mark.slow
def test_an_override_made_in_the_page_reaches_evals_calibrate(
    history: tuple[str, Path], browser: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    store, folder = history
    case = "refunds-question-refund-2"
    with serve(store) as address:
        page = browser.new_page(viewport={"width": 1366, "height": 900})
        page.set_default_timeout(120_000)
        runs, errors = ScriptRuns(page), ConsoleErrors(page)
        runs.after(lambda: page.goto(f"{address}/case?case={case}"))
        page.get_by_text("Override the verdict: pass", exact=True).click()
        page.get_by_label("Why (needed for an override or a comment)").fill(
            "the amount is right, in cents: the assertion reads it wrong"
        )
        runs.after(lambda: page.get_by_role("button", name="Record annotation").click())
        page.get_by_text("Recorded annotation").wait_for()

        runs.after(lambda: page.goto(f"{address}/outputs?q={case}"))
        grid = page.locator("table.outputs-grid")
        assert "verdict overridden to pass by" in grid.inner_text()
        assert "Refund of 21.00 EUR" in grid.inner_text()  # the baseline's answer
        assert "Refund of 2100 EUR" in grid.inner_text()  # the candidate's, beside it
        grid.locator("summary").nth(1).click()  # the candidate's cell unfolds in place
        assert grid.get_by_text("repeat 8 ✗").is_visible()
        assert errors.unexpected() == []
        page.close()

    labels = folder / "labels.jsonl"
    suite = _suite_id(store)
    capsys.readouterr()
    assert (
        _cli(
            [
                "triage",
                "labels",
                "--suite",
                suite,
                "--assertion",
                "contains",
                "-o",
                str(labels),
                "--store",
                store,
            ]
        )
        == 0
    )
    (item,) = [json.loads(line) for line in labels.read_text().splitlines()]
    assert item["human"] == "pass" and item["assert"]["type"] == "contains"
    assert item["source"]["case"] == case and "in cents" in item["source"]["reason"]
    capsys.readouterr()
    assert _cli(["calibrate", str(labels)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    # One labelled output; the person said pass where the `contains` check said fail.
    assert "contains 1 0 0.000 [0.000, 0.793]" in printed


def _suite_id(store: str) -> str:
    from evals.store import open_store

    opened = open_store(store)
    try:
        return opened.list_evaluations(limit=1)[0].suite_id
    finally:
        opened.close()

"""A team's project with a nightly history, built the way the team builds it: a support
agent of their own, a suite of 20 cases in `suite.yaml`, a git repository, and
`evals run suite.yaml --env nightly` once a night.

The story the history tells (night numbers from 1):

- nights 1-3: the candidate answers like the baseline;
- night 4 (commit "refunds: amounts in cents"): the candidate gets every refund wrong:
  the cases tagged `refunds` regress, and so does the P0 case `refund-1`;
- night 5: a partial fix leaves two refund cases failing 1 and 2 of 8 repeats and the
  others passing: the evidence of that night alone is inconclusive, for each case and for
  the tag;
- night 7: the suite is edited (version unchanged): case `refund-partial` is added and
  `billing-9` removed;
- night 8: the definition of `refund-2` changes (its expected text);
- nights 7-10: the refund bug is back in full.

The P0 case `account-0` loses 5 of 8 repeats from night 4: too few for its per-case
verdict over 20 cases, enough for the P0 gate, which decides within the P0 cases.
Each night runs at 03:00 UTC of its own day (the clock is moved for the run).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from evals.cli import main

FIRST_NIGHT = 1_772_679_600.0  # 2026-03-05 03:00 UTC
DAY = 86_400.0
NIGHTS = 10
BREAKS = 4  # the night the refund bug lands
PARTIAL_FIX = 5  # the inconclusive night
PARTLY_WRONG = (1, 2, 0, 0)  # repeats of each refund case the candidate gets wrong on it
SUITE_EDIT = 7  # a case added, another removed
DEFINITION_EDIT = 8  # refund-2's expected text changes
REPEATS = 8
P0_FAILING = 5  # account-0: repeats the candidate gets wrong from night 4

AGENT = '''"""The support agent: answers a customer's question about an order."""

import json
from pathlib import Path

SETTINGS = json.loads((Path(__file__).parent / "settings.json").read_text())


def _amount(vars):
    return f"{vars['amount']:.2f} EUR"


def _answer(vars, wrong):
    if vars["topic"] == "refunds":
        amount = f"{vars['amount'] * 100:.0f} EUR" if wrong else _amount(vars)
        return f"Refund of {amount} issued for order {vars['order']}."
    if vars["topic"] == "billing":
        return f"Invoice for order {vars['order']}: {_amount(vars)}."
    return "wrong account" if wrong else f"Account for order {vars['order']} is active."


def baseline(prompt, options, context):
    return {"output": _answer(context["vars"], wrong=False), "cost": 0.002}


def candidate(prompt, options, context):
    failing = SETTINGS["failing_repeats"].get(context["vars"]["id"], 0)
    wrong = context["repeat"] < failing
    return {"output": _answer(context["vars"], wrong=wrong), "cost": 0.002}
'''


@dataclass(frozen=True, slots=True)
class Night:
    """One night of the history: its number, commit and evaluation id."""

    number: int
    commit: str
    evaluation_id: str
    started_at: float


def _cases(night: int) -> list[dict[str, object]]:
    cases: list[dict[str, object]] = []
    for n in range(1, 4):
        cases.append(
            {
                "id": f"refund-{n}",
                "topic": "refunds",
                "amount": 10.5 * n,
                "priority": "P0" if n == 1 else "P2",
            }
        )
    if night >= SUITE_EDIT:
        cases.append({"id": "refund-partial", "topic": "refunds", "amount": 7.25, "priority": "P2"})
    for n in range(5, 29):
        if n == 9 and night >= SUITE_EDIT:
            continue
        cases.append(
            {"id": f"billing-{n}", "topic": "billing", "amount": 3.0 * n, "priority": "P2"}
        )
    for n in range(7):
        cases.append(
            {
                "id": f"account-{n}",
                "topic": "account",
                "amount": 1.0,
                "priority": "P0" if n == 0 else "P1",
            }
        )
    return cases


def _expected(case: dict[str, object], night: int) -> str:
    if case["topic"] == "refunds":
        if case["id"] == "refund-2" and night >= DEFINITION_EDIT:
            return f"Refund of {case['amount']:.2f} EUR"
        return f"{case['amount']:.2f} EUR"
    if case["topic"] == "billing":
        return "Invoice"
    return "active"


def suite_text(night: int) -> str:
    """The suite file as it reads on `night`."""
    tests = []
    for index, case in enumerate(_cases(night)):
        tests.append(
            f"  - description: {case['topic']} question {case['id']}\n"
            f"    vars: {{id: {case['id']}, topic: {case['topic']}, amount: {case['amount']}, "
            f"order: {4100 + index}}}\n"
            f"    metadata: {{priority: {case['priority']}, tags: [{case['topic']}]}}\n"
            f"    assert: [{{type: contains, value: '{_expected(case, night)}'}}]"
        )
    return (
        "description: support-bot\n"
        "version: '1'\n"
        "prompts: ['{{topic}}: order {{order}}']\n"
        "providers:\n"
        "  - {id: file://support_bot.py:baseline, label: baseline}\n"
        "  - {id: file://support_bot.py:candidate, label: candidate}\n"
        f"evaluateOptions: {{repeat: {REPEATS}}}\n"
        "gates: {baseline: baseline, candidate: candidate, max_error_rate: null}\n"
        "tests:\n" + "\n".join(tests) + "\n"
    )


def failing_repeats(night: int) -> dict[str, int]:
    """How many of each case's repeats the candidate gets wrong on `night`."""
    if night < BREAKS:
        return {}
    refunds = [c["id"] for c in _cases(night) if c["topic"] == "refunds"]
    # the partial fix leaves some refund cases a little wrong and others right: cases
    # that differ this much leave the tag's difference over its cases undecided
    partly = dict(zip(refunds, PARTLY_WRONG, strict=False))
    failing = {case: partly.get(case, 0) if night == PARTIAL_FIX else REPEATS for case in refunds}
    failing["account-0"] = P0_FAILING
    return {str(k): v for k, v in failing.items()}


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, text=True
    ).stdout.strip()


MESSAGES = {
    1: "support bot",
    BREAKS: "refunds: amounts in cents",
    PARTIAL_FIX: "refunds: round some amounts",
    SUITE_EDIT: "suite: add refund-partial, drop billing-9; refunds: amounts in cents again",
    DEFINITION_EDIT: "suite: refund-2 expects the full sentence",
}


@contextmanager
def _clock(at: float) -> Iterator[None]:
    """`time.time` reads as if the run started at `at`."""
    real = time.time
    offset = at - real()
    with mock.patch.object(time, "time", lambda: real() + offset):
        yield


def write_night(folder: Path, night: int) -> str:
    """Write the project as it is on `night`, commit it; returns the commit."""
    (folder / "support_bot.py").write_text(AGENT, encoding="utf-8")
    (folder / "settings.json").write_text(
        json.dumps({"failing_repeats": failing_repeats(night)}, indent=1), encoding="utf-8"
    )
    (folder / "suite.yaml").write_text(suite_text(night), encoding="utf-8")
    _git(folder, "add", "-A")
    message = MESSAGES.get(night, f"night {night}: small fixes")
    _git(folder, "commit", "-q", "--allow-empty", "-m", message)
    return _git(folder, "rev-parse", "HEAD")


def build_history(
    folder: Path, store_url: str, nights: range = range(1, NIGHTS + 1)
) -> list[Night]:
    """Run `evals run suite.yaml --env nightly` once a night for `nights` into
    `store_url`, each from its own commit in the project's repository at `folder` (made
    on first use); returns the nights, oldest first."""
    if not (folder / ".git").exists():
        folder.mkdir(parents=True, exist_ok=True)
        _git(folder, "init", "-q", "-b", "main")
        _git(folder, "config", "user.email", "team@example.com")
        _git(folder, "config", "user.name", "Team")
    made = []
    for night in nights:
        commit = write_night(folder, night)
        evaluation_id = f"night-{night:02d}"
        at = FIRST_NIGHT + (night - 1) * DAY
        with _clock(at):
            main(
                [
                    "run",
                    str(folder / "suite.yaml"),
                    "--env",
                    "nightly",
                    "--store",
                    store_url,
                    "--no-progress",
                    "--evaluation-id",
                    evaluation_id,
                ]
            )
        made.append(Night(night, commit, evaluation_id, at))
    return made

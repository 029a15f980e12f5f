"""A secret never leaves in pieces or in disguise.

One evaluation reads a key through `{{ env.X }}` in the suite's description, a test's
description and its metadata (so the outline, the evaluation's description and the case id
built from the description all see it), and agents leak it three ways: in an error message
so long the harness cuts it, with the key straddling both edges of the cut; encoded
(percent-encoded, JSON-escaped, lower-cased, base64, HTML-escaped, hexadecimal); and cut
by the agent itself ("…"). Tags, a metric's name and a case's own id read it too. The key holds
quotes, a backslash, a slash, spaces, `%`, `&`, `+` and a non-ASCII letter, so every
encoding differs from the key. Nothing written (the store, every
report format, the terminal) may hold any of those forms, nor any 8 characters of the key.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from tests.hostile.harness import Case, Correct, UsageError, make_workspace, run_evals

KEY = 'Zk"9\\/+ =%&?é-Ab12Cd34Ef56Gh78-tail'

SUITE = """\
description: 'forms of {{ env.HOSTILE_FORMS_KEY }}'
prompts: ['Q {{ q }}']
providers:
  - id: file://leak.py:cut_error
    label: cut-error
  - id: file://leak.py:encodings
    label: encodings
  - id: file://leak.py:agent_cut
    label: agent-cut
tests:
  - description: 'uses {{ env.HOSTILE_FORMS_KEY }} in its name'
    vars: {q: hi}
    metadata: {owner: '{{ env.HOSTILE_FORMS_KEY }}', tags: ['tag {{ env.HOSTILE_FORMS_KEY }}']}
    assert: [{type: contains, value: Q, metric: 'metric {{ env.HOSTILE_FORMS_KEY }}'}]
  - vars: {q: second}
    metadata: {id: 'id {{ env.HOSTILE_FORMS_KEY }}'}
gates: {}
"""

LEAK = """\
import base64, html, json, os
from urllib.parse import quote

KEY = os.environ["HOSTILE_FORMS_KEY"]
HEAD, KEPT = 1024, 16 * 1024  # what the harness keeps of a long error message


def cut_error(prompt, options, context):
    # the stored message is "agent raised Exception: " + the message, cut after HEAD
    # characters and kept for its last KEPT - HEAD: a key straddles each edge of the cut
    lead = "agent raised Exception: "
    first = "a" * (HEAD - len(lead) - 10) + KEY
    middle = "b" * 40_000
    last = KEY + "c" * (KEPT - HEAD - 10)
    raise Exception(first + middle + last)


def encodings(prompt, options, context):
    return {"output": " | ".join([
        quote(KEY, safe=""), quote(KEY), json.dumps({"key": KEY}), KEY.lower(), KEY.upper(),
        base64.b64encode(KEY.encode()).decode(), html.escape(KEY), KEY.encode().hex(),
        json.dumps(json.dumps({"key": KEY})),
    ])}


def agent_cut(prompt, options, context):
    return {"error": "upstream refused " + KEY[:14] + "… and logged …" + KEY[-12:]}
"""

REPORTS = ("report.json", "report.jsonl", "report.csv", "report.yaml", "report.md", "report.xml")
REPORTS += ("report.html",)


def forms(secret: str) -> set[str]:
    """The forms the test looks for (written here, not taken from the redactor)."""
    once = json.dumps(secret)[1:-1]
    return {
        secret,
        secret.lower(),
        secret.upper(),
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        once,
        json.dumps(once)[1:-1],
        html.escape(secret),
        base64.b64encode(secret.encode()).decode(),
        secret.encode().hex(),
    }


def windows(secret: str, size: int = 8) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, hostile_url: str) -> dict[str, str]:
    """Everything one evaluation wrote: each report, the store, the terminal."""
    root = tmp_path_factory.mktemp("forms")
    case = Case("forms", "forms", {"suite.yaml": SUITE, "leak.py": LEAK}, Correct("masked"))
    ws = make_workspace(root, case, hostile_url)
    argv = ["run", "suite.yaml", "--store", str(ws.store), "--no-progress"]
    for name in REPORTS:
        argv += ["-o", name]
    done = run_evals(ws, *argv, env={"HOSTILE_FORMS_KEY": KEY})
    assert done.returncode in (0, 1), done.stderr.decode()[-3000:]
    found = {name: (ws.case / name).read_text(encoding="utf-8") for name in REPORTS}
    store = b"".join(p.read_bytes() for p in ws.case.glob("store.db*"))
    found["store"] = store.decode("utf-8", "replace")
    found["terminal"] = done.stdout.decode() + done.stderr.decode()
    return found


def test_the_leaks_happened(written: dict[str, str]) -> None:
    """Not vacuous: the messages around the key are there, masked."""
    report = written["report.json"]
    assert "agent raised Exception" in report and "characters cut" in report
    assert "upstream refused" in report
    assert "[REDACTED]" in report


@pytest.mark.parametrize("where", [*REPORTS, "store", "terminal"])
def test_no_form_and_no_piece_of_the_key_is_written(written: dict[str, str], where: str) -> None:
    text = written[where]
    leaked = sorted(f for f in forms(KEY) if f in text)
    assert not leaked, f"{where} holds {leaked}"
    pieces = sorted(w for w in windows(KEY) | windows(KEY.lower()) if w in text)
    assert not pieces, f"{where} holds pieces of the key: {pieces}"


def test_the_case_id_and_outline_are_masked(written: dict[str, str]) -> None:
    store = written["store"]
    assert "uses-redacted-in-its-name" in store
    assert "forms of [REDACTED]" in store


def test_the_tags_metrics_and_ids_read_from_env_are_masked(written: dict[str, str]) -> None:
    store = written["store"]
    assert "tag [REDACTED]" in store and "metric [REDACTED]" in store
    assert "id [REDACTED]" in store


LABELLED = """\
prompts: ['Q {{ q }}']
providers:
  - id: file://leak.py:encodings
    label: 'agent {{ env.HOSTILE_FORMS_KEY }}'
tests: [{vars: {q: hi}}]
"""


def test_an_agent_named_with_a_secret_is_refused_without_printing_it(
    tmp_path: Path, hostile_url: str
) -> None:
    """An agent's name keys the store, the gates and every report: it cannot be masked in
    some places only, so a name holding a secret is refused before anything runs."""
    case = Case("label", "forms", {"suite.yaml": LABELLED, "leak.py": LEAK}, UsageError(()))
    ws = make_workspace(tmp_path, case, hostile_url)
    done = run_evals(
        ws, "run", "suite.yaml", "--store", str(ws.store), env={"HOSTILE_FORMS_KEY": KEY}
    )
    terminal = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 2, terminal
    assert "suite.yaml:3" in terminal and "label:" in terminal
    assert not [w for w in windows(KEY) if w in terminal]
    assert not ws.store.exists()

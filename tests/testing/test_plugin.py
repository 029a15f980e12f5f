"""`pytest --evals` end to end, in pytester projects: runs, verdicts, store, exit codes."""

from __future__ import annotations

import json
import textwrap

# numpy loads here, before pytester's in-process runs: it refuses a second load in one process
import numpy  # noqa: F401
import pytest

from evals.cli import main
from evals.pipeline.history import compare_stored
from evals.plan.runs import derive_seed
from evals.store import open_store
from tests.testing.project import TESTS, suite, write_project

pytestmark = pytest.mark.slow

pytest_plugins = ["pytester"]


def _store(pytester: pytest.Pytester) -> str:
    return f"sqlite:///{pytester.path / 'results.db'}"


def _evals(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--evals", "--evals-store", _store(pytester), "-p", "no:cacheprovider", *args
    )


def test_without_evals_a_marked_test_runs_once_as_an_ordinary_test(pytester):
    write_project(pytester)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=6)
    assert result.ret == 0
    assert "evals" not in result.stdout.str().split("passed")[-1]
    assert not (pytester.path / "results.db").exists()


def test_a_passing_gate_exits_0_after_every_repeat_of_every_agent(pytester):
    gates = "min_pass_rate: 0.3\n  margin: 0.6\n  max_error_rate: 0.5"
    write_project(pytester, suite_text=suite(gates=gates, rates=(1.0, 1.0)))

    result = _evals(pytester)

    result.assert_outcomes(passed=6 * 3 * 2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*= evals =*", "*min_pass_rate*pass*", "*Gate verdict: PASS*"])


def test_a_failing_gate_exits_1_though_no_ordinary_test_failed(pytester):
    write_project(pytester, suite_text=suite(gates="min_pass_rate: 0.9", rates=(0.0,)))

    result = _evals(pytester)

    result.assert_outcomes(failed=18)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*min_pass_rate*fail*", "*Gate verdict: FAIL*"])


def test_failed_runs_do_not_fail_the_session_when_the_gates_pass(pytester):
    write_project(pytester, suite_text=suite(gates="min_pass_rate: 0.05", rates=(0.6,)))

    result = _evals(pytester)

    outcomes = result.parseoutcomes()
    assert outcomes["failed"] > 0 and outcomes["passed"] > 0
    assert result.ret == 0


def test_an_ordinary_failing_test_still_fails_the_session(pytester):
    write_project(pytester, tests=TESTS + "\ndef test_plain():\n    assert False\n")

    result = _evals(pytester)

    result.assert_outcomes(passed=18, failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*Gate verdict: PASS*"])


def test_without_gates_every_run_must_pass_as_in_evals_run(pytester, monkeypatch):
    monkeypatch.delenv("PROMPTFOO_PASS_RATE_THRESHOLD", raising=False)
    write_project(pytester, suite_text=suite(gates="", rates=(0.6,)))

    failing = _evals(pytester)
    monkeypatch.setenv("PROMPTFOO_PASS_RATE_THRESHOLD", "10")
    tolerated = _evals(pytester)

    assert failing.parseoutcomes()["failed"] > 0
    assert failing.ret == 1
    assert tolerated.ret == 0


def test_an_erroring_test_and_a_failing_agent_are_error_rows_of_their_kind(pytester):
    tests = """
        import pytest

        @pytest.mark.evals(case="raises")
        def test_raises(evals_agent):
            evals_agent("hello")
            raise KeyError("missing")

        @pytest.mark.evals(case="agent-raises")
        def test_agent_raises(evals_agent):
            evals_agent("explode")

        @pytest.mark.evals(case="agent-garbage")
        def test_agent_garbage(evals_agent):
            evals_agent("garbage")

        @pytest.mark.evals(case="agent-hangs")
        def test_agent_hangs(evals_agent):
            evals_agent("hang")

        @pytest.mark.evals(case="passes")
        def test_passes(evals_agent):
            assert "echo" in evals_agent("hello").text
    """
    write_project(pytester, tests=textwrap.dedent(tests))

    result = _evals(pytester, "--evals-timeout", "0.5")

    result.assert_outcomes(passed=3, failed=12)
    # 12 of 15 runs errored: errors count as failed runs, and the error-rate gate fails.
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*error_rate*fail*"])
    store = open_store(_store(pytester))
    try:
        (evaluation,) = store.list_evaluations()
        runs = store.load_runs(evaluation.id)
    finally:
        store.close()
    by_case = {}
    for run in runs:
        by_case.setdefault(run.key.case_id, set()).add((run.status, run.error_kind))
    assert by_case == {
        "raises": {("error", "agent_error")},
        "agent-raises": {("error", "agent_error")},
        "agent-garbage": {("error", "malformed")},
        "agent-hangs": {("error", "timeout")},
        "passes": {("pass", None)},
    }
    raised = next(r for r in runs if r.key.case_id == "raises")
    assert raised.error == "test raised KeyError: 'missing'"
    assert raised.response.output == "echo hello"
    broken = next(r for r in runs if r.key.case_id == "agent-raises")
    assert broken.error == "agent raised RuntimeError: the agent broke"
    hung = next(r for r in runs if r.key.case_id == "agent-hangs")
    assert hung.error == "agent timed out after 0.5 s"


def test_the_store_holds_one_evaluation_with_every_run_its_seed_and_its_answer(pytester):
    write_project(pytester, suite_text=suite(rates=(1.0, 0.5)))

    result = _evals(pytester, "--evals-suite-id", "shop")

    assert result.ret in (0, 1)
    store = open_store(_store(pytester))
    try:
        (evaluation,) = store.list_evaluations()
        stored = store.get_evaluation(evaluation.id)
        runs = store.load_runs(evaluation.id)
        gates = store.gate_results(evaluation.id)
    finally:
        store.close()
    assert stored.suite_id == "shop"
    assert stored.status == "complete"
    assert stored.agents == ["a0", "a1"]
    assert stored.config["runner"] == "pytest"
    assert [c.id for c in stored.suite_outline().cases] == [
        f"test_agent.py::test_echoes[{w}]"
        for w in ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    ]
    assert stored.suite_outline().cases[0].tags == ["smoke"]
    assert stored.suite_outline().cases[0].description == "test_echoes[alpha]"
    assert len(runs) == 6 * 2 * 3
    assert len({r.key.as_tuple() for r in runs}) == len(runs)
    for run in runs:
        assert run.seed == derive_seed("shop", run.key.case_id, run.key.agent, run.key.repeat)
        assert run.response.metadata["draw"] < 1
        assert run.response.cost == pytest.approx(0.002)
        assert [s.name for s in run.response.trajectory] == ["sim", "lookup"]
        expected = (
            "pass" if run.key.agent == "a0" or run.response.metadata["draw"] < 0.5 else "fail"
        )
        assert run.status == expected
    assert {"min_pass_rate", "error_rate", "regression"} <= {g["name"] for g in gates}
    assert stored.verdict in ("pass", "fail", "undetermined")


def test_reports_are_written_by_extension_and_an_unknown_one_is_refused(pytester):
    write_project(pytester)

    written = _evals(pytester, "--evals-output", "out/report.json", "--evals-output", "r.md")
    refused = _evals(pytester, "--evals-output", "report.docx")

    assert written.ret == 0
    report = json.loads((pytester.path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["evals"]["gates"]["verdict"] == "pass"
    assert len(report["results"]["results"]) == 18
    assert "min_pass_rate" in (pytester.path / "r.md").read_text(encoding="utf-8")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*unknown report format*report.docx*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--evals-candidate", "nowhere.agents:missing"], "*cannot import the agent*"),
        (["--evals-agent", "zz"], "*--evals-agent 'zz' is not an agent*"),
        (["--evals-repeat", "0"], "*--evals-repeat must be a positive integer*"),
        (["-x"], "*-x/--maxfail stops at the first failed run*"),
        (["--evals-suite", "missing.yaml"], "*suite file not found*"),
    ],
)
def test_usage_errors_stop_the_session_before_any_test_with_pytests_code(pytester, args, message):
    write_project(pytester)

    result = _evals(pytester, *args)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (pytester.path / "results.db").exists()


def test_a_bad_mark_is_a_collection_error_naming_its_test(pytester):
    tests = """
        import pytest

        @pytest.mark.evals(priority="P9")
        def test_bad(evals_agent):
            pass
    """
    write_project(pytester, tests=textwrap.dedent(tests))

    result = _evals(pytester)

    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*ERROR collecting test_agent.py*", "*test_agent.py::test_bad*priority='P9'*P0, P1*"]
    )


def test_an_unreachable_store_is_a_harness_fault(pytester):
    write_project(pytester)

    result = pytester.runpytest(
        "--evals",
        "--evals-store",
        "sqlite:////proc/no/such/dir/results.db",
        "-p",
        "no:cacheprovider",
    )

    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["*harness fault: storing runs failed*"])


def test_the_fingerprint_follows_the_test_files(pytester):
    write_project(pytester)

    _evals(pytester)
    _evals(pytester)
    (pytester.path / "test_agent.py").write_text(TESTS + "\n# changed\n", encoding="utf-8")
    _evals(pytester)

    store = open_store(_store(pytester))
    try:
        prints = [e.fingerprint for e in store.list_evaluations()]
    finally:
        store.close()
    newest, same, first = prints
    assert same == first
    assert newest != first


def test_the_environment_keeps_its_tags_and_repeats(pytester):
    tests = TESTS + textwrap.dedent("""
        @pytest.mark.evals
        def test_untagged(evals_agent):
            evals_agent("x")
    """)
    gates = "min_pass_rate: 0.3\n  environments:\n    pr: {tags: [smoke], repeat: 2}"
    write_project(pytester, tests=tests, suite_text=suite(gates=gates))

    result = _evals(pytester, "--evals-env", "pr")

    result.assert_outcomes(passed=6 * 2, deselected=2)
    assert result.ret == 0


def test_baseline_and_candidate_from_the_command_line_are_compared(pytester):
    write_project(pytester, suite_text="gates: {margin: 0.05}\nevaluateOptions: {repeat: 3}\n")
    pytester.makepyfile(
        team_agents=textwrap.dedent("""
            LOOKUP = [{"kind": "tool", "name": "lookup"}]

            def good(prompt, options, context):
                return {"output": f"echo {prompt}", "trajectory": LOOKUP}

            def bad(prompt, options, context):
                return {"output": "nothing", "trajectory": LOOKUP}
        """)
    )
    pytester.syspathinsert()

    result = _evals(
        pytester,
        "--evals-baseline",
        "file://team_agents.py:good",
        "--evals-candidate",
        "team_agents:bad",
    )

    result.assert_outcomes(passed=18, failed=18)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*baseline*candidate*", "*regression*fail*"])
    store = open_store(_store(pytester))
    try:
        (evaluation,) = store.list_evaluations()
        assert evaluation.agents == ["baseline", "candidate"]
    finally:
        store.close()


# A team's own agent fixture, and a candidate that cannot even be imported.
OWN_FIXTURE_TESTS = """
import pytest

@pytest.fixture
def agent(evals_run):
    return lambda prompt: {"output": f"echo {prompt}"}

@pytest.mark.evals(repeat=2)
def test_echo(agent, evals_run):
    result = agent("hi")
    evals_run.record(result)
    assert result["output"] == "echo hi"
"""
TEAM_AGENTS = """
def shipped(prompt, options, context):
    return {"output": f"echo {prompt}"}
"""
BROKEN_CANDIDATE = "raise SystemExit('the candidate cannot be imported')\n"


def _team_project(pytester: pytest.Pytester, tests: str) -> None:
    write_project(pytester, tests=textwrap.dedent(tests), suite_text="gates: {margin: 0.05}\n")
    pytester.makepyfile(team_agents=textwrap.dedent(TEAM_AGENTS))
    pytester.makepyfile(team_candidate=BROKEN_CANDIDATE)
    pytester.syspathinsert()


def test_a_test_that_never_calls_the_named_agents_is_a_collection_error(pytester):
    """Before: both columns ran the test's own fixture, the named agents were never
    imported (a candidate raising SystemExit at import passed) and the session exited 0."""
    _team_project(pytester, OWN_FIXTURE_TESTS)
    (pytester.path / "team_agents.py").write_text(
        TEAM_AGENTS + TEAM_AGENTS.replace("shipped", "proposed"), encoding="utf-8"
    )

    result = _evals(
        pytester,
        "--evals-baseline",
        "team_agents:shipped",
        "--evals-candidate",
        "team_agents:proposed",
    )

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*test_agent.py::test_echo runs for the agents baseline and candidate but never calls "
            "them*evals_agent*"
        ]
    )
    assert not (pytester.path / "results.db").exists()


def test_a_fixture_that_uses_evals_agent_runs_each_named_agent(pytester):
    """The supported form: the team's fixture hands the test the run's agent, so each
    column runs its own agent (here the candidate's import fails: an error, not a pass)."""
    tests = (
        OWN_FIXTURE_TESTS.replace(
            'def agent(evals_run):\n    return lambda prompt: {"output": f"echo {prompt}"}',
            "def agent(evals_agent):\n    return evals_agent",
        )
        .replace('result["output"]', "result.output")
        .replace("    evals_run.record(result)\n", "")
    )
    _team_project(pytester, tests)

    result = _evals(
        pytester,
        "--evals-baseline",
        "team_agents:shipped",
        "--evals-candidate",
        "team_candidate:proposed",
    )

    assert result.ret != 0
    assert "the candidate cannot be imported" in result.stdout.str() + result.stderr.str()


def test_two_xdist_workers_give_the_serial_runs_and_one_store_write(pytester):
    write_project(pytester, suite_text=suite(rates=(0.7, 0.4)))

    # (langsmith's plugin, installed with langchain, would cost seconds in each process;
    # both sessions call every agent, none answered from the other's stored runs)
    options = ["--evals", "--evals-store", _store(pytester), "-p", "no:cacheprovider"]
    options.append("--evals-fresh-baseline")
    serial = pytester.runpytest_subprocess(*options, "-p", "no:langsmith_plugin")
    parallel = pytester.runpytest_subprocess(*options, "-p", "no:langsmith_plugin", "-n", "2")

    assert parallel.ret == serial.ret
    parallel.stdout.fnmatch_lines(["*2 workers*", "*= evals =*", "*Gate verdict*"])
    store = open_store(_store(pytester))
    try:
        second, first = store.list_evaluations()
        runs = [
            {r.key.as_tuple(): (r.status, r.seed) for r in store.load_runs(e.id)}
            for e in (first, second)
        ]
        gates = [
            [(g["name"], g["status"]) for g in store.gate_results(e.id)] for e in (first, second)
        ]
    finally:
        store.close()
    assert len(runs[0]) == 36
    assert runs[0] == runs[1]
    assert gates[0] == gates[1]
    assert first.fingerprint == second.fingerprint
    assert second.config["pytest_args"][-2:] == ["-n", "2"]


def test_generated_cases_grow_on_request_and_count_in_the_fingerprint(pytester):
    tests = """
        import pytest
        from hypothesis import strategies as st
        from evals.testing import cases_from

        WORDS = cases_from(st.text("abcdef", min_size=3, max_size=6), n=N, database="words.json")

        @pytest.mark.evals
        @pytest.mark.parametrize("word", WORDS)
        def test_echoes(evals_agent, word):
            assert word in evals_agent(word).text
    """
    write_project(pytester, tests=textwrap.dedent(tests).replace("N", "4"))
    database = pytester.path / "words.json"

    first = _evals(pytester)
    (pytester.path / "test_agent.py").write_text(
        textwrap.dedent(tests).replace("N", "6"), encoding="utf-8"
    )
    refused = _evals(pytester)
    grown = _evals(pytester, "--evals-regenerate-cases")
    recorded = json.loads(database.read_text(encoding="utf-8"))
    recorded["examples"][0] = "fedcba"
    database.write_text(json.dumps(recorded), encoding="utf-8")
    edited = _evals(pytester)

    first.assert_outcomes(passed=4 * 3)
    assert refused.ret == pytest.ExitCode.INTERRUPTED
    refused.stdout.fnmatch_lines(["*words.json*asks for 6 cases and the database records 4*"])
    grown.assert_outcomes(passed=6 * 3)
    edited.assert_outcomes(passed=6 * 3)
    assert len(recorded["examples"]) == 6
    store = open_store(_store(pytester))
    try:
        after_edit, after_growth, before = (e.fingerprint for e in store.list_evaluations())
    finally:
        store.close()
    assert len({before, after_growth, after_edit}) == 3


def test_evals_history_and_compare_read_a_pytest_evaluation(pytester, capsys):
    write_project(pytester, suite_text=suite(gates="margin: 0.05", rates=(1.0, 0.2)))
    result = _evals(pytester, "--evals-output", "session.json")
    store = open_store(_store(pytester))
    try:
        (evaluation,) = store.list_evaluations()
    finally:
        store.close()
    capsys.readouterr()
    agents = ["--baseline-agent", "a0", "--candidate-agent", "a1"]

    history = main(["history", "--store", _store(pytester)])
    listed = capsys.readouterr().out
    compared = main(["compare", evaluation.id, evaluation.id, *agents, "--store", _store(pytester)])
    again = compare_stored(
        _store(pytester),
        baseline_id=evaluation.id,
        candidate_id=evaluation.id,
        baseline_agent="a0",
        candidate_agent="a1",
    )

    assert result.ret == compared == 1
    assert history == 0 and evaluation.id in listed
    session = json.loads((pytester.path / "session.json").read_text(encoding="utf-8"))["evals"]
    assert [(g.name, g.status) for g in again.gates.gates] == [
        (g["name"], g["status"]) for g in session["gates"]["gates"]
    ]
    assert [(c.case_id, c.passes) for c in again.summary.case_stats] == [
        (c["case_id"], c["passes"]) for c in session["summary"]["case_stats"]
    ]


def test_a_skipped_test_is_no_run_and_a_failing_fixture_is_an_infra_error(pytester):
    tests = """
        import pytest

        @pytest.fixture
        def broken():
            raise OSError("no database")

        @pytest.mark.evals(case="skips")
        def test_skips(evals_run):
            if evals_run.repeat == 1:
                pytest.skip("not this repeat")

        @pytest.mark.evals(case="fixture")
        def test_fixture(broken):
            pass
    """
    write_project(pytester, tests=textwrap.dedent(tests))

    result = _evals(pytester)

    result.assert_outcomes(passed=2, skipped=1, errors=3)
    store = open_store(_store(pytester))
    try:
        (evaluation,) = store.list_evaluations()
        runs = store.load_runs(evaluation.id)
    finally:
        store.close()
    assert sorted((r.key.case_id, r.key.repeat, r.status) for r in runs) == [
        ("fixture", 0, "error"),
        ("fixture", 1, "error"),
        ("fixture", 2, "error"),
        ("skips", 0, "pass"),
        ("skips", 2, "pass"),
    ]
    failed = next(r for r in runs if r.key.case_id == "fixture")
    assert (failed.error_kind, failed.error) == ("infra", "setup failed: OSError: no database")

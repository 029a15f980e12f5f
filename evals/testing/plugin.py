"""The pytest plugin of evals, loaded in every pytest session of a project that installs
evals (entry point `pytest11`, name `evals`; `-p no:evals` turns it off).

Without `--evals` it only registers the `evals` marker, its options and its fixtures: a
marked test runs once, as an ordinary test, and nothing else changes. With `--evals`
every marked test runs k times per agent with the harness's seeds, and the session ends
with the harness's verdict (evals.testing.session). Importing this module imports
nothing but pytest, so the plugin costs other sessions nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from evals.reports.formats import output_help

if TYPE_CHECKING:
    from evals.testing.agents import AgentCaller
    from evals.testing.runs import EvalsRun
    from evals.testing.session import EvalsSession

STATE = pytest.StashKey["EvalsSession"]()
MARKER_HELP = (
    "evals(repeat=K, case=ID, description=TEXT, priority=P0..P3, tags=[...], "
    "why_it_exists=TEXT, metadata={...}): a case of the agent evaluation; with --evals it "
    "runs K times per agent and the harness's gates decide"
)
INI = {
    "evals_suite": "suite file (YAML) with the evaluation's id, providers, gates and repeats",
    "evals_suite_id": "id of the evaluation's suite (default: the suite file's, else the rootdir)",
    "evals_baseline": "baseline agent: provider id, package.module:function or provider label",
    "evals_candidate": "candidate agent: provider id, package.module:function or provider label",
    "evals_store": "results store URL (default: $EVALS_STORE_URL or sqlite:///.evals/results.db)",
}
# Options that would leave some runs out of the evaluation.
_PARTIAL_OPTIONS = {
    "maxfail": "-x/--maxfail stops at the first failed run",
    "lf": "--lf runs only the runs that failed last time",
    "failedfirst": "--ff reorders the runs by last failure",
    "stepwise": "--sw stops at the first failed run",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    """The --evals options and the evals_* ini keys."""
    group = parser.getgroup("evals", "agent evaluations with evals")
    group.addoption(
        "--evals",
        action="store_true",
        default=False,
        help="run every test marked evals K times per agent, with the harness's seeds, "
        "and exit by the harness's gates",
    )
    group.addoption("--evals-suite", metavar="PATH", help=INI["evals_suite"])
    group.addoption("--evals-suite-id", metavar="ID", help=INI["evals_suite_id"])
    group.addoption("--evals-baseline", metavar="AGENT", help=INI["evals_baseline"])
    group.addoption("--evals-candidate", metavar="AGENT", help=INI["evals_candidate"])
    group.addoption(
        "--evals-agent", action="append", metavar="LABEL", help="run only this agent (repeatable)"
    )
    group.addoption(
        "--evals-repeat", type=int, metavar="K", help="runs per test and agent, for every test"
    )
    group.addoption(
        "--evals-env",
        choices=["pr", "nightly", "release"],
        help="gate environment: its thresholds, tags and repeats",
    )
    group.addoption(
        "--evals-seed",
        type=int,
        default=0,
        metavar="N",
        help="mixed into every run's seed (as evals run --seed)",
    )
    group.addoption(
        "--evals-timeout", type=float, metavar="SECONDS", help="timeout of each agent call"
    )
    group.addoption(
        "--evals-fresh-baseline",
        action="store_true",
        default=False,
        help="run the baseline agent's tests fresh, never answered from its stored runs",
    )
    group.addoption("--evals-store", metavar="URL", help=INI["evals_store"])
    group.addoption(
        "--evals-no-store", action="store_true", default=False, help="do not write the store"
    )
    group.addoption(
        "--evals-output",
        action="append",
        metavar="FILE",
        help=output_help(),
    )
    group.addoption(
        "--evals-regenerate-cases",
        action="store_true",
        default=False,
        help="grow the recorded cases of evals.testing.cases_from up to their n",
    )
    for name, text in INI.items():
        parser.addini(name, text)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker; with --evals, check the settings and start evaluating."""
    config.addinivalue_line("markers", MARKER_HELP)
    from evals.testing import generated

    generated.configure(bool(config.getoption("evals_regenerate_cases")))
    if not config.getoption("evals"):
        return
    for name, why in _PARTIAL_OPTIONS.items():
        if config.getoption(name, default=None):
            raise pytest.UsageError(f"--evals runs every run of every case: {why}")
    repeat = config.getoption("evals_repeat")
    if repeat is not None and repeat < 1:
        raise pytest.UsageError("--evals-repeat must be a positive integer")
    from evals.model.errors import SuiteError
    from evals.testing.session import EvaluationHooks

    session = _session(config)
    try:
        session.settings  # noqa: B018 - read now: bad settings stop the session before any test
    except SuiteError as exc:
        raise pytest.UsageError(f"evals: {exc.render()}") from None
    config.pluginmanager.register(EvaluationHooks(session), "evals-evaluation")


def _session(config: pytest.Config) -> EvalsSession:
    session = config.stash.get(STATE, None)
    if session is None:
        from evals.testing.session import EvalsSession

        session = config.stash[STATE] = EvalsSession(config)
        config.add_cleanup(session.close)
    return session


@pytest.fixture
def _evals_slot(request: pytest.FixtureRequest) -> Any:
    """The (agent, repeat) of a run of a marked test (set by --evals)."""
    return request.param


@pytest.fixture
def evals_run(request: pytest.FixtureRequest) -> EvalsRun:
    """The run a marked test is serving: case, agent, repeat and seed; `record(answer)`
    keeps the agent's answer (trajectory, usage, cost) with the run."""
    if request.node.get_closest_marker("evals") is None:
        pytest.fail("evals_run serves tests marked @pytest.mark.evals", pytrace=False)
    from evals.model.errors import SuiteError
    from evals.testing.marks import MarkError

    try:
        return _session(request.config).run_of(request.node)
    except (SuiteError, MarkError) as exc:
        pytest.fail(f"evals: {exc}", pytrace=False)


@pytest.fixture
def evals_agent_label(evals_run: EvalsRun) -> str:
    """The label of the run's agent (`baseline`, `candidate`, ...), for a fixture of the
    team's own that builds the agent of each label itself rather than calling it through
    `evals_agent`."""
    return evals_run.agent


@pytest.fixture
def evals_agent(request: pytest.FixtureRequest, evals_run: EvalsRun) -> AgentCaller:
    """The run's agent (baseline, candidate, ...): `evals_agent(prompt)` calls it with the
    run's seed, as `evals run` calls it, and records the answer on the run."""
    from evals.testing.agents import AgentCaller

    session = _session(request.config)
    if not session.settings.configured_agents:
        pytest.fail(
            "evals_agent: no agent is configured; set evals_suite (a suite file with "
            "providers) or --evals-candidate/--evals-baseline",
            pytrace=False,
        )
    return AgentCaller(session.pool, evals_run)

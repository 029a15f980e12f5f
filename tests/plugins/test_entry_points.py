"""Entry points found the way `importlib.metadata` finds an installed package's: a
distribution's `.dist-info` folder on `sys.path` declares a gate and an agent adapter, and
the harness parses, decides, plans and builds them as its own; broken or clashing plugins
name the distribution to fix."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from evals.agents.registry import build_agent, check_grader, is_provider_id
from evals.common import plugins
from evals.gates.catalog import planned_gate_count
from evals.gates.feasibility import undecidable
from evals.graders.registry import get_grader, known_types
from evals.model.errors import SuiteError
from evals.model.suite import ProviderSpec
from evals.pipeline.evaluation import analyse
from evals.reports.writers import find_format, is_report_path, renderer_for
from evals.suite.gates import parse_gates
from validation.beta_binomial import outcome_records, simulated_suite, tagged_cases

CASES = tagged_cases(8, tags=2)

MODULE = """
from evals import AgentResponse, Gate, GateResult, Grade, SuiteError, register, when_set

@register("acme:shouts", layer="final")
def shouts(ctx):
    loud = str(ctx.output).isupper()
    return Grade(loud != ctx.inverse, 1.0 if loud else 0.0, "loud" if loud else "quiet")

def not_registered(ctx):
    return Grade(True, 1.0, "never registered")

def render(result):
    return "acme report"

def render_badly(result):
    return 1 / 0

def _decide_badly(evidence, levels):
    raise KeyError("max_short_rat")

def _parse(key, value):
    if not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"must be a rate between 0 and 1, not {value!r}")
    return float(value)

def _decide(evidence, levels):
    limit = evidence.config.value("max_short_rate")
    rate = evidence.subject.pass_rate
    status = "pass" if rate is not None and 1 - rate <= limit else "fail"
    reason = "short answers"
    return [GateResult("max_short_rate", status, limit, rate, None, reason, share=levels.share)]

def _reach(design):
    from evals.gates.registry import Reach
    return [Reach("max_short_rate", design.repeats >= 4, True)]

SHORT = Gate(
    name="max_short_rate",
    keys=("max_short_rate",),
    statistical=True,
    family=when_set("max_short_rate", "subject"),
    decide=_decide,
    parse=_parse,
    reach=_reach,
)

BROKEN = Gate(
    name="broken_gate",
    keys=("broken_gate",),
    statistical=False,
    family=when_set("broken_gate", "subject"),
    decide=_decide_badly,
)

class Echo:
    @staticmethod
    def check(spec, root):
        if "prefix" in spec.config and not isinstance(spec.config["prefix"], str):
            raise SuiteError("prefix must be text", line=spec.line, fix="quote it")
        spec.config["retries"] + 1

    def __init__(self, spec, root):
        if spec.config.get("prefix") == "crash":
            raise RuntimeError("cannot start")
        self.label = spec.label
        self.prefix = spec.config.get("prefix", "")

    async def call(self, prompt, context):
        return AgentResponse(output=self.prefix + prompt)

    async def aclose(self):
        pass

NOT_A_GATE = "a string"
"""


def _distribution(root: Path, name: str, entry_points: str, module: str = "") -> None:
    info = root / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    if module:
        (root / f"{name.replace('-', '_')}.py").write_text(module)


def _forget() -> None:
    plugins._group.cache_clear()
    plugins._LOADED.clear()


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Install distributions into a folder on sys.path, as pip would lay them out."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(plugins.DISABLE_VARIABLE, raising=False)
    _forget()

    def install(name: str, entry_points: str, module: str = "") -> None:
        _distribution(tmp_path, name, entry_points, module)
        _forget()

    yield install
    _forget()


ACME = """
    [evals.assertions]
    acme:shouts = acme_fast:shouts
    acme:quiet = acme_fast:not_registered
    [evals.reports]
    .acme.txt = acme_fast:render
    [evals.gates]
    max_short_rate = acme_fast:SHORT
    [evals.agents]
    acmeecho = acme_fast:Echo
"""


def _records(seed: int) -> list:
    rng = np.random.default_rng(seed)
    records = []
    for agent in ("base", "cand"):
        for record in outcome_records(agent, rng.random((len(CASES), 3)) < 0.7):
            record.response.cost = 0.01
            records.append(record)
    return records


def test_a_plugin_gate_is_parsed_decided_and_shares_the_budget_as_planned(installed) -> None:
    installed("acme-fast", ACME, MODULE)
    suite = simulated_suite(CASES)
    suite.gates = parse_gates(
        {"baseline": "base", "candidate": "cand", "max_short_rate": 0.9}, ["base", "cand"]
    )
    assert suite.gates.value("max_short_rate") == 0.9

    _, report = analyse(suite, _records(3), suite.gates, None)

    rows = {row.name: row for row in report.gates}
    assert rows["max_short_rate"].threshold == 0.9
    spending = [row for row in report.gates if row.share is not None]
    assert rows["max_short_rate"] in spending
    assert len({round(row.share, 15) for row in spending}) == 1, "equal weights, equal shares"
    assert planned_gate_count(suite, None) == len(spending)
    suite.gates = parse_gates({"baseline": "base", "candidate": "cand"}, ["base", "cand"])
    assert planned_gate_count(suite, None) == len(spending) - 1


def test_a_plugin_gate_key_is_read_by_the_gate_and_applies_per_environment(installed) -> None:
    installed("acme-fast", ACME, MODULE)
    with pytest.raises(SuiteError, match="must be a rate between 0 and 1, not 3"):
        parse_gates({"max_short_rate": 3}, ["a"])
    config = parse_gates(
        {"max_short_rate": 0.5, "environments": {"nightly": {"max_short_rate": 0.2}}}, ["a"]
    )
    assert config.for_environment("nightly").value("max_short_rate") == 0.2
    assert config.for_environment("pr").value("max_short_rate") == 0.5
    tagged = parse_gates(
        {"max_short_rate": 0.5, "per_tag": {"news": {"max_short_rate": 0.1}}}, ["a"]
    )
    assert tagged.for_tag("news").value("max_short_rate") == 0.1
    assert tagged.for_tag("sport").value("max_short_rate") == 0.5
    with pytest.raises(SuiteError, match="must be a rate between 0 and 1"):
        parse_gates({"per_tag": {"news": {"max_short_rate": 2}}}, ["a"])
    with pytest.raises(SuiteError, match="did you mean 'max_short_rate'"):
        parse_gates({"max_short_rat": 0.5}, ["a"])


def test_a_provider_scheme_builds_the_plugin_s_agent(installed, tmp_path: Path) -> None:
    installed("acme-fast", ACME, MODULE)
    spec = ProviderSpec("acmeecho:fast", "fast", config={"prefix": "> "})
    assert is_provider_id("acmeecho:fast") and is_provider_id("acmeecho")
    agent = build_agent(spec, tmp_path)
    response = asyncio.run(agent.call("hello", None))  # type: ignore[arg-type]
    assert response.output == "> hello"
    check_grader("acmeecho:judge", tmp_path)


def test_without_plugins_their_names_are_unknown(installed, monkeypatch) -> None:
    installed("acme-fast", ACME, MODULE)
    monkeypatch.setenv(plugins.DISABLE_VARIABLE, "1")
    assert not is_provider_id("acmeecho:fast")
    with pytest.raises(SuiteError, match="unknown key 'max_short_rate' in gates"):
        parse_gates({"max_short_rate": 0.5}, ["a"])


def test_a_plugin_of_the_wrong_kind_names_its_distribution(installed) -> None:
    installed("acme-fast", "[evals.gates]\nmax_short_rate = acme_fast:NOT_A_GATE\n", MODULE)
    with pytest.raises(plugins.PluginError, match=r"acme-fast 1\.0.*does not hold a Gate"):
        parse_gates({"max_short_rate": 0.5}, ["a"])


def test_a_plugin_that_fails_to_import_names_its_distribution(installed, tmp_path) -> None:
    installed("acme-broken", "[evals.agents]\nbroken = acme_broken:Agent\n", "raise OSError(7)")
    with pytest.raises(plugins.PluginError) as caught:
        build_agent(ProviderSpec("broken:x", "x"), tmp_path)
    assert "acme-broken 1.0 failed to load: OSError: 7" in caught.value.message
    assert "EVALS_DISABLE_PLUGINS=1" in str(caught.value.fix)


def test_two_distributions_claiming_one_name_are_refused(installed, tmp_path) -> None:
    installed("acme-one", "[evals.agents]\nacmeecho = acme_one:Echo\n", MODULE)
    installed("acme-two", "[evals.agents]\nacmeecho = acme_two:Echo\n", MODULE)
    with pytest.raises(plugins.PluginError, match="2 installed plugins declare 'acmeecho'"):
        build_agent(ProviderSpec("acmeecho:x", "x"), tmp_path)


def test_an_unknown_provider_id_names_every_kind_and_the_plugins_schemes(
    installed, tmp_path
) -> None:
    installed("acme-fast", ACME, MODULE)
    with pytest.raises(SuiteError) as caught:
        check_grader("zzzz-qqqq", tmp_path)
    fix = str(caught.value.fix)
    assert fix.endswith(", acmeecho: (installed plugin)")
    for kind in ("echo", "file://agent.py", "exec:", "https:", "openai:", "pydantic-ai:"):
        assert f" {kind}," in fix
    with pytest.raises(SuiteError, match="did you mean 'acmeecho:'"):
        check_grader("acmeeco:x", tmp_path)


def test_a_plugin_assertion_type_is_known_and_graded_by_its_grader(installed) -> None:
    installed("acme-fast", ACME, MODULE)
    assert {"acme:shouts", "acme:quiet"} <= set(known_types())
    grader = get_grader("acme:shouts")
    assert grader is not None and grader.__module__ == "acme_fast"
    with pytest.raises(plugins.PluginError, match=r"does not hold a grader registered as 'acme:q"):
        get_grader("acme:quiet")


def test_a_plugin_report_suffix_chooses_its_renderer_the_longest_suffix_winning(
    installed, tmp_path
) -> None:
    installed("acme-fast", ACME, MODULE)
    assert is_report_path("out/summary.acme.txt")
    assert not is_report_path("notes.txt")
    fmt = find_format("summary.ACME.txt")
    assert fmt is not None and fmt.name == ".acme.txt (acme-fast 1.0)"
    assert renderer_for(tmp_path / "summary.acme.txt")(None) == "acme report"  # type: ignore[arg-type]
    with pytest.raises(SuiteError, match="unknown report format") as caught:
        renderer_for(tmp_path / "x.txt")
    assert ".acme.txt" in str(caught.value.fix)


def test_a_plugin_may_not_take_a_built_in_report_suffix(installed) -> None:
    installed("acme-fast", "[evals.reports]\n.json = acme_fast:render\n", MODULE)
    with pytest.raises(plugins.PluginError, match="names a report suffix that is built in"):
        find_format("out.json")


def test_evals_plugins_lists_each_group_and_exits_2_on_a_broken_plugin(installed, capsys) -> None:
    from evals.cli import main

    installed("acme-fast", ACME, MODULE)
    installed("acme-broken", "[evals.agents]\nbroken = acme_broken:Agent\n", "raise OSError(7)")

    assert main(["plugins"]) == 2

    out = capsys.readouterr().out
    assert "  acme:shouts = acme_fast:shouts (acme-fast 1.0)\n" in out
    assert "  max_short_rate = acme_fast:SHORT (acme-fast 1.0)\n" in out
    assert "  .acme.txt = acme_fast:render (acme-fast 1.0)\n" in out
    assert "  broken: plugin 'broken' = 'acme_broken:Agent' (group evals.agents) of " in out
    assert "failed to load: OSError: 7" in out


def test_evals_plugins_says_when_none_are_installed_or_they_are_disabled(
    installed, monkeypatch, capsys
) -> None:
    from evals.cli import main

    assert main(["plugins"]) == 0
    assert capsys.readouterr().out.count("  none installed\n") == len(plugins.GROUPS)
    monkeypatch.setenv(plugins.DISABLE_VARIABLE, "1")
    assert main(["plugins"]) == 0
    assert capsys.readouterr().out.count("  plugins are disabled\n") == len(plugins.GROUPS)


def test_a_plugin_gate_that_cannot_fail_at_the_suite_s_repeats_is_named_before_any_run(
    installed,
) -> None:
    installed("acme-fast", ACME, MODULE)
    suite = simulated_suite(CASES)
    suite.gates = parse_gates({"candidate": "cand", "max_short_rate": 0.5}, ["base", "cand"])
    suite.evaluate_options.repeat = 2

    found = [u for u in undecidable(suite, None) if u.row == "max_short_rate"]

    assert [(u.side, u.repeats, u.needed) for u in found] == [("fail", 2, 4)]


def test_a_plugin_gate_that_raises_is_an_error_naming_the_plugin(installed) -> None:
    installed("acme-fast", "[evals.gates]\nbroken_gate = acme_fast:BROKEN\n", MODULE)
    suite = simulated_suite(CASES)
    suite.gates = parse_gates(
        {"baseline": "base", "candidate": "cand", "broken_gate": 1}, ["base", "cand"]
    )

    with pytest.raises(plugins.PluginError) as caught:
        analyse(suite, _records(4), suite.gates, None)

    assert caught.value.message == (
        "plugin 'broken_gate' = 'acme_fast:BROKEN' (group evals.gates) of acme-fast 1.0 "
        "failed deciding its gate: KeyError: 'max_short_rat'"
    )
    assert "report it to the authors of acme-fast" in str(caught.value.fix)


def test_a_plugin_renderer_that_raises_is_an_error_naming_the_plugin(installed, tmp_path) -> None:
    installed("acme-fast", "[evals.reports]\n.bad.txt = acme_fast:render_badly\n", MODULE)
    render = renderer_for(tmp_path / "out.bad.txt")
    with pytest.raises(plugins.PluginError, match="failed rendering its report: ZeroDivision"):
        render(None)  # type: ignore[arg-type]


class _Loader:
    def __init__(self, root: Path) -> None:
        self.root = root

    def file_ref(self, ref: str, node: object, what: str) -> Path:
        return self.root / ref


def test_a_plugin_agent_s_own_refusal_goes_through_and_its_bugs_name_the_plugin(
    installed, tmp_path
) -> None:
    from evals.agents.registry import check_provider

    installed("acme-fast", ACME, MODULE)
    loader = _Loader(tmp_path)
    with pytest.raises(SuiteError) as refused:
        check_provider(ProviderSpec("acmeecho", "x", config={"prefix": 3}), loader)
    assert type(refused.value) is SuiteError and refused.value.message == "prefix must be text"
    with pytest.raises(plugins.PluginError, match="failed checking its provider's config: KeyE"):
        check_provider(ProviderSpec("acmeecho", "x"), loader)
    check_provider(ProviderSpec("acmeecho", "x", config={"retries": 2}), loader)
    with pytest.raises(plugins.PluginError, match="failed building its agent: RuntimeError"):
        build_agent(ProviderSpec("acmeecho", "x", config={"prefix": "crash"}), tmp_path)


def test_a_plugin_gate_s_thresholds_are_stored_and_read_back(installed) -> None:
    from evals.model.gates import GateConfig

    installed("acme-fast", ACME, MODULE)
    config = parse_gates(
        {"max_short_rate": 0.5, "environments": {"nightly": {"max_short_rate": 0.2}}}, ["a"]
    )

    again = GateConfig.from_dict(json.loads(json.dumps(config.to_dict())))

    assert again == config
    assert again.for_environment("nightly").value("max_short_rate") == 0.2

"""What a `pytest --evals` session evaluates: the suite's id, agents, gates and repeats.

Read from the command line first, then the ini file (`[tool.pytest.ini_options]` or
pytest.ini), then the suite file that `evals_suite` names (a promptfoo-style YAML file:
its id, providers, gates, evaluateOptions and the blocks graders read; its `tests:` are
not read, the marked tests are the cases). Anything unusable is a SuiteError naming the
option or the file and the fix, raised before any test runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.model.errors import SuiteError
from evals.model.gates import GateConfig
from evals.model.plan import SIMULATED_USER
from evals.model.suite import ProviderSpec, Suite
from evals.testing.agents import check_agent, resolve_agent

if TYPE_CHECKING:
    import pytest

IMPLICIT_AGENT = "agent"
ROLES = ("baseline", "candidate")


@dataclass(slots=True)
class Settings:
    """The session's evaluation settings (see the module docstring for their sources).

    `agents` are the agents every marked test runs against; when none is configured the
    tests bring their own agent and run as the one agent `IMPLICIT_AGENT`. `root` is
    where the suite file's relative references resolve. `suite_config` is the suite
    file's content, which the graders read and whose `gates:` key decides whether the
    verdict comes from gates or from promptfoo's pass-rate rule, as in `evals run`.
    `named_agents` is True when --evals-baseline/--evals-candidate (or their ini keys)
    name an agent.
    """

    suite_id: str
    path: Path
    root: Path
    agents: list[ProviderSpec]
    gates: GateConfig
    environment: str | None = None
    repeat: int | None = None
    default_repeat: int = 1
    tags: list[str] | None = None
    salt: int = 0
    timeout_s: float | None = None
    store_url: str | None = None
    use_store: bool = True
    outputs: list[Path] = field(default_factory=list)
    suite_config: dict[str, Any] = field(default_factory=dict)
    case_options: dict[str, Any] = field(default_factory=dict)
    conversation: dict[str, Any] | None = None
    files: list[Path] = field(default_factory=list)
    description: str = ""
    version: str | None = None
    configured_agents: bool = True
    named_agents: bool = False

    @property
    def agent_labels(self) -> list[str]:
        """The labels of the agents, in order (baseline first)."""
        return [spec.label for spec in self.agents]

    def default_agent(self) -> str:
        """The agent a marked test uses when it runs once, without `--evals`."""
        labels = self.agent_labels
        return self.gates.candidate if self.gates.candidate in labels else labels[0]


def _option(config: pytest.Config, name: str) -> tuple[str | None, Path]:
    """An option's value from the command line, else the ini file, and the folder a
    relative path in it is relative to (where pytest started, or the ini file's)."""
    value = config.getoption(name)
    if value:
        return str(value), Path(config.invocation_params.dir)
    ini_dir = config.inipath.parent if config.inipath else config.rootpath
    value = config.getini(name)
    return (str(value) if value else None), Path(ini_dir)


def _agents(
    config: pytest.Config, suite: Suite | None, gates: GateConfig
) -> tuple[list[ProviderSpec], GateConfig]:
    providers = suite.providers if suite is not None else []
    chosen: dict[str, ProviderSpec] = {}
    for role in ROLES:
        value, base = _option(config, f"evals_{role}")
        if value is not None:
            spec = resolve_agent(value, role, providers, base)
            if spec not in providers:
                check_agent(spec, base)
            chosen[role] = spec
    if not chosen:
        agents = list(providers)
    else:
        for role in ROLES:
            named = getattr(gates, role)
            if role not in chosen and named is not None:
                chosen[role] = next(p for p in providers if p.label == named)
        agents = [chosen[role] for role in ROLES if role in chosen]
        labels = [spec.label for spec in agents]
        if len(set(labels)) < len(labels):
            raise SuiteError(
                f"--evals-baseline and --evals-candidate both name the agent {labels[0]!r}",
                fix="name two different agents",
            )
        gates = replace(
            gates,
            baseline=chosen["baseline"].label if "baseline" in chosen else gates.baseline,
            candidate=chosen["candidate"].label if "candidate" in chosen else gates.candidate,
        )
    only = config.getoption("evals_agent") or []
    unknown = sorted(set(only) - {spec.label for spec in agents})
    if unknown:
        known = ", ".join(spec.label for spec in agents) or "none"
        raise SuiteError(
            f"--evals-agent {unknown[0]!r} is not an agent of this session",
            fix=f"use one of: {known}",
        )
    return [spec for spec in agents if not only or spec.label in only], gates


def _conversation(suite: Suite | None) -> dict[str, Any] | None:
    """The suite file's simulated user (`defaultTest.provider` of id
    `promptfoo:simulated-user`): its config, checked here so a bad one stops the session
    before any test; None without one."""
    provider = suite.default_test.get("provider") if suite is not None else None
    if not isinstance(provider, dict) or provider.get("id") != SIMULATED_USER:
        return None
    config = provider.get("config") or {}
    if not isinstance(config, dict):
        raise SuiteError(
            f"defaultTest.provider {SIMULATED_USER}: config must be a mapping",
            fix="write config: {maxTurns: 6, provider: ...}",
        )
    from evals.testing.agents import simulated_user

    simulated_user(config, SIMULATED_USER)
    return dict(config)


def load_settings(config: pytest.Config) -> Settings:
    """The session's settings from pytest's options and ini values and the suite file."""
    suite_ref, suite_base = _option(config, "evals_suite")
    roles = tuple(role for role in ROLES if _option(config, f"evals_{role}")[0])
    suite = None
    if suite_ref is not None:
        from evals.suite import load_suite_settings

        suite = load_suite_settings(suite_base / suite_ref, roles or (IMPLICIT_AGENT,))
    gates = suite.gates if suite is not None else GateConfig()
    agents, gates = _agents(config, suite, gates)
    configured = bool(agents)
    if not agents:
        agents = [ProviderSpec(id="pytest", label=IMPLICIT_AGENT)]
    environment = config.getoption("evals_env")
    scoped = gates.for_environment(environment)
    suite_id, _ = _option(config, "evals_suite_id")
    rootpath = Path(config.rootpath)
    timeout = config.getoption("evals_timeout")
    if timeout is None and suite is not None and suite.evaluate_options.timeout_ms:
        timeout = suite.evaluate_options.timeout_ms / 1000.0
    store_url, _ = _option(config, "evals_store")
    invocation = Path(config.invocation_params.dir)
    outputs = [invocation / out for out in config.getoption("evals_output") or []]
    _check_outputs(outputs)
    return Settings(
        suite_id=suite_id or (suite.suite_id if suite is not None else rootpath.name),
        path=suite.path if suite is not None else Path(config.inipath or rootpath / "conftest.py"),
        root=suite.root if suite is not None else rootpath,
        agents=agents,
        gates=gates,
        environment=environment,
        repeat=config.getoption("evals_repeat"),
        default_repeat=scoped.repeat or (suite.evaluate_options.repeat if suite else 1),
        tags=scoped.tags,
        salt=config.getoption("evals_seed") or 0,
        timeout_s=timeout,
        store_url=store_url,
        use_store=not config.getoption("evals_no_store"),
        outputs=outputs,
        suite_config=dict(suite.raw) if suite is not None else {},
        case_options=dict((suite.default_test if suite is not None else {}).get("options") or {}),
        conversation=_conversation(suite),
        files=list(suite.files) if suite is not None else [],
        description=suite.description if suite is not None else "",
        version=suite.version if suite is not None else None,
        configured_agents=configured,
        named_agents=bool(roles),
    )


def _check_outputs(outputs: list[Path]) -> None:
    """Reject an unknown report extension before any test runs, as `evals run -o` does."""
    from evals.reports.writers import renderer_for

    for out in outputs:
        renderer_for(out)

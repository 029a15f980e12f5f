"""The in-memory shape of a loaded suite, and the outline of it stored with each evaluation."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.model.defaults import DEFAULT_HTML_RUN_DETAILS, DEFAULT_RUNS_IN_MEMORY
from evals.model.gates import GateConfig


@dataclass(slots=True)
class Assertion:
    """One `assert:` entry: a grader type, its value and promptfoo's scoring knobs."""

    type: str
    value: Any = None
    threshold: float | None = None
    weight: float = 1.0
    metric: str | None = None
    provider: Any = None
    transform: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    line: int | None = None
    turn: int | str | None = None
    """In a conversation, the agent's turn the assertion grades: a number (the answer to
    that user message; negative counts from the end), `last`, or `each` (every answer)."""
    # Read for every run: worked out once. `negated`: a `not-` assertion, whose verdict is
    # inverted; `base_type`: the grader type without the prefix.
    negated: bool = field(init=False, repr=False, compare=False)
    base_type: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.negated = self.type.startswith("not-")
        self.base_type = self.type[4:] if self.negated else self.type


@dataclass(frozen=True, slots=True)
class PromptFunction:
    """Code that makes a prompt for each run, as promptfoo's prompt functions do.

    `kind` is `python` (a function of a Python file, `name`), `python-script` (a Python
    file run whole, printing the prompt), `javascript` (a JavaScript file's export, `name`
    or the module itself) or `exec` (a command, `path` being its command line). `path`
    is absolute for the files.
    """

    kind: str
    path: str
    name: str | None = None


@dataclass(slots=True)
class Prompt:
    """A prompt template; `raw` is text or a chat-message structure.

    `function`, when set, makes the template of each run from its vars (`raw` is then the
    code, for reports); `config` is the prompt's own provider config (promptfoo's
    per-prompt `config`), merged into what the provider is told of the prompt.
    """

    id: str
    label: str
    raw: Any
    path: str | None = None
    function: PromptFunction | None = None
    config: dict[str, Any] | None = None


@dataclass(slots=True)
class ProviderSpec:
    """An agent under test: promptfoo provider id, display label and config.

    `prompts` restricts the provider to the prompts it names (labels, ids, `name*`
    prefixes), as a provider's `prompts:` does in promptfoo; `delay_ms` is waited after
    each of its calls that was not served from the response cache.
    `fingerprint` is the agent fingerprint (id, config, transform and the agent's code,
    see `evals.suite.fingerprint`): it changes when the agent does, never with the suite.
    `fingerprint_gap` says what of the agent that fingerprint cannot see (None: nothing
    of the project's; `evals.suite.fingerprint.fingerprint_gap`).
    """

    id: str
    label: str
    config: dict[str, Any] = field(default_factory=dict)
    transform: str | None = None
    delay_ms: float = 0.0
    line: int | None = None
    prompts: list[str] | None = None
    fingerprint: str = ""
    fingerprint_gap: str | None = None


@dataclass(slots=True)
class Case:
    """One test case (promptfoo `tests:` entry) after `defaultTest` is merged in."""

    index: int
    id: str
    description: str
    vars: dict[str, Any]
    asserts: list[Assertion]
    threshold: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    providers: list[str] | None = None
    prompts: list[str] | None = None
    line: int | None = None
    provider_output: Any = None
    scoring_function: str | None = None
    provider: ProviderSpec | None = None
    fingerprint: str = ""
    test: dict[str, Any] = field(default_factory=dict)
    """The test as promptfoo holds it when grading (defaultTest merged in, this case's vars):
    what script assertions read as `context.test`."""

    @property
    def tags(self) -> list[str]:
        """Tags from `metadata.tags`, used for per-tag statistics and PR subsets."""
        tags = self.metadata.get("tags") or []
        return [str(t) for t in tags] if isinstance(tags, list) else [str(tags)]

    @property
    def priority(self) -> str | None:
        """P0-P3 from `metadata.priority`; P0 regressions block a gate on their own."""
        value = self.metadata.get("priority")
        return str(value) if value is not None else None

    @property
    def why_it_exists(self) -> str | None:
        """The reason this case is in the suite (chapter 10's `why_it_exists`)."""
        value = self.metadata.get("why_it_exists")
        return str(value) if value is not None else None


@dataclass(slots=True)
class EvaluateOptions:
    """`evaluateOptions`: repeats, concurrency and per-run timeout."""

    repeat: int = 1
    max_concurrency: int = 4
    timeout_ms: float | None = None
    delay_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class CallLimit:
    """A cap on the agent calls of the providers a `limits:` key names, over every worker.

    `concurrency`: calls in flight at once; `requests_per_minute`: calls started, evenly
    spaced (60 / rate seconds apart); `tokens_per_minute`: tokens the calls reported,
    after which new calls wait until the minute's allowance refills. None: no cap.
    """

    concurrency: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None


@dataclass(frozen=True, slots=True)
class Environment:
    """The world a suite's agents act on: a seed state (a SQLite database, a `.sql` script
    that builds one, or a JSON or YAML document) that every run gets a fresh copy of."""

    seed: Path
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ReportSettings:
    """`reports:`: how much of an evaluation's runs the reports hold at once.

    `html_run_details`: the most runs the HTML report shows in detail (past it, the runs
    that did not pass, up to this many, and the dashboard has every run).
    `runs_in_memory`: an evaluation of fewer runs whose reports list every run keeps its
    runs in memory for them; a larger one's reports read them back from the store.
    """

    html_run_details: int = DEFAULT_HTML_RUN_DETAILS
    runs_in_memory: int = DEFAULT_RUNS_IN_MEMORY


@dataclass(slots=True)
class Suite:
    """A loaded, validated suite: everything a run needs, plus its identity.

    `fingerprint` (the suite fingerprint) hashes what the suite measures with: cases,
    prompts, assertions, gates and every file they reference, but not the providers, so
    evaluations of different suite contents are never compared silently while a change
    to an agent keeps its evaluations comparable. Each provider carries its own agent
    fingerprint and each case its case fingerprint; `prompts_fingerprint` hashes the
    prompts alone.
    """

    path: Path
    suite_id: str
    description: str
    version: str | None
    prompts: list[Prompt]
    providers: list[ProviderSpec]
    cases: list[Case]
    evaluate_options: EvaluateOptions
    gates: GateConfig
    env: dict[str, str]
    raw: dict[str, Any]
    files: list[Path]
    fingerprint: str
    default_test: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    derived_metrics: list[tuple[str, str]] = field(default_factory=list)
    prompts_fingerprint: str = ""
    limits: dict[str, CallLimit] = field(default_factory=dict)
    pass_env: list[str] = field(default_factory=list)
    secrets: frozenset[str] = field(default_factory=frozenset)
    environment: Environment | None = None
    reports: ReportSettings = field(default_factory=ReportSettings)
    notices: list[str] = field(default_factory=list)
    """Problems promptfoo reports on the rows they affect (a missing assertion file, an
    unknown assertion type, ...): the runs become error rows; said before the run."""
    warnings: list[str] = field(default_factory=list)
    """What the loader says once about the suite before it runs (the promptfoo settings
    it ignores)."""

    @property
    def root(self) -> Path:
        """Directory that relative `file://` references resolve against."""
        return self.path.parent

    @property
    def agent_labels(self) -> list[str]:
        """Labels of the agents under test, in suite order."""
        return [p.label for p in self.providers]

    @property
    def agent_fingerprints(self) -> dict[str, str]:
        """The agent fingerprint of each provider, by label."""
        return {p.label: p.fingerprint for p in self.providers}

    def outline(self) -> SuiteOutline:
        """What statistics and gates read of this suite, to store with an evaluation."""
        return SuiteOutline(
            suite_id=self.suite_id,
            version=self.version,
            fingerprint=self.fingerprint,
            agent_labels=self.agent_labels,
            cases=[_case_outline(case) for case in self.cases],
            gates=self.gates,
            prompts_fingerprint=self.prompts_fingerprint,
        )


_OUTLINED_METADATA = ("tags", "priority", "why_it_exists")


def _case_outline(case: Case) -> Case:
    """The case without its vars and assertions: what statistics and gates read of it."""
    metadata = {key: case.metadata[key] for key in _OUTLINED_METADATA if key in case.metadata}
    return Case(
        case.index,
        case.id,
        case.description,
        {},
        [],
        metadata=metadata,
        fingerprint=case.fingerprint,
    )


@dataclass(slots=True)
class SuiteOutline:
    """What statistics and gates read of a suite, stored with each of its evaluations.

    The suite's identity, its agents in order, each case's id, description, tags,
    priority and reason to exist, and the gate thresholds: enough to analyse stored runs
    again without the suite file (the dashboard reads only the store). `gates` is None
    for evaluations stored before outlines were; their gates are the defaults. Each
    case keeps its case fingerprint, so evaluations of two versions of a suite can be
    compared on the cases they share.
    """

    suite_id: str
    version: str | None
    fingerprint: str
    agent_labels: list[str]
    cases: list[Case]
    gates: GateConfig | None = None
    prompts_fingerprint: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The outline as JSON."""
        return {
            "suite_id": self.suite_id,
            "version": self.version,
            "fingerprint": self.fingerprint,
            "agents": list(self.agent_labels),
            "cases": [
                {
                    "id": case.id,
                    "description": case.description,
                    **case.metadata,
                    "fingerprint": case.fingerprint,
                }
                for case in self.cases
            ],
            "gates": None if self.gates is None else self.gates.to_dict(),
            "prompts_fingerprint": self.prompts_fingerprint,
        }

    def to_suite(self, description: str = "") -> Suite:
        """A suite with the outline's identity, agents, cases and gates, and no file: what
        analysing and reporting stored runs needs when their suite cannot be loaded (the
        cases of a `pytest --evals` evaluation are tests, not a YAML file)."""
        gates = self.gates or GateConfig()
        return Suite(
            path=Path(self.suite_id),
            suite_id=self.suite_id,
            description=description,
            version=self.version,
            prompts=[Prompt("prompt", "prompt", "{{prompt}}")],
            providers=[ProviderSpec(label, label) for label in self.agent_labels],
            cases=list(self.cases),
            evaluate_options=EvaluateOptions(),
            gates=gates,
            env={},
            raw={"gates": gates.to_dict()},
            files=[],
            fingerprint=self.fingerprint,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SuiteOutline:
        """Rebuild an outline from `to_dict` output."""
        cases = [
            Case(
                index,
                str(item["id"]),
                str(item.get("description") or item["id"]),
                {},
                [],
                metadata={k: item[k] for k in _OUTLINED_METADATA if item.get(k) is not None},
                fingerprint=str(item.get("fingerprint") or ""),
            )
            for index, item in enumerate(data.get("cases") or [])
        ]
        gates = data.get("gates")
        return cls(
            suite_id=str(data["suite_id"]),
            version=data.get("version"),
            fingerprint=str(data["fingerprint"]),
            agent_labels=[str(a) for a in data.get("agents") or []],
            cases=cases,
            gates=None if gates is None else GateConfig.from_dict(gates),
            prompts_fingerprint=str(data.get("prompts_fingerprint") or ""),
        )

"""The in-memory shape of a loaded suite."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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
    # Read for every run: worked out once. `negated`: a `not-` assertion, whose verdict is
    # inverted; `base_type`: the grader type without the prefix.
    negated: bool = field(init=False, repr=False, compare=False)
    base_type: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.negated = self.type.startswith("not-")
        self.base_type = self.type[4:] if self.negated else self.type


@dataclass(slots=True)
class Prompt:
    """A prompt template; `raw` is text or a chat-message structure."""

    id: str
    label: str
    raw: Any
    path: str | None = None


@dataclass(slots=True)
class ProviderSpec:
    """An agent under test: promptfoo provider id, display label and config."""

    id: str
    label: str
    config: dict[str, Any] = field(default_factory=dict)
    transform: str | None = None
    delay_ms: float = 0.0
    line: int | None = None


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


@dataclass(slots=True)
class Suite:
    """A loaded, validated suite: everything a run needs, plus its identity.

    `fingerprint` is a content hash over the suite file and every file it references,
    so evaluations of different suite contents are never compared silently.
    """

    path: Path
    suite_id: str
    description: str
    version: str | None
    prompts: list[Prompt]
    providers: list[ProviderSpec]
    cases: list[Case]
    evaluate_options: EvaluateOptions
    gates: Any
    env: dict[str, str]
    raw: dict[str, Any]
    files: list[Path]
    fingerprint: str
    default_test: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    derived_metrics: list[tuple[str, str]] = field(default_factory=list)

    @property
    def root(self) -> Path:
        """Directory that relative `file://` references resolve against."""
        return self.path.parent

    @property
    def agent_labels(self) -> list[str]:
        """Labels of the agents under test, in suite order."""
        return [p.label for p in self.providers]

"""The gate thresholds of a suite (its `gates:` block), per environment.

Each key of the block is a field of `GateConfig` whose metadata holds its `KeyRule` (what
values it takes, an example for the fix), declared once beside the field. Parsed and
validated from YAML by `evals.suite.gates`, which reads the rules; read by statistics and
gates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal, get_args

from evals.model.bounds import CONFIDENCE, COUNT, FRACTION, NON_NEGATIVE, POSITIVE, Bounds
from evals.model.results import ErrorKind

ERROR_KINDS: tuple[str, ...] = get_args(ErrorKind)
UNDETERMINED_ACTIONS = ("fail", "warn", "pass")
# What a comparison's verdict is about: the suite's own cases (inference conditional on the
# cases, the default) or tasks like them (the cases as a sample).
ESTIMANDS = ("cases", "tasks")
LATENCY_SOURCES = ("wall", "agent")
# Keys an environment may not override: they decide how runs are graded, once for all.
SUITE_WIDE_KEYS = ("latency",)


KeyKind = Literal["number", "flag", "choice", "names", "agent", "file", "environments", "per_tag"]


@dataclass(frozen=True, slots=True)
class KeyRule:
    """What one key of the `gates:` block accepts, declared on its `GateConfig` field.

    `kind` says how the value is read: a `number` within `bounds` (an int when the bounds
    take whole numbers only), a `flag` (true or false), a `choice` among `choices`, `names`
    (a name or a list of names, each among `choices` when there are any, `what` saying what
    they name), an `agent` (a provider label), a `file` reference (`what` it names), or the
    nested `environments` / `per_tag` blocks. `example` is the valid value a fix shows;
    `nullable` lets the key be null (a threshold switched off, a cap or repeat left unset).
    """

    kind: KeyKind
    bounds: Bounds | None = None
    example: str = ""
    nullable: bool = False
    choices: tuple[str, ...] = ()
    what: str = ""


def rule(
    kind: KeyKind | Bounds,
    *,
    example: str = "",
    nullable: bool = False,
    choices: tuple[str, ...] = (),
    what: str = "",
) -> Mapping[str, KeyRule]:
    """A `GateConfig` field's metadata holding its key's rule (`Bounds` stand for a number
    within them), e.g. `field(default=0.0, metadata=rule(FRACTION, example="0.05"))`."""
    if isinstance(kind, Bounds):
        return {"rule": KeyRule("number", kind, example, nullable, choices, what)}
    return {"rule": KeyRule(kind, None, example, nullable, choices, what)}


def default_on_undetermined(environment: str | None) -> str:
    """What an undetermined verdict does where the suite does not say: a release fails on
    it (it must show its gates met), a pull request passes (it fails only on a loss shown
    beyond the tolerance, and says the smallest loss it would have caught), a nightly run
    or a plain run warns."""
    return {"release": "fail", "pr": "pass"}.get(environment or "", "warn")


def default_reuse_baseline(environment: str | None) -> bool:
    """Whether stored runs of an unchanged baseline answer for it where the suite does not
    say: not in a nightly (it measures main's agents as they answer today, for the next
    pull requests and the next nights) nor in a release (it shows its gates met on fresh
    runs, with the whole false-failure budget); elsewhere, yes."""
    return environment not in ("nightly", "release")


def key_rules() -> dict[str, KeyRule]:
    """Each key the `gates:` block accepts (a `GateConfig` field with a rule), with its
    rule."""
    return {f.name: f.metadata["rule"] for f in fields(GateConfig) if "rule" in f.metadata}


def about(estimand: str, cases: int) -> str:
    """What a verdict of `estimand` over `cases` cases is about, in a short phrase."""
    if estimand == "tasks":
        return "on tasks like these"
    return f"on these {cases} case{'s' if cases != 1 else ''}"


@dataclass(slots=True)
class GateConfig:
    """Thresholds for one environment (the top level, with pr/nightly/release overrides).

    Rates are fractions in [0, 1]; `margin` is the practical regression margin (smaller
    losses are tolerated); a P0 case fails on any loss shown and passes only when shown to
    lose less than `p0_margin`; `equivalence_margin` how close
    two agents must provably be to be called equivalent; ratios compare candidate to
    baseline (1.2 = at most 20 % more). Errored runs count as failed runs in every pass
    rate except those of the kinds in `exclude_errors`; `max_error_rate` bounds the share
    of runs that errored, whatever their kind. `on_undetermined` says what a verdict the
    data cannot decide does (None: `default_on_undetermined` of the environment).
    `latency` names the latency every grader (but promptfoo's `latency` assertion),
    statistic and gate reads: the harness's wall time, or the agent's own report.
    `reuse_baseline` lets stored runs of an unchanged baseline agent answer for it behind
    the drift guard (`evals.pipeline.reuse`; false: the baseline always runs fresh; None:
    `default_reuse_baseline` of the environment).
    `estimand` says what a comparison is about: `cases`, the suite's own cases (inference
    conditional on the cases, whose only noise is the agents' run-to-run randomness), or
    `tasks`, tasks like these (the cases as a sample of tasks).
    `judge_calibration` names a calibration file of human-labelled outputs on which
    `min_judge_kappa` / `min_judge_accuracy` gate the suite's judge. `environments` holds
    each environment's overrides: only the keys it sets, applied over the top level by
    `for_environment`. `budget_runs` and `budget_cost` cap an adaptive run's agent calls
    and their cost in an environment. `extra` holds the keys that installed plugins'
    gates declare (`value` reads any key). Every other field is a key of the block and
    declares the values it accepts in its metadata (`rule`; `key_rules` lists them).
    """

    baseline: str | None = field(default=None, metadata=rule("agent"))
    candidate: str | None = field(default=None, metadata=rule("agent"))
    confidence: float = field(default=0.95, metadata=rule(CONFIDENCE, example="0.95"))
    min_pass_rate: float | None = field(
        default=None, metadata=rule(FRACTION, example="0.8 (80 %)", nullable=True)
    )
    margin: float = field(default=0.0, metadata=rule(FRACTION, example="0.05"))
    equivalence_margin: float = field(default=0.05, metadata=rule(FRACTION, example="0.05"))
    max_regression: float | None = field(
        default=None, metadata=rule(FRACTION, example="0.05", nullable=True)
    )
    block_p0_regressions: bool = field(default=True, metadata=rule("flag"))
    p0_margin: float = field(default=0.2, metadata=rule(FRACTION, example="0.2"))
    zero_policy_violations: bool = field(default=True, metadata=rule("flag"))
    max_error_rate: float | None = field(
        default=0.05, metadata=rule(FRACTION, example="0.05", nullable=True)
    )
    exclude_errors: list[str] = field(
        default_factory=list, metadata=rule("names", choices=ERROR_KINDS, what="error kind(s)")
    )
    max_flake_rate: float | None = field(
        default=None, metadata=rule(FRACTION, example="0.2", nullable=True)
    )
    max_cost_ratio: float | None = field(
        default=None,
        metadata=rule(
            NON_NEGATIVE, example="1.2 (at most 20 % more than the baseline)", nullable=True
        ),
    )
    max_latency_ratio: float | None = field(
        default=None,
        metadata=rule(
            NON_NEGATIVE, example="1.2 (at most 20 % slower than the baseline)", nullable=True
        ),
    )
    max_cost_per_accepted: float | None = field(
        default=None, metadata=rule(NON_NEGATIVE, example="0.25", nullable=True)
    )
    min_repeats: int = field(default=1, metadata=rule(COUNT, example="3"))
    on_undetermined: str | None = field(
        default=None, metadata=rule("choice", choices=UNDETERMINED_ACTIONS)
    )
    latency: str = field(default="wall", metadata=rule("choice", choices=LATENCY_SOURCES))
    tags: list[str] | None = field(default=None, metadata=rule("names", nullable=True))
    repeat: int | None = field(
        default=None,
        metadata=rule(
            COUNT, example="5, or null for the suite's evaluateOptions.repeat", nullable=True
        ),
    )
    budget_runs: int | None = field(
        default=None, metadata=rule(COUNT, example="400, or null for no cap", nullable=True)
    )
    budget_cost: float | None = field(
        default=None, metadata=rule(POSITIVE, example="5.0, or null for no cap", nullable=True)
    )
    allow_fingerprint_mismatch: bool = field(default=False, metadata=rule("flag"))
    paired: bool = field(default=False, metadata=rule("flag"))
    reuse_baseline: bool | None = field(default=None, metadata=rule("flag"))
    estimand: str = field(default="cases", metadata=rule("choice", choices=ESTIMANDS))
    judge_calibration: str | None = field(
        default=None,
        metadata=rule("file", example="file://calibration.yaml", what="a calibration file"),
    )
    min_judge_kappa: float | None = field(
        default=None, metadata=rule(Bounds(low=-1, high=1), example="0.6", nullable=True)
    )
    min_judge_accuracy: float | None = field(
        default=None, metadata=rule(FRACTION, example="0.9", nullable=True)
    )
    per_tag: dict[str, dict[str, Any]] = field(default_factory=dict, metadata=rule("per_tag"))
    environments: dict[str, dict[str, Any]] = field(
        default_factory=dict, metadata=rule("environments")
    )
    extra: dict[str, Any] = field(default_factory=dict)

    def for_environment(self, name: str | None) -> GateConfig:
        """The effective thresholds of an environment: its overrides over the top level.

        Every key the environment sets applies, whatever its value (`margin: 0` over a
        top-level 0.05 is 0). `on_undetermined` and `reuse_baseline` left unset become
        the environment's defaults. The result has no environments of its own.
        """
        overrides = self.environments.get(name, {}) if name else {}
        merged = self.with_overrides(overrides, environments={})
        if merged.on_undetermined is None:
            merged.on_undetermined = default_on_undetermined(name)
        if merged.reuse_baseline is None:
            merged.reuse_baseline = default_reuse_baseline(name)
        return merged

    def for_tag(self, tag: str) -> GateConfig:
        """The thresholds of one tag: its `per_tag` block over these (keys a tag may not
        set are ignored)."""
        return self.with_overrides(self.per_tag.get(tag) or {})

    def with_overrides(self, overrides: dict[str, Any], **changes: Any) -> GateConfig:
        """These thresholds with `overrides` over them: a field's key replaces the field, a
        plugin gate's key its value in `extra`."""
        known = {f.name for f in fields(self)} - {"extra"}
        plugin_keys = {k: v for k, v in overrides.items() if k not in known and k != "extra"}
        ours = {k: v for k, v in overrides.items() if k in known} | changes
        return replace(self, **ours, extra={**self.extra, **plugin_keys})

    def value(self, key: str) -> Any:
        """The value of a `gates:` key: a field, or a plugin gate's key (None when unset)."""
        if key != "extra" and key in {f.name for f in fields(self)}:
            return getattr(self, key)
        return self.extra.get(key)

    def tolerance(self) -> float:
        """The loss the regression gates tolerate: `max_regression`, else `margin`."""
        return self.max_regression if self.max_regression is not None else self.margin

    def to_dict(self) -> dict[str, Any]:
        """The thresholds as JSON (environments as their overrides), as stored."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GateConfig:
        """Rebuild thresholds from `to_dict` output, ignoring unknown keys.

        Evaluations stored before environments kept only their overrides stored each
        environment as a whole configuration; its overrides are then the keys that differ
        from the defaults.
        """
        known = {f.name for f in fields(cls)} - {"environments"}
        environments = {
            str(name): _overrides(block, known)
            for name, block in (data.get("environments") or {}).items()
        }
        return cls(**{k: v for k, v in data.items() if k in known}, environments=environments)


def _overrides(block: dict[str, Any], known: set[str]) -> dict[str, Any]:
    if "environments" not in block:
        return dict(block)
    defaults = GateConfig()
    return {k: v for k, v in block.items() if k in known and v != getattr(defaults, k)}

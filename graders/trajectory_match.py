"""Compare an agent's tool calls with a reference trajectory.

Match modes (LangChain's trajectory evaluators, chapter 10 of the agents book):

- ``strict``: the same calls in the same order;
- ``unordered``: the same calls, in any order (multisets are equal);
- ``subset``: every actual call is in the reference (nothing outside it was called);
- ``superset``: every reference call was made (extra calls are allowed).

Argument modes per call: ``exact``, ``ignore``, ``subset`` (the actual arguments are a
subset of the reference's) and ``superset`` (the actual arguments include the reference's).
Values compare like the Berkeley Function Calling Leaderboard: an int is accepted where a
float (``number``) is declared but not the reverse, booleans are never numbers, a
reference value may be ``{one_of: [...]}`` (any of these values) and ``optional: true``
lets the call omit the argument.

Repeated calls of the same tool are aligned by an optimal bipartite assignment (maximum
number of matching pairs), never greedily: a greedy pass can spend a permissive reference
call on the wrong actual call and then report a false mismatch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from evals.graders.base import GraderError
from evals.graders.contracts import ToolContract

if TYPE_CHECKING:
    import numpy as np

MatchMode = Literal["strict", "unordered", "subset", "superset"]
ArgsMode = Literal["exact", "ignore", "subset", "superset"]
MATCH_MODES: tuple[MatchMode, ...] = ("strict", "unordered", "subset", "superset")
ARGS_MODES: tuple[ArgsMode, ...] = ("exact", "ignore", "subset", "superset")

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


@lru_cache(maxsize=1024)
def _glob(pattern: str) -> re.Pattern[str]:
    escaped = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(f"^{escaped}$", re.IGNORECASE)


def name_matches(name: str, pattern: str) -> bool:
    """promptfoo's tool matcher: the whole name against a glob (``*``, ``?``), ignoring case."""
    return _glob(pattern).match(name) is not None


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call reduced to what matching looks at."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """One reference call: a tool name (glob), reference arguments and how to compare them."""

    name: str
    args: dict[str, Any] | None = None
    args_mode: ArgsMode = "exact"


def _is_choice(expected: Any) -> bool:
    return (
        isinstance(expected, dict)
        and "one_of" in expected
        and set(expected)
        <= {
            "one_of",
            "optional",
        }
    )


def _is_optional(expected: Any) -> bool:
    return isinstance(expected, dict) and expected.get("optional") is True and _is_choice(expected)


def _type_ok(value: Any, declared: str | list[str] | None) -> bool:
    if declared is None:
        return True
    types = [declared] if isinstance(declared, str) else list(declared)
    return any(_JSON_TYPES.get(t, lambda _v: True)(value) for t in types)


def value_matches(actual: Any, expected: Any, declared: str | list[str] | None = None) -> bool:
    """One argument value against a reference value, with the declared JSON type if known."""
    if not _type_ok(actual, declared):
        return False
    if _is_choice(expected):
        return any(value_matches(actual, option) for option in expected["one_of"])
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, (int, float)):
        return isinstance(actual, (int, float)) and float(actual) == float(expected)
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(value_matches(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and set(actual) == set(expected)
            and all(value_matches(actual[k], v) for k, v in expected.items())
        )
    return type(actual) is type(expected) and actual == expected


def args_match(
    actual: dict[str, Any],
    expected: dict[str, Any] | None,
    mode: ArgsMode,
    contract: ToolContract | None = None,
) -> bool:
    """Whether a call's arguments satisfy the reference arguments under `mode`."""
    if expected is None or mode == "ignore":
        return True

    def same(key: str) -> bool:
        declared = contract.parameter_type(key) if contract else None
        return value_matches(actual[key], expected[key], declared)

    required = {k for k, v in expected.items() if not _is_optional(v)}
    if mode == "subset":
        return all(k in expected and same(k) for k in actual)
    missing_required = required - set(actual)
    present = [k for k in expected if k in actual]
    if mode == "superset":
        return not missing_required and all(same(k) for k in present)
    return not missing_required and set(actual) <= set(expected) and all(same(k) for k in present)


def call_matches(
    actual: Call, expected: ExpectedCall, contracts: dict[str, ToolContract] | None = None
) -> bool:
    """Name (glob) and arguments of one actual call against one reference call."""
    if not name_matches(actual.name, expected.name):
        return False
    contract = (contracts or {}).get(actual.name)
    return args_match(actual.args, expected.args, expected.args_mode, contract)


@dataclass(slots=True)
class Alignment:
    """The outcome of matching: pairs (actual index, reference index) and what is left over."""

    mode: MatchMode
    passed: bool
    score: float
    pairs: list[tuple[int, int]]
    unmatched_actual: list[int]
    unmatched_expected: list[int]


def optimal_pairs(matrix: np.ndarray) -> list[tuple[int, int]]:
    """A maximum set of matching (actual, reference) pairs from a boolean match matrix."""
    if matrix.size == 0:
        return []
    from scipy.optimize import linear_sum_assignment  # heavy; only trajectory matching needs it

    rows, cols = linear_sum_assignment(matrix.astype(float), maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if matrix[r, c]]


def align(
    actual: Sequence[Call],
    expected: Sequence[ExpectedCall],
    mode: MatchMode,
    contracts: dict[str, ToolContract] | None = None,
) -> Alignment:
    """Match actual calls with reference calls under a match mode; score is the matched share."""
    if mode not in MATCH_MODES:
        raise GraderError(f"trajectory mode {mode!r} is not one of {', '.join(MATCH_MODES)}")
    n, m = len(actual), len(expected)
    if mode == "strict":
        pairs = [
            (i, i) for i in range(min(n, m)) if call_matches(actual[i], expected[i], contracts)
        ]
        passed = n == m and len(pairs) == n
        denominator = max(n, m)
    else:
        import numpy as np

        matrix = np.array(
            [[call_matches(a, e, contracts) for e in expected] for a in actual], dtype=bool
        ).reshape(n, m)
        pairs = optimal_pairs(matrix)
        denominator = {"unordered": max(n, m), "subset": n, "superset": m}[mode]
        passed = len(pairs) == denominator and (mode != "unordered" or n == m)
    matched_actual = {i for i, _ in pairs}
    matched_expected = {j for _, j in pairs}
    return Alignment(
        mode=mode,
        passed=passed,
        score=1.0 if denominator == 0 else len(pairs) / denominator,
        pairs=pairs,
        unmatched_actual=[i for i in range(n) if i not in matched_actual],
        unmatched_expected=[j for j in range(m) if j not in matched_expected],
    )

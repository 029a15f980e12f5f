"""Cases generated with hypothesis and recorded, so a suite grows reproducibly.

`cases_from(strategy, n=20, database="tickers.cases.json")` returns n examples of a
hypothesis strategy for `@pytest.mark.parametrize`. The first call draws them (with
hypothesis's derandomized generation) and records them in the database file, next to
the test; every later run reads them back from it, whatever the hypothesis version, so
the cases stay fixed and the evaluation's fingerprint covers them. `pytest
--evals-regenerate-cases` grows a database to a larger n, keeping its examples and
adding new, distinct ones after them. Examples are JSON values (map a strategy onto
them: `st.dates().map(str)`); they come back as JSON reads them (tuples as lists).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evals.model.errors import SuiteError

_state: dict[str, Any] = {"regenerate": False, "files": []}
DRAWS_PER_CASE = 20


def _error(message: str, path: Path | None = None, fix: str | None = None) -> SuiteError:
    """The harness's input error (imported here: the plugin loads this module at start-up)."""
    from evals.model.errors import SuiteError

    return SuiteError(message, file=None if path is None else str(path), fix=fix)


def configure(regenerate: bool) -> None:
    """Start a pytest session: whether to grow databases, and no file recorded yet."""
    _state["regenerate"] = regenerate
    _state["files"] = []


def recorded_files() -> list[Path]:
    """The databases this session's tests read, for the evaluation's fingerprint."""
    return list(_state["files"])


def _database(database: str | Path | None, caller: Path) -> Path:
    if database is None:
        return caller.with_name(f"{caller.stem}.cases.json")
    path = Path(database)
    return path if path.is_absolute() else caller.parent / path


def _plain(example: Any) -> Any:
    try:
        return json.loads(json.dumps(example, allow_nan=False, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise _error(
            f"cases_from: the example {example!r:.80} is not a JSON value ({exc})",
            fix="map the strategy onto JSON values, e.g. st.dates().map(str)",
        ) from None


def _key(example: Any) -> str:
    return json.dumps(example, sort_keys=True, ensure_ascii=False)


def _draw(strategy: Any, known: list[Any], n: int) -> list[Any]:
    """`known` followed by new distinct examples of `strategy`, up to n, reproducibly."""
    from hypothesis import HealthCheck, Phase, given, settings

    examples = list(known)
    seen = {_key(e) for e in examples}

    @settings(
        database=None,
        derandomize=True,
        max_examples=DRAWS_PER_CASE * n,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(strategy)
    def collect(example: Any) -> None:
        plain = _plain(example)
        if len(examples) < n and _key(plain) not in seen:
            seen.add(_key(plain))
            examples.append(plain)

    collect()
    return examples


def _write(path: Path, strategy: Any, examples: list[Any]) -> None:
    import hypothesis

    record = {
        "strategy": repr(strategy),
        "hypothesis": hypothesis.__version__,
        "examples": examples,
    }
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", "utf-8")
    os.replace(temporary, path)


def _read(path: Path) -> list[Any]:
    try:
        examples = json.loads(path.read_text(encoding="utf-8"))["examples"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _error(
            f"cannot read the recorded cases: {exc}",
            path,
            fix="restore the file from version control, or delete it to draw the cases anew",
        ) from None
    if not isinstance(examples, list):
        raise _error("the recorded cases' examples are not a list", path)
    return examples


def cases_from(strategy: Any, n: int = 20, *, database: str | Path | None = None) -> list[Any]:
    """n examples of a hypothesis `strategy`, recorded in `database` (a JSON file; by
    default `<test module>.cases.json` beside the calling module, a relative path is
    taken from the calling module's folder).

    Raises SuiteError when the database holds fewer than n examples (grow it with
    `--evals-regenerate-cases`) or an example is not a JSON value.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"cases_from: n must be a positive integer, not {n!r}")
    caller = Path(sys._getframe(1).f_code.co_filename).resolve()
    path = _database(database, caller)
    known = _read(path) if path.exists() else None
    if known is None or (_state["regenerate"] and len(known) < n):
        examples = _draw(strategy, known or [], n)
        if len(examples) < n:
            raise _error(
                f"cases_from: the strategy gave {len(examples)} distinct examples in "
                f"{DRAWS_PER_CASE * n} draws, fewer than n={n}",
                path,
                fix="lower n or widen the strategy",
            )
        _write(path, strategy, examples)
        known = examples
    elif len(known) < n:
        raise _error(
            f"cases_from asks for {n} cases and the database records {len(known)}",
            path,
            fix="run pytest --evals-regenerate-cases to grow it (then commit the file), "
            f"or ask for n={len(known)}",
        )
    _state["files"].append(path)
    return known[:n]

"""The suite's `environment:` block: the seed state every run gets a fresh copy of.

```yaml
environment:
  state: file://db/seed.sql     # or .sqlite / .db / .json / .yaml
```

`environment: file://db/seed.sql` is the same. The seed must exist and read as the state
it claims to be (a `.sql` script must build a database), so a broken seed stops the suite
at load time with its line instead of failing every run.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evals.common.files import is_file_ref
from evals.common.world import STATE_SUFFIXES, WorldError, copy_seed, read_state
from evals.model.errors import SuiteError
from evals.model.suite import Environment
from evals.suite import checks
from evals.suite.yaml_lines import line_of

ENVIRONMENT_KEYS = ("state",)
EXAMPLE = "environment: {state: file://db/seed.sql}"


def parse_environment(
    raw: dict[str, Any], file: str, resolve: Callable[[str, Any, str], Path]
) -> Environment | None:
    """The suite's environment, or None without one; `resolve` finds (and records, for the
    suite fingerprint) the file a `file://` reference names."""
    if raw.get("environment") is None:
        return None
    line = line_of(raw, "environment")
    block = raw["environment"]
    if isinstance(block, str):
        block = {"state": block}
    block = checks.mapping(block, "environment", file=file, line=line, example=EXAMPLE)
    lines = getattr(block, "key_lines", None)
    checks.known_keys(block, ENVIRONMENT_KEYS, "environment", file=file, lines=lines, line=line)
    state = block.get("state")
    state_line = line_of(block, "state") or line
    if not is_file_ref(state):
        raise SuiteError(
            "environment.state must name the seed state as file://...",
            file,
            state_line,
            EXAMPLE,
        )
    seed = resolve(state, block, "environment.state")
    if seed.suffix.lower() not in STATE_SUFFIXES:
        raise SuiteError(
            f"environment.state {seed.name}: a seed state is a SQLite database, a .sql "
            "script, or a JSON or YAML document",
            file,
            state_line,
            f"use one of {', '.join(STATE_SUFFIXES)}",
        )
    _check_seed(seed, file, state_line)
    return Environment(seed, state_line)


def _check_seed(seed: Path, file: str, line: int | None) -> None:
    """Build the seed once, as a run would, and read it back."""
    with tempfile.TemporaryDirectory(prefix="evals-seed-") as folder:
        try:
            read_state(copy_seed(seed, Path(folder)))
        except (WorldError, OSError, UnicodeDecodeError) as exc:
            raise SuiteError(
                f"environment.state {seed.name} cannot be read: {exc}",
                file,
                line,
                "fix the seed file (a SQLite database, a .sql script, JSON or YAML)",
            ) from None

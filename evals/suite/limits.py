"""The suite's execution settings for shared providers: `limits:` and `pass_env:`.

`limits:` caps the agent calls of the providers each key names, over every worker of
the evaluation (one process, or every node of a Ray cluster):

    limits:
      openai: {concurrency: 8, requests_per_minute: 500, tokens_per_minute: 200000}
      candidate: {concurrency: 2}

A key names the providers whose label, id, or id's scheme (`openai` for
`openai:gpt-4o-mini`) it equals; `"*"` names every provider. `pass_env:` lists
environment variables handed to Ray workers (their values are never stored). Neither
changes what a suite measures, so neither enters the suite fingerprint.
"""

from __future__ import annotations

import re
from typing import Any

from evals.model.bounds import POSITIVE, Bounds
from evals.model.errors import SuiteError
from evals.model.suite import CallLimit
from evals.suite import checks
from evals.suite.yaml_lines import line_of

_LIMIT_KEYS = ("concurrency", "requests_per_minute", "tokens_per_minute")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_WHOLE_POSITIVE = Bounds(low=0, open_low=True, integer=True)


def parse_limits(suite: dict[str, Any], file: str) -> dict[str, CallLimit]:
    """The suite's `limits:` as a `CallLimit` per key; a bad entry is a SuiteError naming
    its line."""
    raw = suite.get("limits")
    if raw is None:
        return {}
    line = line_of(suite, "limits")
    checks.mapping(
        raw,
        "limits",
        file=file,
        line=line,
        example="limits: {openai: {concurrency: 8, requests_per_minute: 500}}",
    )
    out: dict[str, CallLimit] = {}
    for key, caps in raw.items():
        name, key_line = f"limits.{key}", line_of(raw, str(key)) or line
        if not isinstance(caps, dict) or not caps:
            raise SuiteError(
                f"{name} must be a mapping with {', '.join(_LIMIT_KEYS)}",
                file=file,
                line=key_line,
                fix=f"write limits: {{{key}: {{concurrency: 4}}}}",
            )
        lines = getattr(caps, "key_lines", None)
        checks.known_keys(caps, _LIMIT_KEYS, name, file=file, lines=lines, line=key_line)
        values = {
            cap: checks.optional_number(
                caps.get(cap),
                f"{name}.{cap}",
                _WHOLE_POSITIVE if cap == "concurrency" else POSITIVE,
                file=file,
                line=line_of(caps, cap) or key_line,
            )
            for cap in _LIMIT_KEYS
        }
        concurrency = values["concurrency"]
        out[str(key)] = CallLimit(
            concurrency=None if concurrency is None else int(concurrency),
            requests_per_minute=values["requests_per_minute"],
            tokens_per_minute=values["tokens_per_minute"],
        )
    return out


def parse_pass_env(suite: dict[str, Any], file: str) -> list[str]:
    """The suite's `pass_env:` as a list of environment variable names."""
    raw = suite.get("pass_env")
    if raw is None:
        return []
    names = raw if isinstance(raw, list) else None
    if names is None or not all(isinstance(n, str) and _ENV_NAME.match(n) for n in names):
        raise SuiteError(
            "pass_env must be a list of environment variable names",
            file=file,
            line=line_of(suite, "pass_env"),
            fix="write pass_env: [OPENAI_API_KEY]",
        )
    return list(names)

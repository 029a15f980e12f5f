"""JSON for the harness's own files: the results store's JSON columns and the response cache.

Compact, and total: values JSON cannot hold (dates, custom objects) become strings.
"""

from __future__ import annotations

import json
from dataclasses import fields
from operator import attrgetter
from typing import Any

import orjson

from evals.model.trajectory import Step


def dump_json(value: Any) -> str:
    """Compact JSON for the store's JSON columns; unknown objects become strings."""
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:  # integers wider than 64 bits, lone surrogates
        return json.dumps(value, separators=(",", ":"), default=str)


_STEP_FIELDS = tuple(f.name for f in fields(Step))
_step_values = attrgetter(*_STEP_FIELDS)


def encode_step(step: Step) -> dict[str, Any]:
    """A step as JSON, keeping every set field (empty arguments and results included)."""
    data = {k: v for k, v in zip(_STEP_FIELDS, _step_values(step), strict=True) if v is not None}
    if not step.metadata:
        data.pop("metadata", None)
    return data

"""Suite-level transforms, written in Python: provider `transform`, `options.transform`,
`options.transformVars` and assertion `transform`.

A transform is an inline Python expression over `output` (or `vars`) and `context`, or
`file://x.py:fn` (default function `get_transform`), as promptfoo's Python transforms.
Output transforms receive `context = {"vars": ..., "prompt": {...}}`; vars transforms
return a mapping merged over the test's vars.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from evals.agents.transforms import Transform, compile_transform, plain
from evals.model.errors import SuiteError

OUTPUT_PARAMS = ("output", "context")
VARS_PARAMS = ("vars", "context")
DEFAULT_FUNCTION = "get_transform"


def _with_default_function(source: str) -> str:
    text = source.strip()
    if text.startswith("file://") and text.endswith(".py"):
        return f"{text}:{DEFAULT_FUNCTION}"
    return text


@lru_cache(maxsize=256)
def compiled(source: str, params: tuple[str, ...], root: Path, what: str) -> Transform:
    """The callable for a transform source; SuiteError when it cannot be compiled."""
    return compile_transform(_with_default_function(source), params, root, what)


def check_transform(source: Any, params: tuple[str, ...], root: Path, what: str) -> None:
    """Compile a transform at load time so a broken one fails before any run."""
    if not isinstance(source, str):
        raise SuiteError(
            f"{what} must be a Python expression or file://x.py:fn",
            fix="write transform: output.upper() or transform: file://transforms.py:fn",
        )
    compiled(source, params, root, what)


def apply_output_transform(
    source: str, output: Any, context: dict[str, Any], root: Path, what: str
) -> Any:
    """Run an output transform and return its result as plain data."""
    return plain(compiled(source, OUTPUT_PARAMS, root, what)(output, context))


def apply_vars_transform(source: str, variables: dict[str, Any], root: Path) -> dict[str, Any]:
    """The test's vars with the transform's result merged over them."""
    context = {"prompt": {}}
    result = plain(compiled(source, VARS_PARAMS, root, "transformVars")(variables, context))
    if not isinstance(result, dict):
        raise SuiteError(
            f"transformVars returned {type(result).__name__}, not a mapping",
            fix="return a dict of vars to add or replace",
        )
    return {**variables, **result}

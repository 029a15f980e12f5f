"""User transforms: inline JavaScript or `file://x.py:fn`, wherever a suite has one.

A provider's `transform`, a test's `options.transform` and `options.transformVars`, an
assertion's `transform` and the HTTP provider's `transformRequest`, `transformResponse`
and `validateStatus` are JavaScript in promptfoo, and run here as promptfoo runs them:
inline code becomes the body of `new Function(input, 'context', 'process', ...)` (one
line is returned, several lines are the body) in the JavaScript sandbox of
`evals.common.jsengine`. `file://x.py:fn` calls a Python function and `file://x.js[:fn]`
runs a CommonJS module's exported function in the sandbox.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from evals.common import jsengine, jsfiles
from evals.common.files import is_file_ref, load_function, split_ref
from evals.model.errors import SuiteError

Transform = Callable[..., Any]

_LABEL_CHARS = 80


class TransformError(Exception):
    """A transform threw, returned nothing or could not be loaded; the message reads as
    promptfoo's. `row_error` is the error text of the run it fails, as promptfoo writes it."""

    def __init__(self, message: str, row_error: str | None = None) -> None:
        super().__init__(message)
        self.row_error = f"Error: {message}" if row_error is None else row_error


class TransformLoadError(SuiteError):
    """A transform that cannot be compiled or loaded (JavaScript that does not parse, a
    file that does not exist, a module exporting no function). The suite still loads, as in
    promptfoo: each run it would transform becomes an error row with `row_error`."""

    def __init__(self, message: str, row_error: str, **where: Any) -> None:
        super().__init__(message, **where)
        self.row_error = row_error


def transform_label(source: str) -> str:
    """promptfoo's getTransformLabel: the inline code on one line (80 characters at most)."""
    if source.startswith("file://"):
        return "[file transform]"
    line = re.sub(r"\s+", " ", source).strip()
    if len(line) > _LABEL_CHARS:
        line = line[: _LABEL_CHARS - 1] + "…"
    return f"[inline transform]: {line}"


def inline_body(code: str) -> str:
    """promptfoo's getInlineTransformFunction: one line is returned, several are the body."""
    return code if "\n" in code else f"return {code}"


_FUNCTION_EXPRESSION = re.compile(r"^(\(.*?\)\s*=>|function\s*\(.*?\))")


def http_body(code: str, params: Sequence[str], allow_statements: bool) -> str:
    """The HTTP provider's wrapping: a function expression is called with the parameters,
    a request transform with `return` is a body, anything else an expression."""
    text = code.strip()
    if _FUNCTION_EXPRESSION.match(text):
        return f"return ({text})({', '.join(params)});"
    if allow_statements and re.search(r"\breturn\b", text):
        return text
    return f"return ({text});"


def _js_function(params: Sequence[str], body: str, what: str, label: str) -> Transform:
    try:
        jsengine.call("check", [*params, "process"], body)
    except jsengine.JavaScriptError as exc:
        raise TransformLoadError(
            f"{what} is not valid JavaScript: {exc}: {label}",
            str(exc),
            fix="write a JavaScript expression such as output.trim(), or file://x.py:fn",
        ) from None

    def run(*args: Any) -> Any:
        try:
            return jsengine.call("fn", [*params, "process"], body, list(args))
        except jsengine.JavaScriptError as exc:
            raise TransformError(f"Transform failed ({label}): {exc.message}") from None

    return run


def _js_module(path: Path, function: str | None, what: str) -> Transform:
    try:
        jsfiles.call_function(path, function, None)
    except (jsfiles.ModuleFileMissing, jsengine.JavaScriptError) as exc:
        missing = isinstance(exc, jsfiles.ModuleFileMissing)
        raise TransformLoadError(
            f"the {what} file {path.name} does not exist"
            if missing
            else f"{what} {path.name} does not load: {exc}",
            jsfiles.error_text(exc),
            file=str(path),
            fix="create the file or correct the path (relative to the suite)"
            if missing
            else "module.exports = function (output, context) { ... }",
        ) from None

    def run(*args: Any) -> Any:
        try:
            return jsfiles.call_function(path, function, list(args))
        except (jsengine.JavaScriptError, jsfiles.ModuleFileMissing) as exc:
            message = exc.message if isinstance(exc, jsengine.JavaScriptError) else str(exc)
            raise TransformError(f"Transform failed ([file transform]): {message}") from None

    return run


def _file_transform(ref: str, root: Path, what: str, default: str) -> Transform:
    path, function = split_ref(ref)
    if path.endswith(jsfiles.JS_FILES):
        return _js_module((root / path).resolve(), function, what)
    if not path.endswith(".py"):
        raise SuiteError(
            f"{what} {ref!r} is neither a Python nor a JavaScript file",
            fix="write file://transforms.py:function_name or file://transform.js",
        )
    try:
        python = load_function(root / path, function or default, what)
    except SuiteError as exc:
        raise TransformLoadError(
            exc.message,
            "Error: Transform failed ([file transform]): Error running Python script: "
            + _python_load_problem(root / path, exc.message),
            file=exc.file,
            fix=exc.fix,
        ) from None

    def run(*args: Any) -> Any:
        try:
            return python(*json.loads(json.dumps(list(args), default=str)))
        except Exception as exc:  # user code may raise anything
            raise TransformError(
                f"Transform failed ([file transform]): {type(exc).__name__}: {exc}"
            ) from exc

    return run


def _python_load_problem(path: Path, message: str) -> str:
    """What promptfoo's Python runner says of a file it could not load."""
    if not path.is_file():
        return f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'"
    return message


def compile_transform(
    source: Any,
    params: Sequence[str],
    root: Path,
    what: str,
    body: Callable[[str], str] = inline_body,
    default: str = "get_transform",
) -> Transform:
    """A callable taking `params` positionally, from a config value; SuiteError when invalid.

    `body` wraps inline code into a function body (promptfoo's wrapping by default);
    `default` is the function a Python file without `:fn` must define.
    """
    if callable(source):
        return source
    if not isinstance(source, str) or not source.strip():
        raise SuiteError(
            f"{what} must be JavaScript code or file://x.py:fn, got {source!r:.60}",
            fix="write transform: output.trim() or transform: file://transforms.py:fn",
        )
    text = source.strip()
    if is_file_ref(text):
        return _file_transform(text, root, what, default)
    return _js_function(params, body(source), what, transform_label(source))


# Suite-level transforms: output transforms receive `context = {"vars": ..., "prompt":
# {...}}`; vars transforms return a mapping merged over the test's vars.
OUTPUT_PARAMS = ("output", "context")
VARS_PARAMS = ("vars", "context")


@lru_cache(maxsize=256)
def compiled(source: str, params: tuple[str, ...], root: Path, what: str) -> Transform:
    """The callable for a transform source; SuiteError when it cannot be compiled."""
    return compile_transform(source, params, root, what)


def check_transform(source: Any, params: tuple[str, ...], root: Path, what: str) -> None:
    """Compile a transform at load time so a broken one fails before any run."""
    if not isinstance(source, str):
        raise SuiteError(
            f"{what} must be JavaScript code or file://x.py:fn",
            fix="write transform: output.trim() or transform: file://transforms.py:fn",
        )
    compiled(source, params, root, what)


def _loaded(source: str, params: tuple[str, ...], root: Path, what: str) -> Transform:
    """`compiled`, with a transform that cannot be loaded as the TransformError of the run."""
    try:
        return compiled(source, params, root, what)
    except TransformLoadError as exc:
        raise TransformError(exc.message, exc.row_error) from None


def _checked(source: str, result: Any) -> Any:
    if result is None:
        raise TransformError(
            f"Transform function did not return a value\n\n{transform_label(source)}"
        )
    return result


def apply_output_transform(
    source: str, output: Any, context: dict[str, Any], root: Path, what: str
) -> Any:
    """Run an output transform; TransformError when it throws or returns nothing."""
    return _checked(source, _loaded(source, OUTPUT_PARAMS, root, what)(output, context))


def apply_vars_transform(source: str, variables: dict[str, Any], root: Path) -> dict[str, Any]:
    """The test's vars with the transform's result merged over them."""
    try:
        result = _checked(
            source, compiled(source, VARS_PARAMS, root, "transformVars")(variables, {"prompt": {}})
        )
    except TransformError as exc:
        raise SuiteError(f"transformVars failed: {exc}", fix="fix the transform") from None
    if not isinstance(result, dict):
        raise SuiteError(
            f"transformVars returned {type(result).__name__}, not a mapping",
            fix="return an object of vars to add or replace",
        )
    return {**variables, **result}

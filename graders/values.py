"""The value an assertion compares against, with `file://` references resolved.

promptfoo lets most assertion types take their value from a file: a Python file's result
becomes the value, a JSON or YAML file is parsed, a text file is read and trimmed. Every
grader that compares against a value reads it through `assertion_value`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.common.files import is_file_ref, ref_body, split_ref
from evals.common.jsvalues import js_trim
from evals.common.yaml12 import load_yaml_text
from evals.graders.base import GradeContext, GraderError, ScriptFailed, ScriptRaised
from evals.graders.scripts import ScriptError, javascript_context, run_file


def _load_data_file(ref: str, suite_root: Path) -> Any:
    path = (suite_root / ref_body(ref)).resolve()
    if path.suffix in {".json", ".yaml", ".yml"}:
        return load_yaml_text(path.read_text(encoding="utf-8"))
    if path.suffix == ".txt":  # as Node reads it: line endings kept, trimmed as JavaScript
        return js_trim(path.read_bytes().decode("utf-8", errors="replace"))
    raise GraderError(f"Unsupported file type: {path}")


def javascript_file_result(ctx: GradeContext, path: str, function: str | None) -> Any:
    """What a JavaScript file's check returns for (output, context), run in the sandbox as
    promptfoo's loadFromJavaScriptFile runs it; ScriptRaised (an error row) when the file
    is missing, exports no function or the call throws."""
    from evals.common import jsengine, jsfiles

    target = (ctx.suite_root / path).resolve()
    try:
        return jsfiles.call_check(target, function, ctx.output, javascript_context(ctx))
    except jsengine.JavaScriptLimitError:
        raise
    except (jsengine.JavaScriptError, jsfiles.ModuleFileMissing) as exc:
        raise ScriptRaised(jsfiles.error_text(exc)) from None


def assertion_value(ctx: GradeContext) -> Any:
    """The value a non-script assertion compares against, with `file://` resolved.

    A Python file's result becomes the value; a JSON/YAML file is parsed; a text file is
    read and trimmed. Any other value is the rendered value itself.
    """
    value = ctx.value
    if not (is_file_ref(value)):
        if isinstance(value, list):
            return [_load_data_file(v, ctx.suite_root) if is_file_ref(v) else v for v in value]
        return value
    path, function = split_ref(value)
    if path.endswith((".js", ".cjs", ".mjs")):
        result = javascript_file_result(ctx, path, function)
    elif not path.endswith(".py"):
        return _load_data_file(value, ctx.suite_root)
    else:
        try:
            result = run_file(value, ctx)
        except ScriptError as exc:
            raise ScriptFailed(f"Error running Python script: {exc}") from None
    kind = ctx.assertion.type
    if isinstance(result, bool):
        raise GraderError(
            f'Script for "{kind}" assertion returned a boolean. Only javascript/python/ruby '
            "assertion types can return boolean values. For other assertion types, return the "
            "expected value (string, number, array, or object)."
        )
    if isinstance(result, dict) and "pass" in result:
        raise GraderError(
            f'Script for "{kind}" assertion returned a GradingResult. Only javascript/python/ruby '
            "assertion types can return GradingResult objects. For other assertion types, return "
            "the expected value (string, number, array, or object)."
        )
    return ctx.value if result is None else result

"""`ruby` assertions, run as promptfoo runs them: a Ruby interpreter in a child process.

An inline value is wrapped like promptfoo's buildRubyScript (`return <expr>` for one
line, the body of `main(output, context)` for several); `file://check.rb[:method]` calls
`get_assert(output, context)` or the method named. The interpreter is `$PROMPTFOO_RUBY`
or `ruby` on PATH; arguments and the result cross as JSON files, and the result is
normalized like a Python check's. Any failure (no Ruby, a script that raises) fails the
check with promptfoo's "Ruby code execution failed" reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from evals.common.files import split_ref
from evals.common.jsvalues import js_stringify
from evals.graders.base import GradeContext, GraderError
from evals.graders.python_assert import normalize_script_result, wrap_script
from evals.graders.registry import register
from evals.graders.scripts import ScriptError, assertion_context
from evals.model.results import Grade


def build_ruby_script(value: str) -> str:
    """promptfoo's buildRubyScript: `main(output, context)` around the code."""
    return wrap_script(value, "require 'json'\n\ndef main(output, context)", "end\n", "  ")


def ruby_executable() -> str:
    """`$PROMPTFOO_RUBY`, else `ruby` on PATH; ScriptError with promptfoo's message if none."""
    explicit = os.environ.get("PROMPTFOO_RUBY")
    found = shutil.which(explicit or "ruby")
    if found:
        return found
    if explicit:
        raise ScriptError(
            f'Ruby not found. Tried "{explicit}" Please ensure Ruby is installed and set the '
            "PROMPTFOO_RUBY environment variable to your Ruby executable path "
            "(e.g., '/usr/bin/ruby')."
        )
    raise ScriptError(
        'Ruby not found. Tried "ruby", ruby executable detection, and fallback commands. '
        "Please ensure Ruby is installed and set the PROMPTFOO_RUBY environment variable to "
        "your Ruby executable path (e.g., '/usr/bin/ruby')."
    )


async def _finished(process: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
    """The interpreter's output once it exits. A check stopped first (the run's timeout)
    kills it: no Ruby process outlives its check, nor keeps its pipes open past the event
    loop."""
    try:
        return await process.communicate()
    except BaseException as stopped:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        if not isinstance(stopped, GeneratorExit):  # a closed coroutine awaits nothing more
            await process.wait()
        raise


async def run_ruby(script: Path, method: str, args: list[Any]) -> Any:
    """Call `method` of the Ruby file `script` with `args`; its result, as JSON data."""
    ruby = ruby_executable()
    wrapper = resources.files("evals.graders").joinpath("ruby_wrapper.rb")
    with tempfile.TemporaryDirectory(prefix="evals-ruby-") as folder:
        arguments, output = Path(folder) / "input.json", Path(folder) / "output.json"
        arguments.write_text(js_stringify(args), encoding="utf-8")
        with resources.as_file(wrapper) as wrapper_path:
            process = await asyncio.create_subprocess_exec(
                ruby,
                str(wrapper_path),
                str(script),
                method,
                str(arguments),
                str(output),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            _, errors = await _finished(process)
        if process.returncode != 0 or not output.exists():
            detail = errors.decode(errors="replace").strip()
            raise ScriptError(f"Error running Ruby script: {detail}")
        try:
            result = json.loads(output.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ScriptError(f"Invalid JSON returned by Ruby script: {exc}") from None
    if not isinstance(result, dict) or result.get("type") != "final_result":
        raise ScriptError("The Ruby script did not return a result")
    return result.get("data")


@register("ruby", layer="final", promptfoo=True)
async def ruby(ctx: GradeContext) -> Grade:
    """Ruby code over `output` and `context` decides (bool, score or a result hash)."""
    value = ctx.value
    if not isinstance(value, str):
        raise GraderError("Invariant failed: ruby assertion must have a string value")
    arguments = [ctx.output, assertion_context(ctx)]
    try:
        if value.startswith("file://"):
            path, method = split_ref(value)
            result = await run_ruby(ctx.suite_root / path, method or "get_assert", arguments)
        else:
            with tempfile.TemporaryDirectory(prefix="evals-ruby-code-") as folder:
                script = Path(folder) / "assertion.rb"
                script.write_text(build_ruby_script(value), encoding="utf-8")
                result = await run_ruby(script, "main", arguments)
        return normalize_script_result(ctx, result, "Ruby")
    except ScriptError as exc:
        return Grade(False, 0.0, f"Ruby code execution failed: {exc}", ctx.assertion.raw)

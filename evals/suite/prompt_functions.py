"""Prompt functions: code that makes each run's prompt from its vars, as in promptfoo.

`file://prompts.py:fn` calls a Python function, `file://prompts.js[:fn]` a JavaScript
export (in the sandbox), `file://prompt.py` runs a Python file whole and `exec:CMD` (or an
executable file) a command; each gets promptfoo's context `{vars, provider: {id, label},
config}` (a script or command as JSON in its last argument) and gives the prompt: a
string, a chat list (sent as JSON), or `{prompt, config}` whose config is merged into the
prompt's. What they return is then rendered as any prompt template is.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from evals.common import jsengine, jsfiles
from evals.common.files import load_function
from evals.common.jsvalues import js_stringify
from evals.model.errors import SuiteError
from evals.model.suite import PromptFunction

COMMAND_TIMEOUT_S = 60.0
"""How long a prompt script or command may run (promptfoo's default timeout)."""


class PromptFunctionError(Exception):
    """A prompt function raised, or returned something that is not a prompt; the run is an
    error row with this message."""


def check_javascript_prompt(path: Path, name: str | None, where: str) -> None:
    """Load a JavaScript prompt file as promptfoo does when it reads the config: a file
    that does not run (a syntax error, a throw at load) refuses the suite."""
    try:
        jsfiles.call_prompt(path, name, None)
    except jsengine.JavaScriptError as exc:
        raise SuiteError(
            f"the prompt file {path.name} does not load: {exc}",
            file=where,
            fix="check the file runs: module.exports = (context) => `...`",
        ) from None


def _python(function: PromptFunction, context: dict[str, Any]) -> Any:
    from evals.graders.scripts import ScriptError, call_json

    try:
        fn = load_function(Path(function.path), function.name or "", "prompt function")
        return call_json(fn, context)
    except (SuiteError, ScriptError) as exc:
        raise PromptFunctionError(f"Python prompt function failed: {exc}") from None


_SCRIPT_PARTS = re.compile(r"""[^\s"']+|"([^"]*)"|'([^']*)'""")
_ANSI_ESCAPE = re.compile(r"\x1b(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")


def script_parts(command: str) -> list[str]:
    """promptfoo's parseScriptParts: words, with double- or single-quoted ones unquoted."""
    return [m.group(1) or m.group(2) or m.group(0) for m in _SCRIPT_PARTS.finditer(command)]


def _run(arguments: list[str], root: Path, what: str) -> str:
    try:
        done = subprocess.run(
            arguments,
            cwd=root,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PromptFunctionError(f"{what} failed: {exc}") from None
    if done.returncode != 0:
        detail = done.stderr.strip() or f"exit status {done.returncode}"
        raise PromptFunctionError(f"{what} failed: {detail}")
    return done.stdout


def _command(function: PromptFunction, context: dict[str, Any], root: Path) -> str:
    """An executable prompt's output: stdout trimmed, ANSI escapes dropped; stderr with no
    stdout is an error, as in promptfoo."""
    parts = script_parts(function.path)
    if not parts:
        raise PromptFunctionError("exec prompt has no command")
    # as promptfoo's execFile: a bare name is looked up on PATH, not in the suite's folder
    output = _run([*parts, js_stringify(context)], root, "prompt command")
    return _ANSI_ESCAPE.sub("", output.strip())


def _script(function: PromptFunction, context: dict[str, Any], root: Path) -> str:
    """A Python file run whole with the context as its argument: its printed lines."""
    output = _run([sys.executable, function.path, js_stringify(context)], root, "prompt script")
    return "\n".join(output.splitlines())


def call_prompt_function(
    function: PromptFunction,
    variables: dict[str, Any],
    provider: dict[str, Any],
    config: dict[str, Any] | None,
    root: Path,
) -> tuple[str, dict[str, Any] | None]:
    """The template a prompt function makes for these vars, and the config it adds.

    `provider` is `{id, label}` as promptfoo passes it; `config` the prompt's own config.
    PromptFunctionError when the function raises or returns no prompt.
    """
    context = {"vars": variables, "provider": provider, "config": config or {}}
    if function.kind == "python":
        result = _python(function, context)
    elif function.kind == "javascript":
        try:
            result = jsfiles.call_prompt(Path(function.path), function.name, context)
        except (jsengine.JavaScriptError, jsfiles.ModuleFileMissing) as exc:
            raise PromptFunctionError(jsfiles.error_text(exc)) from None
    elif function.kind == "python-script":
        result = _script(function, context, root)
    else:
        result = _command(function, context, root)
    return prompt_from_result(result)


def prompt_from_result(result: Any) -> tuple[str, dict[str, Any] | None]:
    """What promptfoo's renderPrompt makes of a prompt function's result: a string is the
    template, `{prompt, config}` gives the template (a non-string prompt as JSON) and
    config, any other object or list is sent as JSON."""
    if isinstance(result, str):
        return result, None
    if isinstance(result, dict) and "prompt" in result:
        prompt = result["prompt"]
        text = prompt if isinstance(prompt, str) else js_stringify(prompt)
        config = result.get("config")
        return text, dict(config) if isinstance(config, dict) and config else None
    if isinstance(result, (dict, list)):
        return js_stringify(result), None
    kind = "undefined" if result is None else type(result).__name__
    if isinstance(result, bool):
        kind = "boolean"
    elif isinstance(result, (int, float)):
        kind = "number"
    raise PromptFunctionError(f"Prompt function must return a string or object, got {kind}")

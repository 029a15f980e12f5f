"""JavaScript files a suite names (`file://x.js[:fn]`), run in the sandbox as promptfoo runs
them.

promptfoo loads such a file with Node's `import()`: a CommonJS module's `module.exports`
is its default export, `default` (and `default.default`) is unwrapped, and what it then
looks up depends on the use: an assertion calls the named export, else the module, else
its default (`loadFromJavaScriptFile`); a transform takes an own named export, else the
module, else its default (`getJavascriptTransformFunction`). Both are mirrored here,
messages included, with the file's source read on the host and run in
`evals.common.jsengine`'s sandbox, which has no file access of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.common import jsengine

JS_FILES = (".js", ".cjs", ".mjs")


class ModuleFileMissing(FileNotFoundError):
    """The file does not exist; `str()` is promptfoo's (Node's) ENOENT message."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"ENOENT: no such file or directory, open '{path}'")


def module_source(path: Path) -> str:
    """The text of a JavaScript file; ModuleFileMissing when there is none."""
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise ModuleFileMissing(path) from None


def call_function(path: Path, name: str | None, args: list[Any] | None) -> Any:
    """The function a file exports for a transform, called with `args` (only looked up
    when `args` is None). JavaScriptError when the file exports no such function or the
    call throws; ModuleFileMissing when there is no file."""
    return jsengine.call("moduleFunction", module_source(path), str(path), name, args)


def call_check(path: Path, name: str | None, output: Any, context: str) -> Any:
    """A file's check called with (output, context), `context` being the JSON text of the
    assertion context (`scripts.javascript_context`). JavaScriptError when the file exports
    no function or the call throws; ModuleFileMissing when there is no file."""
    return jsengine.call("moduleCheck", module_source(path), str(path), name, output, context)


def call_prompt(path: Path, name: str | None, context: dict[str, Any] | None) -> Any:
    """A prompt function found as promptfoo's processJsFile finds it (the named export,
    else the module), called with `context` (only loaded when `context` is None)."""
    return jsengine.call("modulePrompt", module_source(path), str(path), name, context)


def error_text(exc: jsengine.JavaScriptError | ModuleFileMissing) -> str:
    """An exception as Node's `String(error)` writes it (`TypeError: message`), the form
    promptfoo gives a row's error."""
    if isinstance(exc, ModuleFileMissing):
        return f"Error: {exc}"
    return f"{exc.name}: {exc.message}"

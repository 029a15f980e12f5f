"""JavaScript files a suite names (`file://x.js[:fn]`), run in the sandbox as promptfoo runs
them.

promptfoo loads such a file with Node's `import()`: an ES module (`.mjs`, or `import` /
`export` in a `.js` file) is rewritten into a CommonJS body in the sandbox's modules
realm, a CommonJS module's `module.exports` is its default export, `default` (and
`default.default`) is unwrapped, and what it then looks up depends on the use: an
assertion calls the named export, else the module, else its default
(`loadFromJavaScriptFile`); a transform takes an own named export, else the module, else
its default (`getJavascriptTransformFunction`); a prompt function is the named export,
else the module; a var loader is the module. Each is mirrored here, messages included,
with the file's source read on the host and run in `evals.common.jsengine`'s sandbox,
which has no file access of its own. Timers (`setTimeout`, ...) run on the sandbox's
virtual clock.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evals.common import jsengine

JS_FILES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")
"""What promptfoo runs as JavaScript (its isJavascriptFile): TypeScript is compiled first."""
_TYPESCRIPT = (".ts", ".cts", ".mts")


class ModuleFileMissing(FileNotFoundError):
    """The file does not exist; `str()` is promptfoo's (Node's) ENOENT message."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"ENOENT: no such file or directory, open '{path}'")


def module_source(path: Path) -> str:
    """The text of a JavaScript file as the scripts realm runs it: an ES module (`.mjs`, or
    a `.js` file with import or export, as Node loads it) rewritten as a CommonJS body
    (`common_js`); ModuleFileMissing when there is no file."""
    try:
        source = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise ModuleFileMissing(path) from None
    return common_js(source, path)


_MODULE_SYNTAX = re.compile(r"\b(?:import|export)\b")
_REWRITTEN: dict[tuple[str, str], str] = {}
_MAX_REWRITTEN = 256


def common_js(source: str, path: Path) -> str:
    """`source` as the scripts realm runs it: TypeScript (`.ts`, `.cts`, `.mts`) compiled
    to JavaScript first, as promptfoo compiles it; an ES module becomes a CommonJS body
    whose `module.exports` is its namespace; anything else (CommonJS, `.cjs`) is as
    written. JavaScriptError when an `.mjs` or TypeScript file does not parse."""
    suffix = path.suffix.lower()
    typescript = suffix in _TYPESCRIPT
    always = suffix in (".mjs", ".mts")
    if not typescript and (suffix == ".cjs" or not (always or _MODULE_SYNTAX.search(source))):
        return source
    key = (str(path), source)
    rewritten = _REWRITTEN.get(key)
    if rewritten is None:
        if typescript:
            source = str(jsengine.call("typescriptToJs", source, str(path)))
        if suffix == ".cts" or not (always or _MODULE_SYNTAX.search(source)):
            rewritten = source
        else:
            rewritten = _module_body(source, path, always)
        if len(_REWRITTEN) >= _MAX_REWRITTEN:
            _REWRITTEN.clear()
        _REWRITTEN[key] = rewritten
    return rewritten


def _module_body(source: str, path: Path, always: bool) -> str:
    """An ES module rewritten by the modules realm (`source` as written when it is not one)."""
    try:
        result = jsengine.call("moduleToCommonJs", source, str(path), always)
    except jsengine.JavaScriptError:
        if always:
            raise
        result = None  # not a module: the CommonJS run reports what is wrong with it
    return source if result is None else str(result)


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


def call_scoring(path: Path, name: str | None, args: list[Any] | None) -> Any:
    """An `assertScoringFunction` found as promptfoo's loadFunction finds it, called with
    `args` (namedScores, context), or only looked up when `args` is None. JavaScriptError
    when the file exports no such function or the call throws; ModuleFileMissing when
    there is no file."""
    return jsengine.call("moduleScoring", module_source(path), str(path), name, args)


def call_tests(path: Path, name: str | None, args: list[Any]) -> Any:
    """The tests a JavaScript tests file gives (its function called with `args`, or its
    export as it is), as promptfoo's readJavascriptTestCases reads them."""
    return jsengine.call("moduleTests", module_source(path), str(path), name, args)


def call_var(
    path: Path, name: str, prompt: str, variables: dict[str, Any], provider: dict[str, Any]
) -> Any:
    """A var loader: the module itself called as promptfoo's renderPrompt calls it,
    `fn(varName, prompt, vars, provider)` (the provider with an id() method)."""
    source = module_source(path)
    return jsengine.call("moduleVar", source, str(path), name, prompt, variables, provider)


def error_text(exc: jsengine.JavaScriptError | ModuleFileMissing) -> str:
    """An exception as Node's `String(error)` writes it (`TypeError: message`), the form
    promptfoo gives a row's error."""
    if isinstance(exc, ModuleFileMissing):
        return f"Error: {exc}"
    return f"{exc.name}: {exc.message}"

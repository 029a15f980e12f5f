"""User transforms: Python expressions, lambdas or `file://x.py:fn`, wherever a suite has one.

Provider configs (`transformResponse`, `transformRequest`), a provider's `transform`, a
test's `options.transform` and `options.transformVars`, and an assertion's `transform` all
compile here.

promptfoo writes `transformResponse: json.choices[0].message.content` in JavaScript. The
same text works here: the expression is evaluated as Python over the named arguments
(`json`, `text`, `context` for responses; `prompt`, `vars`, `context` for requests), with
JSON objects readable as attributes (`json.output`, missing keys give None) and arrays
with `.length`, and with the JavaScript operators `&&`, `||`, `===`, `!==`, `?.`, `!` and
the literals `null`, `undefined`, `true`, `false` read as their Python equivalents.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from evals.common.files import is_file_ref, load_function, split_ref
from evals.model.errors import SuiteError

Transform = Callable[..., Any]

_JS_WORDS = {"null": "None", "undefined": "None", "true": "True", "false": "False"}
_JS_OPERATORS = [
    ("===", "=="),
    ("!==", "!="),
    ("&&", " and "),
    ("||", " or "),
    ("?.", "."),
]
_JS_NOT = re.compile(r"!(?!=)")


class _Undefined:
    """JavaScript's `undefined` for a missing key: falsy, equal to None, and `?.`-safe."""

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return other is None or isinstance(other, _Undefined)

    def __hash__(self) -> int:
        return hash(None)

    def __getattr__(self, name: str) -> _Undefined:
        return self

    def __getitem__(self, key: Any) -> _Undefined:
        return self

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()


class JsObject(dict):  # type: ignore[type-arg]
    """A JSON object whose keys also read as attributes, like in JavaScript.

    A key shadows the dict method of the same name (`json.items` is the key `items`).
    """

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("__") and dict.__contains__(self, name):
            return js_view(dict.__getitem__(self, name))
        return super().__getattribute__(name)

    def __getattr__(self, name: str) -> Any:
        return UNDEFINED

    def __getitem__(self, key: Any) -> Any:
        if dict.__contains__(self, key):
            return js_view(dict.__getitem__(self, key))
        return UNDEFINED


class JsArray(list):  # type: ignore[type-arg]
    """A JSON array with JavaScript's `length`."""

    @property
    def length(self) -> int:
        """Number of items, as `array.length` in JavaScript."""
        return len(self)

    def __getitem__(self, index: Any) -> Any:
        return js_view(super().__getitem__(index))

    def __iter__(self) -> Iterator[Any]:
        return (js_view(item) for item in super().__iter__())


def js_view(value: Any) -> Any:
    """Wrap parsed JSON so transforms can use JavaScript-style access."""
    if isinstance(value, dict) and not isinstance(value, JsObject):
        return JsObject(value)
    if isinstance(value, list) and not isinstance(value, JsArray):
        return JsArray(value)
    return value


def plain(value: Any) -> Any:
    """Undo `js_view` recursively, so results store and compare as ordinary JSON."""
    if isinstance(value, _Undefined):
        return None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in dict.items(value)}
    if isinstance(value, list):
        return [plain(v) for v in list.__iter__(value)]
    return value


def _translate_operators(code: str) -> str:
    for js, py in _JS_OPERATORS:
        code = code.replace(js, py)
    return _JS_NOT.sub(" not ", code)


def js_to_python(source: str) -> str:
    """Rewrite JavaScript operators and literals outside string literals into Python."""
    out: list[str] = []
    pending: list[str] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return _translate_operators(source)
    last_end = (1, 0)
    lines = source.splitlines(keepends=True) or [""]
    for tok in tokens:
        if tok.type in (tokenize.ENDMARKER, tokenize.NEWLINE, tokenize.NL):
            continue
        gap = _between(lines, last_end, tok.start)
        last_end = tok.end
        if tok.type == tokenize.STRING:
            out.append(_translate_operators("".join(pending) + gap))
            pending = []
            out.append(tok.string)
        elif tok.type == tokenize.NAME and tok.string in _JS_WORDS:
            pending.append(gap + _JS_WORDS[tok.string])
        else:
            pending.append(gap + tok.string)
    out.append(_translate_operators("".join(pending)))
    return "".join(out).strip()


def _between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1] : end[1]] if start[0] <= len(lines) else ""
    text = lines[start[0] - 1][start[1] :]
    text += "".join(lines[start[0] : end[0] - 1])
    return text + lines[end[0] - 1][: end[1]]


def _file_transform(ref: str, root: Path, what: str) -> Transform:
    path, function = split_ref(ref)
    if not path.endswith(".py"):
        raise SuiteError(
            f"{what} {ref!r} is not a Python file",
            fix="write file://transforms.py:function_name",
        )
    return load_function(root / path, function or "transform", what)


def compile_transform(source: Any, params: Sequence[str], root: Path, what: str) -> Transform:
    """A callable taking `params` positionally, from a config value; SuiteError when invalid."""
    if callable(source):
        return source
    if not isinstance(source, str) or not source.strip():
        raise SuiteError(f"{what} must be an expression or file://x.py:fn, got {source!r:.60}")
    text = source.strip()
    if is_file_ref(text):
        return _file_transform(text, root, what)
    code = text if text.startswith("lambda") else js_to_python(text)
    try:
        compiled = compile(code, f"<{what}>", "eval")
    except SyntaxError as exc:
        raise SuiteError(
            f"{what} is not a valid expression: {exc.msg}: {text!r:.80}",
            fix="write a Python expression such as json['output'] (JavaScript-style "
            "json.output also works), a lambda, or file://x.py:fn",
        ) from None
    if text.startswith("lambda"):
        fn = eval(compiled, {})
        return lambda *args: fn(*(js_view(a) for a in args))

    def evaluate(*args: Any) -> Any:
        namespace = {name: js_view(arg) for name, arg in zip(params, args, strict=True)}
        return eval(compiled, namespace)

    return evaluate


# Suite-level transforms, written in Python: a provider's `transform`, `options.transform`,
# `options.transformVars` and an assertion's `transform`. An expression over `output` (or
# `vars`) and `context`, or `file://x.py:fn` (default function `get_transform`), as
# promptfoo's Python transforms. Output transforms receive
# `context = {"vars": ..., "prompt": {...}}`; vars transforms return a mapping merged over
# the test's vars.
OUTPUT_PARAMS = ("output", "context")
VARS_PARAMS = ("vars", "context")
DEFAULT_FUNCTION = "get_transform"


def _with_default_function(source: str) -> str:
    text = source.strip()
    if is_file_ref(text) and text.endswith(".py"):
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
    context: dict[str, Any] = {"prompt": {}}
    result = plain(compiled(source, VARS_PARAMS, root, "transformVars")(variables, context))
    if not isinstance(result, dict):
        raise SuiteError(
            f"transformVars returned {type(result).__name__}, not a mapping",
            fix="return a dict of vars to add or replace",
        )
    return {**variables, **result}

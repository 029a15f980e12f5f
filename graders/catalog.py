"""Which module grades which assertion type, read from the graders' own declarations.

Each grader module declares its types where it defines them, `@register("bleu",
layer="final", promptfoo=True)`, and nowhere else. Importing every grader module takes
a tenth of the start-up, so the registry imports only the modules of the types a suite
uses; to know which those are, this module reads the `@register(...)` and
`@value_check(...)` decorators of the grader modules' source (their arguments are
literals) without importing them, as setuptools reads a `__version__` without importing
its module. `tests/graders/test_registry_table.py` checks that what it reads is what
importing the modules registers.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

Layer = Literal["final", "trajectory", "policy", "operational", "trace"]
LAYERS: tuple[Layer, ...] = get_args(Layer)
"""The scorecard's layers (`evals.graders.scorecard`): what an assertion's score is about."""

_DECORATOR = re.compile(r"^@(register|value_check)\(", re.MULTILINE)
_LONGEST_DECORATOR = 1000


@dataclass(frozen=True, slots=True)
class AssertionType:
    """An assertion type as its grader declares it: the module that registers it, its
    scorecard layer, and whether it is one of promptfoo's own types (a promptfoo CSV's
    `__expected` cell may name it)."""

    name: str
    module: str
    layer: Layer
    promptfoo: bool = False


def _call(text: str, start: int) -> ast.Call | None:
    """The decorator call starting at `start` (after the `@`), parsed; None when no prefix
    up to a closing parenthesis parses."""
    end = start
    while (end := text.find(")", end + 1, start + _LONGEST_DECORATOR)) != -1:
        try:
            node = ast.parse(text[start : end + 1], mode="eval").body
        except SyntaxError:
            continue
        return node if isinstance(node, ast.Call) else None
    return None


def _literals(call: ast.Call) -> tuple[list[str], dict[str, object]] | None:
    """The call's positional strings and keyword literals, None when one is not a literal."""
    try:
        names = [ast.literal_eval(arg) for arg in call.args]
        keywords = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
    except ValueError:
        return None
    if not all(isinstance(name, str) for name in names) or len(keywords) != len(call.keywords):
        return None
    return names, keywords


@functools.cache
def _scan() -> tuple[dict[str, AssertionType], dict[str, str], frozenset[str]]:
    declared: dict[str, AssertionType] = {}
    checked: dict[str, str] = {}
    registering: set[str] = set()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        module = f"{__package__}.{path.stem}"
        for match in _DECORATOR.finditer(text):
            registering.add(module)
            call = _call(text, match.start() + 1)
            found = None if call is None else _literals(call)
            if found is None:
                continue
            names, keywords = found
            for name in names:
                if match.group(1) == "value_check":
                    checked[name] = module
                elif keywords.get("layer") in LAYERS:
                    promptfoo = keywords.get("promptfoo") is True
                    layer: Layer = keywords["layer"]  # type: ignore[assignment]
                    declared[name] = AssertionType(name, module, layer, promptfoo)
    return declared, checked, frozenset(registering)


def declared() -> dict[str, AssertionType]:
    """Every assertion type the harness's grader modules register, with its declaration."""
    return _scan()[0]


def value_checks() -> dict[str, str]:
    """The assertion types with a load-time value check, and the module declaring it."""
    return _scan()[1]


def module_of(kind: str) -> str | None:
    """The harness's module that grades or checks `kind`, None for a type it does not have."""
    declaration = declared().get(kind)
    return declaration.module if declaration is not None else value_checks().get(kind)


def modules() -> list[str]:
    """Every module of the harness that registers a grader or a value check."""
    return sorted(_scan()[2])


def promptfoo_types() -> list[str]:
    """The harness's assertion types that are promptfoo's own, sorted."""
    return sorted(name for name, d in declared().items() if d.promptfoo)

"""Test vars as promptfoo treats them: array expansion, `file://` values, prompt rendering.

A var whose value is a list of strings stands for one test per item, and several such
vars give their cartesian product; a list whose first item is not a string is one value.
At render time a `file://` var is replaced by the file's content (text trimmed, YAML as
JSON, a Python file by its `get_var(var_name, prompt, other_vars)` output).

At load, vars are checked: every value must be a JSON value (dates become ISO strings,
keys strings as js-yaml makes them), and every `file://` var must name a file that
exists and reads as UTF-8 (YAML that parses). A `file://` var that came from a dataset
(data, not the suite's author) may only name a file inside the suite's folder or the
dataset's own folder, symbolic links followed, and a glob it names must start inside one
of them: data cannot make the harness read or walk other files of the host.
"""

from __future__ import annotations

import datetime
import functools
import glob
import posixpath
import re
from collections.abc import Callable
from itertools import product
from pathlib import Path
from typing import Any

from evals.common.files import is_file_ref, read_text, ref_body
from evals.common.jsfiles import JS_FILES
from evals.common.jsvalues import js_string, js_stringify, json_parse
from evals.common.paths import LinkLoop, glob_base, glob_paths, inside, resolve
from evals.common.templating import placeholders, render, render_value
from evals.model.errors import SuiteError
from evals.suite.var_files import MEDIA_EXTENSIONS, extension, load_var_file
from evals.suite.yaml_lines import file_of, keep_lines, line_of, parse_yaml_file_text


def _file_choices(name: str, ref: str, root: Path | None) -> list[str]:
    """A `file://` var naming a glob stands for one `file://` var per matching file; one
    naming a file is written as promptfoo's glob writes the match (`./a.txt` is `a.txt`)."""
    pattern = ref[len("file://") :]
    if root is None:
        return [ref]
    if not glob.has_magic(pattern):
        normal = posixpath.normpath(pattern)
        return [f"file://{normal}" if (root / normal).is_file() else ref]
    matches = [
        str(match.relative_to(root) if match.is_relative_to(root) else match)
        for match in glob_paths(pattern, root)
    ]
    if not matches:
        raise SuiteError(
            f"No files found for variable {name} at path {pattern}",
            file=str(root),
            fix="correct the glob (relative to the suite's folder) or add matching files",
        )
    return [f"file://{match}" for match in matches]


def var_combinations(variables: dict[str, Any], root: Path | None = None) -> list[dict[str, Any]]:
    """Every combination of the vars' values, in promptfoo's order (last var varies fastest).

    With the suite's `root`, a `file://` var naming a glob expands to one value per file.
    """
    choices: list[list[Any]] = []
    for name, value in variables.items():
        if isinstance(value, str) and value.startswith("file://"):
            choices.append(_file_choices(name, value, root))
            continue
        choices.append(list(value) if expands(value) else [value])
    keys = list(variables)
    return [dict(zip(keys, combo, strict=True)) for combo in product(*choices)]


_NOT_JSON_KINDS: dict[type, str] = {
    bytes: "binary data (a !!binary value)",
    set: "a set (a !!set value)",
    tuple: "ordered pairs (a !!omap or !!pairs value)",
}


def _json_value(value: Any) -> Any:
    """`value` as a JSON value (dates as ISO strings, keys as strings); TypeError naming
    what is not one."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        items = [_json_value(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = {js_string(k): _json_value(v) for k, v in value.items()}
        same = all(isinstance(k, str) and pairs[k] is v for k, v in value.items())
        return value if same else keep_lines(value, type(value)(pairs))
    raise TypeError(_NOT_JSON_KINDS.get(type(value), f"a {type(value).__name__}"))


def json_vars(variables: Any, where: str) -> Any:
    """A test's vars with every value a JSON value: strings, numbers, booleans, null,
    lists and mappings (dates become ISO strings). Anything else (YAML's !!binary,
    !!set, !!omap) is a SuiteError at the var's line in `where` (the file the vars came
    from). Returns `variables` itself when nothing changes; non-mappings pass through."""
    if not isinstance(variables, dict):
        return variables
    try:
        return _json_value(variables)
    except TypeError:
        pass
    for name, value in variables.items():
        try:
            _json_value(value)
        except TypeError as exc:
            raise SuiteError(
                f"var {js_string(name)!r} is {exc}, not a JSON value",
                file=file_of(variables) or where,
                line=line_of(variables, str(name)),
                fix="write the var as a string, number, boolean, list or mapping",
            ) from None
    return variables


def _data_vars(test: Any, root: Path) -> tuple[set[str], tuple[Path, ...]]:
    """The names of the vars `test` took from a dataset, and the folders their files may
    lie in (the suite's and the dataset's); no names for a test the suite itself holds."""
    origin = file_of(test)
    own = test.get("vars") if isinstance(test, dict) else None
    if origin is None or not isinstance(own, dict):
        return set(), ()
    return set(own), (resolve(root), resolve(Path(origin)).parent)


def _outside_error(name: str, value: str, file: str, line: int | None, what: str) -> SuiteError:
    return SuiteError(
        f"var {name!r} names {value}, {what} outside the suite's folder: a dataset may only "
        "name files inside the suite's or its own folder",
        file=file,
        line=line,
        fix="copy the file next to the suite and name it relative to the suite "
        "(file://docs/file.txt)",
    )


def check_data_globs(variables: dict[str, Any], root: Path, test: Any) -> None:
    """Before any glob of a dataset's `file://` vars is walked: it must start inside the
    suite's folder or the dataset's (`file:///**` would walk the whole disk)."""
    names, folders = _data_vars(test, root)
    for name in names:
        value = variables.get(name)
        if not is_file_ref(value) or not glob.has_magic(ref_body(value)):
            continue
        try:
            base = resolve(glob_base(ref_body(value), root))
        except LinkLoop:
            base = root / ref_body(value)
        if not inside(base, folders):
            own = test.get("vars")
            raise _outside_error(
                name, value, file_of(test) or "", line_of(own, name) or line_of(test), "a glob"
            )


Notice = Callable[[Any, str, str | None], None]
"""Gives notice of a problem promptfoo leaves to the rows (the loader's `notice`: the node
it is about, the message, the fix)."""


def expands(value: Any) -> bool:
    """Whether a var's value stands for one test per item (a list whose first item is a
    string, as promptfoo's generateVarCombinations reads it)."""
    return isinstance(value, list) and bool(value) and isinstance(value[0], str)


def check_file_vars(
    variables: dict[str, Any],
    root: Path,
    test: Any,
    where: str,
    checked: set[Path],
    listed: frozenset[str] = frozenset(),
    notice: Notice | None = None,
) -> None:
    """Check at load the `file://` vars of one case (after array and glob expansion).

    The file must exist and a text file read as UTF-8 (YAML must parse, within the alias
    limit); code (`.py`, `.js`), media (read as base64) and PDF files are only checked to
    exist. A var the test took
    from a dataset may only name a file inside the suite's folder or the dataset's:
    absolute paths and `..` leading elsewhere are refused. `test` is the test the vars
    came from, `where` the suite file; `checked` holds files already read. A missing file
    named by an item of a list var (`listed`) is given `notice` instead: promptfoo loads
    it when the prompt renders, and errors those rows.
    """
    from_data, folders = _data_vars(test, root)
    own = test.get("vars") if isinstance(test, dict) else None
    for name, value in variables.items():
        if not is_file_ref(value):
            continue
        file = (file_of(test) or where) if name in from_data else where
        line = line_of(own, name) or line_of(test)
        try:
            path = resolve(root / ref_body(value))
        except LinkLoop:
            raise SuiteError(
                f"var {name!r} names {value}, a loop of symbolic links",
                file=file,
                line=line,
                fix="point the var at the file itself",
            ) from None
        if name in from_data and not inside(path, folders):
            raise _outside_error(name, value, file, line, "which is")
        if path in checked:
            continue
        if not path.is_file() and name in listed and notice is not None:
            notice(
                test,
                f"var {name!r} lists {value}, which does not exist: its rows are error rows, "
                "as in promptfoo",
                f"create {path} or correct the path (relative to {root})",
            )
            continue
        if not path.is_file():
            raise SuiteError(
                f"var {name!r} names {value}, which does not exist"
                + (" or is not a file" if path.exists() else ""),
                file=file,
                line=line,
                fix=f"create {path} or correct the path (relative to {root})",
            )
        kind = extension(path)
        if kind not in ("py", "pdf", *MEDIA_EXTENSIONS) and not path.name.endswith(JS_FILES):
            text = read_text(path, f"the file of var {name!r}")
            if path.suffix in (".yaml", ".yml"):
                parse_yaml_file_text(text, path)
        checked.add(path)


def resolve_vars(
    variables: dict[str, Any],
    prompt: str,
    root: Path,
    provider: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Vars with `file://` values loaded (`var_files`) and one trailing newline dropped from
    strings; `provider` (`{id, label}`) is what a JavaScript loader is told.

    Returns `variables` itself when nothing changes, so callers can tell cheaply.
    """
    if not any(
        isinstance(v, str) and (is_file_ref(v) or v.endswith("\n")) for v in variables.values()
    ):
        return variables
    resolved = dict(variables)
    for name, value in variables.items():
        if is_file_ref(value):
            resolved[name] = load_var_file(value, name, prompt, resolved, root, provider)
    return {
        k: v[:-1] if isinstance(v, str) and v.endswith("\n") else v for k, v in resolved.items()
    }


_JSON_STARTS = frozenset('{["-0123456789tfn')


_NOT_JSON = object()


@functools.lru_cache(maxsize=256)
def _json_prompt(template: str) -> Any:
    """The template parsed as JSON, or `_NOT_JSON`; every run of a prompt asks the same."""
    if template.lstrip()[:1] in _JSON_STARTS:
        try:
            return json_parse(template)
        except ValueError:
            pass
    return _NOT_JSON


_VAR_SLOT = re.compile(r"\{\{\s*(\w+)\s*\}\}", re.ASCII)
_RESOLVE_PASSES = 5


def _js_replacement(replacement: str, match: str, before: str, after: str) -> str:
    """A `String.prototype.replace` replacement string with its `$` patterns expanded."""
    if "$" not in replacement:
        return replacement
    patterns = {"$$": "$", "$&": match, "$`": before, "$'": after}
    return re.sub(r"\$[$&`']", lambda m: patterns[m.group(0)], replacement)


def resolve_var_references(variables: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's resolveVariables: `{{ other }}` in a string var becomes the other var.

    Up to five passes; each pass replaces the first such slot of each var whose target is
    defined (as JavaScript's `replace` with a string pattern does). Returns `variables`
    itself when no var refers to another.
    """
    resolved = variables
    for _ in range(_RESOLVE_PASSES):
        changed = False
        for key, value in list(resolved.items()):
            if not isinstance(value, str) or "{{" not in value:
                continue
            found = _VAR_SLOT.search(value)
            if found is None or found.group(1) not in resolved:
                continue
            if resolved is variables:
                resolved = dict(variables)
            slot, start = found.group(0), found.start()
            before, after = value[:start], value[start + len(slot) :]
            text = js_string(resolved[found.group(1)])
            resolved[key] = before + _js_replacement(text, slot, before, after) + after
            changed = True
        if not changed:
            break
    return resolved


_PARTIAL_TAG = re.compile(r"(\{%[^%]*$|\{\{[^}]*$|\{#[^#]*$)", re.M)
_RAW_OPEN = re.compile(r"\{%\s*raw\s*%\}")
_RAW_CLOSE = re.compile(r"\{%\s*endraw\s*%\}")
_RAW_TAGS = re.compile(r"\{%-?\s*(?:end)?raw\b")


def auto_wrap_raw(text: str) -> str:
    """promptfoo's autoWrapRawIfPartialNunjucks: a text with an unclosed tag renders as is."""
    if _PARTIAL_TAG.search(text) and not (_RAW_OPEN.search(text) and _RAW_CLOSE.search(text)):
        return "{% raw %}" + text + "{% endraw %}"
    return text


def _render_wrapped(
    text: str, variables: dict[str, Any], env: dict[str, str] | None, test_data: bool = False
) -> str:
    wrapped = auto_wrap_raw(text)
    if wrapped is not text and not _RAW_TAGS.search(text):
        return text  # a raw block of text without raw tags renders as itself
    return render(wrapped, variables, env, test_data=test_data, filters=True)


_TEMPLATE_VARIABLE = re.compile(
    r"\{\{[\s]*([^{}\s|]+)[\s]*(?:\|[^}]+)?\}\}|\{%[\s]*(?:if|for)[\s]+([^{}\s]+)[\s]*.*?%\}"
)
_TEMPLATE_COMMENT = re.compile(r"\{#[\s\S]*?#\}")
_FOR_LOOP = re.compile(r"\{%[\s]*for[\s]+(\w+)[\s]+in[\s]+(\w+)[\s]*%\}", re.ASCII)
_ROOT_NAME = re.compile(r"[A-Za-z_]\w*", re.ASCII)


def template_variables(template: str) -> set[str]:
    """promptfoo's extractVariablesFromTemplate: the names a template reads."""
    template = _TEMPLATE_COMMENT.sub("", template)
    names = {m.group(1) or m.group(2) for m in _TEMPLATE_VARIABLE.finditer(template)}
    for loop in _FOR_LOOP.finditer(template):
        names.discard(loop.group(1))
        names.add(loop.group(2))
    return {n for n in names if n}


def references_undefined(template: str, variables: dict[str, Any]) -> bool:
    """Whether a var's template reads a variable the test does not define.

    promptfoo then leaves the var as written. It exempts `env` (which it renders with the
    process environment); here a var never sees `env`, so a var reading it is left as
    written too: test data cannot read the environment.
    """
    for name in template_variables(template):
        root = _ROOT_NAME.match(name)
        if root is not None and root.group(0) not in variables:
            return True
    return False


def _rendered_var(value: Any, variables: dict[str, Any]) -> Any:
    if not isinstance(value, str) or ("{{" not in value and "{%" not in value):
        return value
    if references_undefined(value, variables):
        return value
    return _render_wrapped(value, variables, None, test_data=True)


def fills_in_python(template: str, variables: dict[str, Any]) -> bool:
    """Whether rendering `template` is a plain fill in Python: `{{ name }}` slots only, over
    vars that hold no template and name no file. Such a render takes microseconds and
    cannot loop, so it needs neither the sandbox nor a thread."""
    if placeholders(template) is None:
        return False
    return not any(
        isinstance(v, str) and ("{{" in v or "{%" in v or v.startswith("file://"))
        for v in variables.values()
    )


def render_prompt_text(
    template: str, variables: dict[str, Any], env: dict[str, str] | None = None
) -> str:
    """Render a prompt as promptfoo's renderPrompt does, over vars whose references to
    other vars are resolved (`resolve_var_references`: the vars the run's checks see too).

    A JSON prompt renders leaf by leaf
    and is re-serialized with 2-space indents; a text prompt renders with each string var
    itself rendered first (without `env`, and left as written when it reads an undefined
    variable). Only the prompt template, which the suite author wrote, sees `env`.
    """
    parsed = _json_prompt(template)
    if parsed is not _NOT_JSON:
        return js_stringify(render_value(parsed, variables, env, filters=True), indent=2)
    rendered_vars = {k: _rendered_var(v, variables) for k, v in variables.items()}
    return _render_wrapped(template, rendered_vars, env)


_ENV_REF = re.compile(r"\{\{\s*env\.(\w+)\s*\}\}")
_PLAIN_LEAVES = frozenset({int, float, bool, type(None)})
"""Types `render_env_refs` returns as they are, without a call."""


def env_ref_names(value: Any) -> set[str]:
    """The names of the environment variables a config reads as `{{ env.NAME }}`."""
    names: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "env." in item:
                names.update(_ENV_REF.findall(item))
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return names


def render_env_refs(value: Any, env: dict[str, str]) -> Any:
    """Replace `{{ env.NAME }}` in every string of a config, as promptfoo does at load.

    Names not set are left as written; mappings keep their YAML lines. Parts without a
    reference come back as the same objects, so a config without any is not copied (and
    a container is copied only once one of its members changed).
    """
    if isinstance(value, str):
        if "env." not in value:
            return value
        return _ENV_REF.sub(lambda m: env.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        items: list[Any] | None = None
        for index, item in enumerate(value):
            if type(item) in _PLAIN_LEAVES:
                continue
            new = render_env_refs(item, env)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    if isinstance(value, dict):
        rendered: dict[Any, Any] | None = None
        for key, item in value.items():
            if type(item) in _PLAIN_LEAVES:
                continue
            new = render_env_refs(item, env)
            if new is not item:
                if rendered is None:
                    rendered = type(value)(value)
                rendered[key] = new
        return value if rendered is None else keep_lines(value, rendered)
    return value

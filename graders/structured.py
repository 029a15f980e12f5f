"""Structured-output checks: JSON (with schemas), XML, HTML and SQL, graded as promptfoo does."""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import yaml

from evals.common.files import is_file_ref
from evals.common.jsvalues import js_string, json_parse
from evals.common.offload import CHEAP_STEPS, now_or_off_loop
from evals.common.yaml12 import load_yaml_text
from evals.graders.ajv_schema import DRAFT7_IDS, ajv_validator, meta_problems
from evals.graders.base import GradeContext, GraderError
from evals.graders.jscompat import invariant, negation, outcome
from evals.graders.output import output_string
from evals.graders.registry import register, value_check
from evals.graders.values import assertion_value
from evals.model.results import Grade

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError


def _schema_of(value: Any, kind: str) -> Any:
    """The JSON schema an is-json/contains-json value gives: YAML/JSON text or a mapping."""
    if isinstance(value, str):
        try:
            return load_yaml_text(value)
        except yaml.YAMLError as exc:
            raise GraderError(f"{kind} schema is not valid YAML or JSON: {exc}") from None
    if isinstance(value, (dict, list)):
        return value
    raise GraderError(f"{kind} assertion must have a string or object value")


def compile_schema(schema: Any) -> jsonschema.protocols.Validator:
    """A validator for a schema as promptfoo's Ajv compiles it (draft-07, ajv-formats'
    formats, strict mode); GraderError with Ajv's message when Ajv would refuse it."""
    return ajv_validator(schema)


@value_check("is-json", "contains-json")
def check_schema_value(value: Any) -> None:
    """Load-time check: the schema value parses and is valid against the draft-07 meta-schema.

    What Ajv refuses only when it compiles (another draft's `$schema`, unknown keywords or
    formats in strict mode, invalid patterns) makes the graded run an error row instead, as
    in promptfoo.
    """
    if not value:
        return
    schema = _schema_of(value, "is-json")
    if isinstance(schema, dict) and schema.get("$schema", "") not in DRAFT7_IDS | {""}:
        return
    problems = meta_problems(schema)
    if problems:
        raise GraderError(f"invalid JSON schema: {problems[0]}")


def _ajv_message(error: ValidationError) -> str:
    """The error as Ajv words it (`data/path must ...`), the form promptfoo reports."""
    path = "".join(f"/{p}" for p in error.absolute_path)
    keyword, expected = error.validator, error.validator_value
    messages: dict[str, Callable[[], str]] = {
        "type": lambda: f"must be {','.join(expected) if isinstance(expected, list) else expected}",
        "enum": lambda: "must be equal to one of the allowed values",
        "const": lambda: "must be equal to constant",
        "minimum": lambda: f"must be >= {js_string(expected)}",
        "maximum": lambda: f"must be <= {js_string(expected)}",
        "exclusiveMinimum": lambda: f"must be > {js_string(expected)}",
        "exclusiveMaximum": lambda: f"must be < {js_string(expected)}",
        "minLength": lambda: f"must NOT have fewer than {expected} characters",
        "maxLength": lambda: f"must NOT have more than {expected} characters",
        "minItems": lambda: f"must NOT have fewer than {expected} items",
        "maxItems": lambda: f"must NOT have more than {expected} items",
        "minProperties": lambda: f"must NOT have fewer than {expected} properties",
        "maxProperties": lambda: f"must NOT have more than {expected} properties",
        "additionalProperties": lambda: "must NOT have additional properties",
        "pattern": lambda: f'must match pattern "{expected}"',
        "format": lambda: f'must match format "{expected}"',
        "multipleOf": lambda: f"must be multiple of {js_string(expected)}",
        "anyOf": lambda: "must match a schema in anyOf",
        "oneOf": lambda: "must match exactly one schema in oneOf",
        "not": lambda: "must NOT be valid",
        "uniqueItems": lambda: "must NOT have duplicate items",
    }
    if keyword == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"data{path} must have required property '{missing}'"
    text = messages.get(str(keyword))
    return f"data{path} {text() if text else error.message}"


def _first_error(validator: jsonschema.protocols.Validator, instance: Any) -> str | None:
    errors = list(validator.iter_errors(instance))
    if not errors:
        return None
    errors.sort(key=lambda e: (len(e.absolute_path), e.validator != "type"))
    return _ajv_message(errors[0])


def _schema_validator(ctx: GradeContext, value: Any) -> jsonschema.protocols.Validator:
    kind = ctx.assertion.base_type
    if is_file_ref(ctx.value):
        invariant(value, f"{kind} references a file that does not export a JSON schema")
        return compile_schema(value)
    return compile_schema(_schema_of(value, kind))


@register("is-json", layer="final", promptfoo=True)
def is_json(ctx: GradeContext) -> Grade | Coroutine[Any, Any, Grade]:
    """The whole output is JSON, optionally conforming to a JSON schema.

    Validating against a schema runs off the event loop (its patterns are JavaScript
    regular expressions that may backtrack over long strings)."""
    value = assertion_value(ctx)
    text = output_string(ctx)
    return now_or_off_loop(_is_json, CHEAP_STEPS + 1 if value else len(text), ctx, value, text)


def _is_json(ctx: GradeContext, value: Any, text: str) -> Grade:
    try:
        parsed = json_parse(text)
        is_valid_json = True
    except ValueError:
        is_valid_json = False
    passed = is_valid_json != ctx.inverse
    if is_valid_json and value:
        problem = _first_error(_schema_validator(ctx, value), parsed)
        passed = (problem is None) != ctx.inverse
        if not passed:
            reason = (
                "Output is JSON that conforms to the provided schema"
                if ctx.inverse
                else f"JSON does not conform to the provided schema. Errors: {problem}"
            )
            return Grade(False, 0.0, reason, ctx.assertion.raw)
    return outcome(ctx, passed, "Expected output to be valid JSON")


def _slash_comments_to_hash(text: str) -> str:
    """promptfoo's convertSlashCommentsToHash: `//` comments become YAML `#` comments."""
    return "\n".join(_convert_line(line) for line in text.split("\n"))


def _escaped(line: str, index: int) -> bool:
    count = 0
    i = index - 1
    while i >= 0 and line[i] == "\\":
        count += 1
        i -= 1
    return count % 2 == 1


def _convert_line(line: str) -> str:
    state = "normal"
    out: list[str] = []
    i = 0
    while i < len(line):
        char = line[i]
        nxt = line[i + 1] if i + 1 < len(line) else ""
        prev = line[i - 1] if i > 0 else ""
        if state == "normal":
            if char == "'" and not _is_letter(prev):
                state = "single"
            elif char == '"':
                state = "double"
            elif char == "/" and nxt == "/":
                start = 0
                for j in range(i - 1, -1, -1):
                    if line[j].isspace():
                        start = j + 1
                        break
                if "://" in line[start : i + 2]:
                    out.append(char)
                    break
                count = 2
                while i + count < len(line) and line[i + count] == "/":
                    count += 1
                return "".join(out) + "#" * (count // 2) + line[i + count :]
            out.append(char)
        elif state == "single":
            out.append(char)
            if char == "'" and not _escaped(line, i) and not _is_letter(nxt):
                state = "normal"
        else:
            out.append(char)
            if char == '"' and not _escaped(line, i):
                state = "normal"
        i += 1
    return "".join(out)


def _is_letter(char: str) -> bool:
    return len(char) == 1 and char.isascii() and char.isalpha()


def extract_json_objects(text: str) -> list[Any]:
    """promptfoo's extractJsonObjects: every balanced `{...}` that parses as a JSON/YAML mapping."""
    found: list[Any] = []
    limit = 100_000
    i = 0
    while i < len(text):
        if text[i] == "{":
            opened, closed, j = 1, 0, i + 1
            while j < min(i + limit, len(text)) and opened > closed:
                if text[j] == "{":
                    opened += 1
                if text[j] == "}":
                    closed += 1
                j += 1
                if opened == closed or j == len(text) or j == i + limit:
                    candidate = text[i:j] + "}" * max(0, opened - closed)
                    try:
                        parsed = load_yaml_text(_slash_comments_to_hash(candidate))
                    except yaml.YAMLError:
                        if opened == closed:
                            break
                        continue
                    if isinstance(parsed, (dict, list)):
                        found.append(parsed)
                        i = j - 1
                        break
        i += 1
    return found


@register("contains-json", layer="final", promptfoo=True)
def contains_json(ctx: GradeContext) -> Grade | Coroutine[Any, Any, Grade]:
    """The output contains a JSON object, optionally one conforming to a JSON schema.

    Off the event loop with a schema, or for a long output (each `{` may start a parse)."""
    value = assertion_value(ctx)
    text = output_string(ctx)
    steps = CHEAP_STEPS + 1 if value else len(text) * 16
    return now_or_off_loop(_contains_json, steps, ctx, value, text)


def _contains_json(ctx: GradeContext, value: Any, text: str) -> Grade:
    objects = extract_json_objects(text)
    reason = "Expected output to contain valid JSON"
    passed = (len(objects) == 0) if ctx.inverse else (len(objects) > 0)
    for obj in objects:
        if not value:
            continue
        problem = _first_error(_schema_validator(ctx, value), obj)
        passed = (problem is not None) if ctx.inverse else (problem is None)
        if problem is None:
            if ctx.inverse:
                reason = "Output contains JSON conforming to the provided schema"
            break
        reason = f"JSON does not conform to the provided schema. Errors: {problem}"
    return outcome(ctx, passed, reason)


_HTML_PATTERNS = (
    (re.compile(r"<[a-zA-Z][a-zA-Z0-9-]*(?:\s[^>]*)?/>"), 1),
    (re.compile(r"&(?:[a-zA-Z]+|#[0-9]+|#x[0-9a-fA-F]+);"), 1),
    (re.compile(r"<!DOCTYPE\s+html", re.IGNORECASE), 2),
    (re.compile(r"<!--[^-]*(?:-[^-]+)*-->"), 1),
    (re.compile(r"\s[a-zA-Z-]+=\s*[\"'][^\"']*[\"']"), 1),
    (
        re.compile(
            r"<(html|head|body|div|span|p|a|img|h[1-6]|ul|ol|li|table|tr|td|th|form|input|button"
            r"|script|style|link|meta|br|hr)\b",
            re.IGNORECASE | re.ASCII,
        ),
        2,
    ),
)
_OPENING_TAG = re.compile(r"<[a-zA-Z][a-zA-Z0-9-]*(?:\s[^>]*)?>")
_CLOSING_TAG = re.compile(r"</[a-zA-Z][a-zA-Z0-9-]*\s*>")
_MAX_MARKUP = 10 * 1024 * 1024


def contains_html_text(text: str) -> bool:
    """promptfoo's containsHtml: at least two indicators of HTML (tags, entities, doctype...)."""
    if len(text) > _MAX_MARKUP:
        return False
    opening, closing = bool(_OPENING_TAG.search(text)), bool(_CLOSING_TAG.search(text))
    score = 2 if opening and closing else int(opening or closing)
    score += sum(weight for pattern, weight in _HTML_PATTERNS if pattern.search(text))
    return score >= 2


_VALID_HTML_ELEMENTS = frozenset(
    [
        "html",
        "head",
        "title",
        "base",
        "link",
        "meta",
        "style",
        "body",
        "article",
        "section",
        "nav",
        "aside",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "footer",
        "address",
        "p",
        "hr",
        "pre",
        "blockquote",
        "ol",
        "ul",
        "li",
        "dl",
        "dt",
        "dd",
        "figure",
        "figcaption",
        "main",
        "div",
        "a",
        "em",
        "strong",
        "small",
        "s",
        "cite",
        "q",
        "dfn",
        "abbr",
        "ruby",
        "rt",
        "rp",
        "data",
        "time",
        "code",
        "var",
        "samp",
        "kbd",
        "sub",
        "sup",
        "i",
        "b",
        "u",
        "mark",
        "bdi",
        "bdo",
        "span",
        "br",
        "wbr",
        "img",
        "iframe",
        "embed",
        "object",
        "param",
        "picture",
        "source",
        "video",
        "audio",
        "track",
        "map",
        "area",
        "svg",
        "math",
        "script",
        "noscript",
        "canvas",
        "ins",
        "del",
        "table",
        "caption",
        "colgroup",
        "col",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "td",
        "th",
        "form",
        "label",
        "input",
        "button",
        "select",
        "datalist",
        "optgroup",
        "option",
        "textarea",
        "output",
        "progress",
        "meter",
        "fieldset",
        "legend",
        "details",
        "summary",
        "dialog",
        "menu",
        "slot",
        "template",
    ]
)
_WRAPPER_PATTERNS = {name: re.compile(rf"<{name}(?=[\s>/])") for name in ("html", "head", "body")}


def _local_name(element: Any) -> str:
    tag = element.tag
    return tag.split("}", 1)[1] if tag.startswith("{") else tag


def _has_top_level_text(element: Any) -> bool:
    """promptfoo's hasTopLevelText: a text node right under `element` holds more than
    whitespace (its leading text, or the text after any of its children)."""
    texts = [element.text, *(child.tail for child in element)]
    return any(text and text.strip() for text in texts)


def validate_html(text: str) -> tuple[bool, str]:
    """promptfoo's validateHtml on an HTML5 parse tree: (is valid, reason)."""
    import html5lib

    trimmed = text.strip()
    if not trimmed:
        return False, "Output is empty"
    if len(trimmed) > _MAX_MARKUP:
        return False, "Output exceeds maximum size limit"
    if re.match(r"^\s*<\?xml", trimmed, re.IGNORECASE):
        return False, "Output appears to be XML, not HTML"
    document = html5lib.parse(trimmed, namespaceHTMLElements=False)
    lowered = trimmed.lower()
    literal = {name: bool(p.search(lowered)) for name, p in _WRAPPER_PATTERNS.items()}
    body = document.find("body")
    if body is not None and not literal["body"] and _has_top_level_text(body):
        return False, "Output must be wrapped in HTML tags"
    for element in document.iter():
        if not isinstance(element.tag, str):
            continue
        name = _local_name(element).lower()
        if name in _WRAPPER_PATTERNS:
            if literal[name]:
                return True, "Output is valid HTML"
        elif name in _VALID_HTML_ELEMENTS or "-" in name:
            return True, "Output is valid HTML"
    return False, "Output does not contain recognized HTML elements"


@register("contains-html", layer="final", promptfoo=True)
def contains_html(ctx: GradeContext) -> Grade:
    """The output contains HTML (promptfoo's indicator heuristic)."""
    passed = contains_html_text(output_string(ctx)) != ctx.inverse
    return outcome(ctx, passed, f"Expected output to {negation(ctx)}contain HTML content")


@register("is-html", layer="final", promptfoo=True)
def is_html(ctx: GradeContext) -> Grade:
    """The whole output is an HTML document or fragment."""
    valid, reason = validate_html(output_string(ctx))
    return outcome(ctx, valid != ctx.inverse, reason)

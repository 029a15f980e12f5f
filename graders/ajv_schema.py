"""JSON schemas compiled and applied as promptfoo's Ajv 8 instance does.

promptfoo builds one `new Ajv({strictSchema: true})` with `addFormats(ajv)` and compiles
each `is-json` / `contains-json` schema when it grades. That instance knows draft-07 only
(`$schema` naming another draft is "no schema with key or ref"), applies the keywords
next to a `$ref` (draft-07 ignores them), matches `pattern` and `patternProperties` as
JavaScript `RegExp`s with the `u` flag, knows OpenAPI's `nullable`, checks ajv-formats'
formats, and in strict mode refuses unknown keywords and formats and lone `if` / `then` /
`else` when it compiles. Compile problems are GraderErrors worded as Ajv words them, so
the run becomes an error row as in promptfoo.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from evals.common import jsengine
from evals.graders import ajv_formats
from evals.graders.base import GraderError

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError

DRAFT7_IDS = frozenset(
    {"http://json-schema.org/draft-07/schema", "http://json-schema.org/draft-07/schema#"}
)
"""The `$schema` values Ajv's default (draft-07) instance knows."""

KEYWORDS = frozenset(
    [
        "$async",
        "$schema",
        "$id",
        "$defs",
        "$vocabulary",
        "$comment",
        "definitions",
        "id",
        "$ref",
        "maximum",
        "minimum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "multipleOf",
        "maxLength",
        "minLength",
        "pattern",
        "maxProperties",
        "minProperties",
        "required",
        "maxItems",
        "minItems",
        "uniqueItems",
        "type",
        "nullable",
        "const",
        "enum",
        "not",
        "anyOf",
        "oneOf",
        "allOf",
        "if",
        "then",
        "else",
        "propertyNames",
        "additionalProperties",
        "dependencies",
        "properties",
        "patternProperties",
        "additionalItems",
        "items",
        "contains",
        "format",
        "title",
        "description",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "formatMaximum",
        "formatMinimum",
        "formatExclusiveMaximum",
        "formatExclusiveMinimum",
    ]
)
"""The keywords of promptfoo's Ajv instance (draft-07, metadata, ajv-formats' limits)."""

_ONE_SCHEMA = ("not", "if", "then", "else", "contains", "propertyNames", "additionalProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf")
_SCHEMA_MAPS = ("properties", "patternProperties")
_FORMAT_LIMITS = (
    "formatMaximum",
    "formatMinimum",
    "formatExclusiveMaximum",
    "formatExclusiveMinimum",
)


def check_draft(schema: Any) -> None:
    """Raise Ajv's error when `$schema` names a meta-schema other than draft-07."""
    if isinstance(schema, dict) and "$schema" in schema:
        name = schema["$schema"]
        if name not in DRAFT7_IDS:
            raise GraderError(f'no schema with key or ref "{name}"')


def meta_problems(schema: Any) -> list[str]:
    """What makes a schema invalid against the draft-07 meta-schema, worded as Ajv does."""
    import jsonschema

    meta = jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)
    errors = sorted(meta.iter_errors(schema), key=lambda e: list(e.absolute_path))
    return [f"data{''.join(f'/{p}' for p in e.absolute_path)} {e.message}" for e in errors]


class _StrictWalk:
    """Ajv's compile-time checks over every schema object it compiles: the root, its
    subschemas and what `$ref`s reach (`definitions` nobody refers to are not compiled)."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.base = root.get("$id", "") if isinstance(root, dict) else ""
        self.seen: set[int] = set()

    def walk(self, node: Any, path: str) -> None:
        if not isinstance(node, dict) or id(node) in self.seen:
            return
        self.seen.add(id(node))
        for key in node:
            if key not in KEYWORDS:
                raise GraderError(f'strict mode: unknown keyword: "{key}"')
        self._check_types(node)
        self._check_keywords(node, path)
        for child, child_path in _subschemas(node, path):
            self.walk(child, child_path)
        if isinstance(node.get("$ref"), str):
            target, target_path = self._resolve(node["$ref"])
            self.walk(target, target_path)

    @staticmethod
    def _check_types(node: dict[str, Any]) -> None:
        types = node.get("type")
        names = [types] if isinstance(types, str) else types if isinstance(types, list) else []
        if "null" in names:
            if node.get("nullable") is False:
                raise GraderError("type: null contradicts nullable: false")
        elif not names and "nullable" in node:
            raise GraderError('"nullable" cannot be used without "type"')

    @staticmethod
    def _check_keywords(node: dict[str, Any], path: str) -> None:
        if "if" in node and "then" not in node and "else" not in node:
            raise GraderError('strict mode: "if" without "then" and "else" is ignored')
        for keyword in ("then", "else"):
            if keyword in node and "if" not in node:
                raise GraderError(f'strict mode: "{keyword}" without "if" is ignored')
        if "additionalItems" in node and not isinstance(node.get("items"), list):
            raise GraderError(
                'strict mode: "additionalItems" is ignored when "items" is not an array of schemas'
            )
        name = node.get("format")
        if isinstance(name, str) and name not in ajv_formats.FORMAT_NAMES:
            raise GraderError(f'unknown format "{name}" ignored in schema at path "{path}"')
        for keyword in _FORMAT_LIMITS:
            if keyword in node:
                raise GraderError(f"{keyword} is not supported in is-json schemas")
        if isinstance(node.get("pattern"), str):
            compile_pattern(node["pattern"])

    def _resolve(self, ref: str) -> tuple[Any, str]:
        fragment = ref[len(self.base) :] if self.base and ref.startswith(self.base) else ref
        missing = GraderError(f"can't resolve reference {ref} from id {self.base or '#'}")
        if not fragment.startswith("#"):
            raise missing
        node = self.root
        pointer = unquote(fragment[1:])
        for raw in pointer.split("/")[1:] if pointer else []:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise missing
        return node, "#" + pointer


def _subschemas(node: dict[str, Any], path: str) -> Iterator[tuple[Any, str]]:
    """The subschemas Ajv compiles with a schema object, with their schema paths."""
    for keyword in _ONE_SCHEMA:
        if keyword in node:
            yield node[keyword], f"{path}/{keyword}"
    for keyword in _SCHEMA_LISTS:
        for index, child in enumerate(node.get(keyword) or []):
            yield child, f"{path}/{keyword}/{index}"
    for keyword in _SCHEMA_MAPS:
        children = node.get(keyword)
        if isinstance(children, dict):
            for name, child in children.items():
                yield child, f"{path}/{keyword}/{_escape(name)}"
    for keyword in ("items", "additionalItems"):
        items = node.get(keyword)
        if isinstance(items, list):
            for index, child in enumerate(items):
                yield child, f"{path}/{keyword}/{index}"
        elif keyword in node:
            yield items, f"{path}/{keyword}"
    dependencies = node.get("dependencies")
    if isinstance(dependencies, dict):
        for name, child in dependencies.items():
            yield child, f"{path}/dependencies/{_escape(name)}"


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def compile_pattern(pattern: str) -> None:
    """Raise a GraderError when JavaScript's `new RegExp(pattern, "u")` throws, as Ajv's
    compile does."""
    try:
        jsengine.regex_test(pattern, "", "u")
    except jsengine.JavaScriptLimitError:
        raise
    except jsengine.JavaScriptError as exc:
        raise GraderError(exc.message) from None


def pattern_matches(pattern: str, text: str) -> bool:
    """`new RegExp(pattern, "u").test(text)`, Ajv's `pattern` check."""
    try:
        return jsengine.regex_test(pattern, text, "u")
    except jsengine.JavaScriptLimitError:
        raise
    except jsengine.JavaScriptError as exc:
        raise GraderError(exc.message) from None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str) and not pattern_matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if pattern_matches(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(
    validator: Any, extras: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if not isinstance(instance, dict):
        return
    declared = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    unknown = [
        name
        for name in instance
        if name not in declared and not any(pattern_matches(p, name) for p in patterns)
    ]
    if isinstance(extras, dict):
        for name in unknown:
            yield from validator.descend(instance[name], extras, path=name)
    elif extras is False and unknown:
        yield ValidationError(f"Additional properties are not allowed ({unknown[0]!r})")


def _type(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    import jsonschema

    if instance is None and schema.get("nullable") is True:
        return
    yield from jsonschema.Draft7Validator.VALIDATORS["type"](validator, types, instance, schema)


def _format(validator: Any, name: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if not ajv_formats.conforms(name, instance):
        yield ValidationError(f"{instance!r} is not a {name!r}")


def _every_keyword(schema: Any) -> Any:
    """Every keyword of a schema applies, those next to a `$ref` too (draft-07 ignores them)."""
    return schema.items()


@cache
def _validator_class() -> type[jsonschema.protocols.Validator]:
    import jsonschema

    keywords = dict(jsonschema.Draft7Validator.VALIDATORS)
    keywords.update(
        pattern=_pattern,
        patternProperties=_pattern_properties,
        additionalProperties=_additional_properties,
        type=_type,
        format=_format,
    )
    return jsonschema.validators.create(
        meta_schema=jsonschema.Draft7Validator.META_SCHEMA,
        validators=keywords,
        type_checker=jsonschema.Draft7Validator.TYPE_CHECKER,
        applicable_validators=_every_keyword,
    )


def ajv_validator(schema: Any) -> jsonschema.protocols.Validator:
    """A validator applying `schema` as promptfoo's Ajv instance does; GraderError with
    Ajv's message when Ajv would refuse to compile it."""
    check_draft(schema)
    problems = meta_problems(schema)
    if problems:
        raise GraderError(f"schema is invalid: {', '.join(problems)}")
    _StrictWalk(schema).walk(schema, "#")
    return _validator_class()(schema)

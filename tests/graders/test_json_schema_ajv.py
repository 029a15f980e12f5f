"""`is-json` / `contains-json` schemas against the Ajv 8 + ajv-formats that promptfoo uses.

Each check runs the installed `ajv` and `ajv-formats` from the node_modules of the promptfoo
CLI ($EVALS_PROMPTFOO) in node, built as promptfoo builds them (`new Ajv({strictSchema:
true})`, `addFormats(ajv)`), and compares its verdicts with the harness's; skipped where
they are not installed.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from typing import Any

import pytest

from evals.graders import ajv_formats
from evals.graders.base import GraderError
from evals.graders.structured import _first_error, check_schema_value, compile_schema
from tests.reports.promptfoo_cli import NODE_MODULES, node_answer

pytestmark = [
    pytest.mark.promptfoo,
    pytest.mark.skipif(
        shutil.which("node") is None or not (NODE_MODULES / "ajv-formats").is_dir(),
        reason="ajv-formats (installed with the promptfoo CLI) is not installed",
    ),
]

AJV_SCRIPT = """
const base = process.argv[1];
const Ajv = require(base + '/ajv').default;
const addFormats = require(base + '/ajv-formats');
const ajv = new Ajv({strictSchema: true, logger: false});
addFormats(ajv);
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = cases.map(([schema, data]) => {
  try {
    const validate = ajv.compile(schema);
    return validate(data) ? ['pass', ''] : ['fail', ajv.errorsText(validate.errors)];
  } catch (e) {
    return ['throw', e.message.split('\\n')[0]];
  }
});
process.stdout.write('\\nVERDICTS ' + JSON.stringify(out));
"""


def ajv_verdicts(cases: list[tuple[Any, Any]]) -> list[tuple[str, str]]:
    """(pass | fail | throw, Ajv's errors text or error message) for each (schema, data)."""
    return [tuple(v) for v in node_answer(AJV_SCRIPT, NODE_MODULES, cases, "VERDICTS", 300)]


def harness_verdict(schema: Any, data: Any) -> tuple[str, str]:
    try:
        problem = _first_error(compile_schema(schema), data)
    except GraderError as exc:
        return "throw", str(exc)
    return ("pass", "") if problem is None else ("fail", problem)


SAMPLES = {
    "date": ["2024-02-29", "2023-02-29", "2023-13-01", "2023-00-10", "0000-01-31", "2023-1-01"],
    "time": [
        "23:59:60Z",
        "23:59:60+01:00",
        "00:59:60+01:00",
        "12:00:00.5z",
        "12:00:00",
        "24:00:00Z",
    ],
    "date-time": ["2023-01-01T12:00:00Z", "2023-01-01 12:00:00+0100", "2023-01-01t12:00:00-23:59"],
    "iso-time": ["12:00:00", "12:00:00+24", "23:59:60-00:00", "01:02:03.456"],
    "iso-date-time": ["2023-01-01T12:00:00", "2023-01-01\u200312:00:00", "2023-01-01T12:00"],
    "duration": ["P1Y2M3DT4H5M6S", "P1W", "PT", "P", "P1DT", "PT1H\n"],
    "uri": ["http://a.b/c?d#e", "urn:isbn:123", "mailto:x@y.z", "a:b", "http://[::1]:80/", "no"],
    "uri-reference": ["/a/b", "#frag", "//host", "a b", 'http://x/"q"', "%zz"],
    "uri-template": ["http://x/{id}", "{+path}/x", "{a,b:3}", "{", "x{y*}", "{a:0}"],
    "url": [
        "http://example.com",
        "https://10.0.0.1/",
        "http://1.2.3.4",
        "ftp://ünï.cödé/x",
        "http://x",
    ],
    "email": ["a@b.co", "a.b@c-d.e", "a..b@c.d", "@x.y", "a@b", "ſ@x.yz"],
    "hostname": ["a.b.c", "a-.b", "-a", "x" * 63 + ".com", "x" * 64, "a.b."],
    "ipv4": ["1.2.3.4", "256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4\n", "١.2.3.4"],
    "ipv6": ["::1", "1::", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4", "1:::2", "g::1"],
    "regex": ["a+", "((", "\\p{Lu}", "a\\Z", "\\Z", "[", "(?<n>x)\\k<n>"],
    "uuid": [
        "123e4567-e89b-12d3-a456-426614174000",
        "urn:uuid:123E4567-E89B-12D3-A456-426614174000",
    ],
    "json-pointer": ["", "/a~0b/c~1d", "/a~2", "a", "/~"],
    "json-pointer-uri-fragment": ["#", "#/a%20b", "#/a b", "#/~1"],
    "relative-json-pointer": ["0", "1/a", "0#", "01", "-1"],
    "byte": ["", "QUJD", "QUI=", "QQ==", "QQ=", "!!!\nQUJD", "QU\u2028JD", "***"],
    "password": ["anything"],
    "binary": ["anything"],
}
ALPHABET = "09aAzZ-._~:/?#[]@!$&'()*+,;=% \t\nTtZz+-٣ſK\u2028\u00a0é😀\"{}\\<>^`|"


def mutations(text: str, rng: random.Random, count: int) -> list[str]:
    """Random one- and two-character edits of a sample: near misses of each rule."""
    out = []
    for _ in range(count):
        chars = list(text)
        for _ in range(rng.randint(1, 2)):
            position = rng.randint(0, len(chars))
            action = rng.choice("ird")
            if action == "i" or not chars:
                chars.insert(position, rng.choice(ALPHABET))
            elif action == "r":
                chars[min(position, len(chars) - 1)] = rng.choice(ALPHABET)
            else:
                del chars[min(position, len(chars) - 1)]
        out.append("".join(chars))
    return out


def test_every_ajv_format_is_known() -> None:
    (verdict,) = ajv_verdicts([({"type": "string"}, "x")])
    assert verdict == ("pass", "")
    formats = NODE_MODULES / "ajv-formats" / "dist" / "formats"
    script = f"console.log(JSON.stringify(require({json.dumps(str(formats))}).formatNames))"
    names = json.loads(subprocess.check_output(["node", "-e", script], text=True))
    assert set(names) == ajv_formats.FORMAT_NAMES
    assert set(SAMPLES) | set(ajv_formats.NUMBER_FORMATS) == ajv_formats.FORMAT_NAMES


def test_string_formats_match_ajv_formats() -> None:
    rng = random.Random(20240601)
    cases: list[tuple[Any, Any]] = []
    for name, samples in SAMPLES.items():
        for sample in samples:
            cases += [({"format": name}, text) for text in [sample, *mutations(sample, rng, 40)]]
    expected = [verdict == "pass" for verdict, _ in ajv_verdicts(cases)]
    got = [ajv_formats.conforms(schema["format"], text) for schema, text in cases]
    wrong = [(c, e) for c, e, g in zip(cases, expected, got, strict=True) if e != g]
    assert wrong == []
    assert 0.1 < sum(expected) / len(expected) < 0.9  # both verdicts are well represented


def test_number_formats_and_other_types_match_ajv_formats() -> None:
    values: list[Any] = [0, 1.5, 2.0, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 1e300, "x", None]
    values += [True, [], {}]
    cases = [({"format": name}, v) for name in ajv_formats.FORMAT_NAMES for v in values]
    expected = [verdict == "pass" for verdict, _ in ajv_verdicts(cases)]
    got = [ajv_formats.conforms(schema["format"], v) for schema, v in cases]
    assert [c for c, e, g in zip(cases, expected, got, strict=True) if e != g] == []


def prop(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": schema}}


SCHEMA_CASES: list[tuple[Any, Any]] = [
    (prop({"format": "date-time"}), {"f": "yesterday at noon"}),
    (prop({"format": "uri"}), {"f": "not a uri"}),
    (prop({"type": "string", "format": "time"}), {"f": "25:99"}),
    (prop({"format": "uuid"}), {"f": "not-a-uuid"}),
    (prop({"type": "string", "format": "int32"}), {"f": "x"}),
    (prop({"format": "int32"}), {"f": 2**31}),
    (prop({"format": "colour"}), {"f": "red"}),
    ({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "array"}, [1]),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "array"}, [1]),
    ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array"}, [1]),
    (
        {"$ref": "#/definitions/s", "maxLength": 3, "definitions": {"s": {"type": "string"}}},
        "abcdef",
    ),
    ({"$ref": "#/definitions/s", "maxLength": 3, "definitions": {"s": {"type": "string"}}}, "ab"),
    ({"$ref": "#/definitions/missing"}, 1),
    ({"definitions": {"a": {"format": "colour"}}}, 1),
    ({"properties": {"a": {"$ref": "#/definitions/a"}}, "definitions": {"a": {"format": "x"}}}, {}),
    (prop({"type": "string", "pattern": "^\\d$"}), {"f": "٣"}),
    (prop({"type": "string", "pattern": "^\\d$"}), {"f": "3"}),
    (prop({"type": "string", "pattern": "^\\p{Lu}"}), {"f": "Émile"}),
    (prop({"type": "string", "pattern": "^\\p{Lu}"}), {"f": "émile"}),
    (prop({"type": "string", "pattern": "(("}), {"f": "x"}),
    (prop({"type": "string", "pattern": "\\-"}), {"f": "x"}),
    (prop({"type": "string", "pattern": "^.$"}), {"f": "😀"}),
    ({"type": "object", "patternProperties": {"^\\p{Ll}+$": {"type": "integer"}}}, {"é": "x"}),
    ({"type": "object", "patternProperties": {"^\\w+$": {"type": "integer"}}}, {"é": "x"}),
    (
        {
            "type": "object",
            "properties": {},
            "patternProperties": {"^a": {}},
            "additionalProperties": False,
        },
        {"ab": 1, "é": 2},
    ),
    ({"type": "object", "nullable": True}, None),
    ({"type": "object"}, None),
    ({"nullable": True}, None),
    ({"type": ["string", "null"], "nullable": False}, None),
    ({"type": "object", "foo": 1}, {}),
    ({"if": {"type": "string"}}, 1),
    ({"else": {"type": "string"}}, 1),
    ({"items": {"type": "string"}, "additionalItems": False}, ["a"]),
    (prop({"type": "string", "format": "regex"}), {"f": "\\p{Lu}"}),
    (prop({"type": "string", "format": "regex"}), {"f": "(("}),
    ({"type": "string", "minLength": 3}, "😀😀"),
    ({"enum": [1, 2]}, True),
    ({"type": "array", "uniqueItems": True}, [1, True]),
    ({"type": "object", "properties": {"x": {"type": "integer"}}}, {"x": 1.5}),
]


def test_schemas_compile_and_apply_as_ajv() -> None:
    """Verdicts agree everywhere; a failure's message and a compile error's text agree too."""
    cases = SCHEMA_CASES
    for (schema, data), want in zip(cases, ajv_verdicts(cases), strict=True):
        got = harness_verdict(schema, data)
        assert got[0] == want[0], (schema, data, want, got)
        if want[0] == "fail" or not want[1].startswith("Invalid regular expression"):
            assert got[1] == want[1], (schema, data)


def test_compile_problems_are_left_to_grading_and_meta_schema_errors_refuse_at_load() -> None:
    check_schema_value({"type": "object", "properties": {"c": {"format": "colour"}}})
    check_schema_value({"$schema": "https://json-schema.org/draft/2020-12/schema"})
    check_schema_value({"type": "string", "pattern": "^\\p{Lu}"})
    with pytest.raises(GraderError, match="invalid JSON schema"):
        check_schema_value({"type": "strnig"})

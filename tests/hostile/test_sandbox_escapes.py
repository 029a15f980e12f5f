"""One render cannot affect another: published escapes against the template sandbox.

Every escape of `sandbox_escapes.ESCAPES` is rendered as test data in a thread of its own
(so in realms of its own), between two renders of an author's templates, which must come
out the same; the escape's own render ends as the table says. The realm is then walked
from everything template code can reach: nothing there may be writable. An evaluation
whose first dataset row attacks must render every later row as if the attack had not
been there, and `env` reaches a prompt only by the names the prompt reads.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest

from evals.common import jsengine
from evals.common.templating import TemplateError, render
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite
from tests.hostile.sandbox_escapes import ESCAPES, Escape

ROOT = Path(__file__).resolve().parents[2]

# An author's templates: filters, loops, member lookups, defaults, literals and `env`.
VICTIMS: list[tuple[str, dict[str, Any], dict[str, str] | None]] = [
    ("{{ content }}|{{ question }}", {"question": "q1"}, None),
    (
        '{{ " a " | trim }}|{{ items | join(",") }}|{% for i in items %}{{ i }}{% endfor %}'
        "|{{ items | list | length }}|{{ items | sort(true) | join }}",
        {"items": [1, 2]},
        None,
    ),
    ("{{ obj | dump }}|{{ n }}|{{ obj.a }}|{{ obj }}", {"obj": {"a": 1}, "n": 2.5}, None),
    ("{{ env.VISIBLE }}|{{ [1, 2, 3] | first }}|{{ x | default('d') }}", {}, {"VISIBLE": "v"}),
    ("{% set o = {} %}[{{ o.content }}]|{{ 'abc' | upper }}|{{ nope.x }}", {}, None),
    ("{{ 'x' * 3 }}|{{ range(3) | join }}|{{ cycler(1, 2).next() }}", {}, None),
]


def _victims() -> list[str]:
    rendered = []
    for template, variables, env in VICTIMS:
        try:
            rendered.append(render(template, variables, env))
        except TemplateError as exc:
            rendered.append(f"error: {exc}")
    return rendered


def _in_new_thread(work: Any) -> Any:
    """`work()` on a thread of its own: its realms are new, so each escape is tried alone."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(120)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _attack(escape: Escape, marker: Path) -> dict[str, Any]:
    before = _victims()
    try:
        text = render(
            escape.template.replace("MARK", str(marker)), {"question": "q"}, None, test_data=True
        )
        outcome = "inert"
    except TemplateError as exc:
        text, outcome = str(exc), "refused"
    after = [_victims() for _ in range(2)]
    return {"before": before, "after": after, "outcome": outcome, "text": text}


@pytest.mark.parametrize("escape", ESCAPES, ids=[e.id for e in ESCAPES])
def test_an_escape_changes_no_later_render(escape: Escape, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    result = _in_new_thread(lambda: _attack(escape, marker))
    assert result["after"] == [result["before"], result["before"]]
    assert result["outcome"] == escape.outcome, result["text"]
    assert "PWNED" not in result["text"]
    assert not marker.exists()


def test_the_docs_list_every_escape_with_its_outcome() -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    for escape in ESCAPES:
        row = re.search(rf"^\| `{re.escape(escape.id)}` \|.*$", text, re.M)
        assert row is not None, f"docs/security.md has no row for {escape.id}"
        assert f"| {escape.outcome} |" in row.group(0), row.group(0)


# Walks, from inside a render, everything template code can reach that outlives the render
# (the global object, the environment behind `this.env`, the compiled blocks) and answers
# what is still writable, which objects keep state a frozen object can still change (a
# Map's entries, a Date's time: found by the built-ins' own brand checks), and which
# accessors have setters.
_WALK = """
var roots = [globalThis, this.env, this.blocks.b[0]];
var seen = new Set(), stack = roots.slice(), open = [], slots = [], setters = [];
function getter(C, key) { return Object.getOwnPropertyDescriptor(C.prototype, key).get; }
var TypedArray = Object.getPrototypeOf(Uint8Array);
var brands = {
  Map: function (o) { Map.prototype.has.call(o, 0); },
  Set: function (o) { Set.prototype.has.call(o, 0); },
  WeakMap: function (o) { WeakMap.prototype.has.call(o, {}); },
  WeakSet: function (o) { WeakSet.prototype.has.call(o, {}); },
  WeakRef: function (o) { WeakRef.prototype.deref.call(o); },
  Date: function (o) { Date.prototype.getTime.call(o); },
  ArrayBuffer: function (o) { getter(ArrayBuffer, 'byteLength').call(o); },
  SharedArrayBuffer: function (o) { getter(SharedArrayBuffer, 'byteLength').call(o); },
  DataView: function (o) { getter(DataView, 'byteLength').call(o); },
  TypedArray: function (o) { getter(TypedArray, 'length').call(o); },
  FinalizationRegistry: function (o) { FinalizationRegistry.prototype.unregister.call(o, {}); },
};
function name(o) {
  return typeof o === 'function' ? o.name : String(o.constructor && o.constructor.name);
}
while (stack.length) {
  var o = stack.pop();
  if ((typeof o !== 'object' || o === null) && typeof o !== 'function') continue;
  if (seen.has(o)) continue;
  seen.add(o);
  if (!Object.isFrozen(o)) open.push(name(o));
  Object.keys(brands).forEach(function (brand) {
    try { brands[brand](o); slots.push(brand); } catch (e) {}
  });
  stack.push(Object.getPrototypeOf(o));
  Reflect.ownKeys(o).forEach(function (k) {
    var d = Object.getOwnPropertyDescriptor(o, k);
    if (!d) return;
    if ('value' in d) { stack.push(d.value); return; }
    if (d.set && (d.set.name || '').indexOf('set ') === 0) setters.push(name(o) + '.' + String(k));
    stack.push(d.get);
    stack.push(d.set);
  });
}
return JSON.stringify({count: seen.size, open: open, slots: slots, setters: setters.sort()});
"""

# Native setters that act on their receiver only (and throw on a frozen one).
_RECEIVER_SETTERS = [
    "Error.stack",
    "Iterator.Symbol(Symbol.toStringTag)",
    "Object.__proto__",
]


def test_nothing_template_code_can_reach_is_writable() -> None:
    import json

    source = "{% block b %}x{% endblock %}{{ range.constructor(code)() }}"

    def walk() -> dict[str, Any]:
        return dict(json.loads(render(source, {"code": _WALK}, None).removeprefix("x")))

    found = _in_new_thread(walk)
    assert found["count"] > 1000  # the intrinsics, Nunjucks and its environments
    assert found["open"] == []
    assert found["slots"] == []
    assert found["setters"] == _RECEIVER_SETTERS


def test_the_scripts_realm_keeps_its_builtins_frozen() -> None:
    def attack() -> tuple[Any, Any]:
        jsengine.call("assertion", "Array.prototype.includes = () => true;\nreturn true", "x", {})
        return (
            jsengine.call("assertion", "[1].includes(2) === false", "x", {}),
            jsengine.call("fn", ["process"], "return typeof __evals + typeof __evalsBridge", []),
        )

    assert _in_new_thread(attack) == (True, "undefinedundefined")


def test_an_attacking_row_leaves_later_rows_prompts_unchanged(tmp_path: Path) -> None:
    """A CSV cell that would rewrite every later prompt (through Nunjucks's runtime, the
    context's filters, or the output limit) is its own row's business only."""
    attacks = [
        '{{ range.constructor("nunjucks.runtime.suppressValue = function () '
        "{ return 'PWNED' }; return 'a'\")() }}",
        "{{ range.constructor(\"this.env.filters.trim = function () { return 'PWNED' }; "
        "return 'a'\")() }}",
        "{{ range.constructor(\"__evals('setMaxOutput', '[0]'); return 'a'\")() }}",
    ]
    rows = [f'"{a.replace(chr(34), chr(34) * 2)}"' for a in attacks]
    rows += [f"plain {i}" for i in range(6)]
    (tmp_path / "data.csv").write_text("question\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(
        "prompts: ['Q: {{ question | trim }} {% if question %}!{% endif %}']\n"
        "providers: [echo]\nevaluateOptions: {maxConcurrency: 1}\ntests: file://data.csv\n",
        encoding="utf-8",
    )
    result = run_evaluation(load_suite(tmp_path / "suite.yaml"), RunOptions(use_store=False))
    prompts = sorted(r.prompt for r in result.records if r.prompt.startswith("Q: plain"))
    assert prompts == [f"Q: plain {i} !" for i in range(6)]
    assert all("PWNED" not in r.prompt for r in result.records)


def test_env_reaches_a_prompt_only_by_the_names_it_reads() -> None:
    env = {"MODEL": "m1", "SECRET_TOKEN": "s3cr3t-value"}
    leak = '{{ range.constructor("return JSON.stringify(this.ctx.env)")() }}'
    assert render("{{ env.MODEL }} " + leak, {}, env) == 'm1 {"MODEL":"m1"}'
    assert render('{{ env["MODEL"] }} ' + leak, {}, env) == 'm1 {"MODEL":"m1"}'
    # "env" as a word in the text, or in a var's name, is not a reference
    assert render("the environment: {{ environment }} " + leak, {"environment": "e"}, env) == (
        "the environment: e "
    )
    # reading env as a whole is the author's choice: the whole environment
    assert "s3cr3t-value" in render("{{ env | dump }}", {}, env)


def test_a_dataset_value_never_sees_env() -> None:
    env = {"SECRET_TOKEN": "s3cr3t-value"}
    value = '{{ env.SECRET_TOKEN }}{{ range.constructor("return typeof this.ctx.env")() }}'
    assert render(value, {}, None, test_data=True) == "undefined"
    assert render("{{ q }}", {"q": value}, env) == value


def test_the_output_limit_holds_after_an_attack_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsengine._limits, "output_chars", 1000)
    attack = "{{ range.constructor(\"__evals('setMaxOutput', '[0]'); return 'a'\")() }}"

    def after_attack() -> str:
        with pytest.raises(TemplateError):
            render(attack, {}, None, test_data=True)
        with pytest.raises(TemplateError, match="longer than 1000 characters") as info:
            render("{% for i in range(2000) %}x{% endfor %}", {}, None)
        return str(info.value)

    assert "1000" in _in_new_thread(after_attack)

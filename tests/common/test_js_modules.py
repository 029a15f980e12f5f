"""ES modules and timers in the JavaScript sandbox give what Node gives.

Each module below is written to a file and loaded twice: by the sandbox (`evals.common.
jsfiles`, the modules realm rewriting it into a CommonJS body) and by Node's own `import()`;
its exported `probe()` must answer the same in both. The timer programs likewise resolve
with the order their callbacks ran in, which must be Node's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from evals.common import jsengine, jsfiles

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="needs node on PATH to compare with")

MODULES = {
    "declarations.mjs": """
        export function double(x) { return 2 * x; }
        export const { a, b: [first, ...others] } = { a: 1, b: [2, 3, 4] };
        export class Counter { constructor() { this.n = 1; } }
        export function probe() { return [double(a), first, others, new Counter().n]; }
    """,
    "renamed.mjs": """
        const hidden = "h";
        function helper() { return "x"; }
        export { hidden as shown, helper, helper as "quoted name" };
        export function probe() { return [hidden, helper()]; }
    """,
    "live.mjs": """
        export let count = 0;
        export function bump() { count += 1; return count; }
        export function probe() { bump(); bump(); return count; }
    """,
    "meta.mjs": """
        export function probe() {
          return [typeof import.meta.url, import.meta.url.endsWith("meta.mjs")];
        }
    """,
    "strict.mjs": """
        export function probe() { return (function () { return this === undefined; })(); }
    """,
    "plain.js": """
        const rest = (xs) => xs.slice(1);
        export function probe() { return rest([1, 2, 3]); }
    """,
}

DEFAULTS = {
    "default_function.mjs": "export default function (x) { return x + 1; }\n",
    "default_class.mjs": "export default class { value() { return 7; } }\n",
    "default_expression.mjs": "const base = 10;\nexport default base * 3;\n",
}


def _node(script: str, folder: Path) -> object:
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", script],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


@needs_node
def test_es_modules_export_what_node_exports(tmp_path):
    for name, source in MODULES.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    probes = {name: jsfiles.call_function(tmp_path / name, "probe", []) for name in sorted(MODULES)}
    script = "const out = {};\n" + "".join(
        f"out[{json.dumps(name)}] = (await import({json.dumps('./' + name)})).probe();\n"
        for name in sorted(MODULES)
    )
    assert probes == _node(script + "console.log(JSON.stringify(out));", tmp_path)


@needs_node
def test_a_default_export_is_the_module_promptfoo_finds(tmp_path):
    for name, source in DEFAULTS.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    script = (
        "const f = (await import('./default_function.mjs')).default;\n"
        "console.log(JSON.stringify(f(1)));\n"
    )
    assert jsfiles.call_function(tmp_path / "default_function.mjs", None, [1]) == _node(
        script, tmp_path
    )
    # a default class or number is the module too: the class is called as the function
    # (and refuses to be called without new), the number is no function at all
    with pytest.raises(jsengine.JavaScriptError, match="with 'new'"):
        jsfiles.call_function(tmp_path / "default_class.mjs", None, [])
    with pytest.raises(jsengine.JavaScriptError, match="must export a function"):
        jsfiles.call_function(tmp_path / "default_expression.mjs", None, [])


def test_a_module_importing_another_fails_when_it_runs(tmp_path):
    path = tmp_path / "imports.mjs"
    path.write_text("import fs from 'node:fs';\nexport default () => fs;\n", encoding="utf-8")
    with pytest.raises(jsengine.JavaScriptError, match="not available in the JavaScript sandbox"):
        jsfiles.call_function(path, None, [])


def test_a_commonjs_file_mentioning_export_is_left_as_commonjs(tmp_path):
    path = tmp_path / "words.js"
    path.write_text(
        "// we export nothing by keyword; import is only a word here\n"
        "module.exports = (s) => 'import/export ' + s;\n",
        encoding="utf-8",
    )
    assert jsfiles.call_function(path, None, ["ok"]) == "import/export ok"


# Delays far enough apart that Node's order does not depend on how busy the machine is.
TIMERS = """
const order = [];
const done = new Promise((resolve) => {
  setTimeout(() => order.push("late"), 250);
  setTimeout(() => order.push("soon-a"), 100);
  setTimeout(() => order.push("soon-b"), 100);
  const cleared = setTimeout(() => order.push("cleared"), 1);
  clearTimeout(cleared);
  setImmediate(() => order.push("immediate"));
  queueMicrotask(() => order.push("micro"));
  Promise.resolve().then(() => order.push("then"));
  let ticks = 0;
  const id = setInterval(() => {
    ticks += 1;
    order.push("tick" + ticks);
    if (ticks === 3) clearInterval(id);
  }, 150);
  setTimeout(() => resolve(order), 1000);
});
"""


@needs_node
def test_timers_fire_in_nodes_order(tmp_path):
    expected = _node(TIMERS + "console.log(JSON.stringify(await done));", tmp_path)
    got = jsengine.call("fn", ["output", "context", "process"], TIMERS + "return done;", [0, {}])
    assert got == expected


def test_a_timer_left_behind_does_not_run_in_the_next_call():
    body = "globalThis.hits = (globalThis.hits || 0); setTimeout(() => { hits += 1; }, 1); return 1"
    jsengine.call("fn", ["output", "context", "process"], body, [0, {}])
    waited = "return new Promise((r) => setTimeout(() => r(globalThis.hits), 5))"
    assert jsengine.call("fn", ["output", "context", "process"], waited, [0, {}]) == 0

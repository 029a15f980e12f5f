"""Published template and JavaScript sandbox escapes, replayed against the template sandbox.

Each escape is rendered as a dataset value would be (test data, no `env`), then the
victim templates (an author's prompts: filters, loops, vars, `env`) must render exactly as
they did before it, and nothing the escape aimed at may be reached. `outcome` is what the
escape's own render ends with: "refused" (a TemplateError: a `template_error` row) or
"inert" (it renders, reaching nothing). docs/security.md lists every escape with its
outcome; tests/hostile/test_sandbox_escapes.py checks both.

Sources:
- [disse.cting] "Sandbox break-out: Nunjucks template engine", disse.cting.org, 2016
  (the `range.constructor` payload PortSwigger's and HackTricks' SSTI pages list)
- [portswigger] PortSwigger Web Security Academy, server-side template injection
- [nunjucks-1331] mozilla/nunjucks issue 1331: prototype pollution reaching later renders
- [vm2-444] patriksimek/vm2 issue 444: WeakMap.prototype.set and Error.prepareStackTrace
- [vm2-184] patriksimek/vm2 issue 184: `__lookupGetter__("__proto__")`
- [vm2-175] patriksimek/vm2 issue 175: a getter defined on Object.prototype
- [vm2-199] patriksimek/vm2 issue 199: an error prototype hijacked, then a stack overflow
- [vm2-562] patriksimek/vm2 issue 562: Array species self-return
- [vm2-r4fx] GHSA-r4fx-v8hh-22mv (vm2): a FinalizationRegistry callback outliving its timeout
- [sandboxjs-31] nyariv/SandboxJS issue 31 (CVE-2025-34146): `__defineGetter__` on
  Object.prototype through `"".sub.__proto__.__proto__`
- [static-eval-32] browserify/static-eval issue 32: `__defineGetter__("toString", ...)`
- [safe-eval-31] hacksparrow/safe-eval issue 31: the error of a stack overflow
- [gf3-65] gf3/sandbox issue 65 and denoland/deno issue 30351: prepareStackTrace's getThis
- [evals] found against evals itself: the output limit, the context lookup, the filters
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Escape:
    """One escape: its id, where it was published, the template, and its outcome."""

    id: str
    source: str
    template: str
    outcome: str  # "refused" or "inert"
    aims: str  # what it would change or reach, for the docs table


def _js(code: str) -> str:
    """A template running `code` through the Function constructor Nunjucks exposes."""
    return "{{ range.constructor(" + repr(code) + ")() }}"


ESCAPES: tuple[Escape, ...] = (
    Escape(
        "nunjucks-rce",
        "disse.cting",
        "{{ range.constructor(\"return global.process.mainModule.require('child_process')"
        ".execSync('touch MARK')\")() }}",
        "refused",
        "run a command through Node's process",
    ),
    Escape(
        "constructor-process-env",
        "portswigger",
        "{{ this.constructor.constructor('return process.env')() }}",
        "refused",
        "read the process environment",
    ),
    Escape(
        "constructor-this",
        "portswigger",
        "{{ constructor.constructor('return this')() }}",
        "inert",
        "reach the global object from a bare name",
    ),
    Escape(
        "globalthis-new-global",
        "evals",
        _js("globalThis.content = 'PWNED'; return typeof content"),
        "inert",
        "add a global every later render sees",
    ),
    Escape(
        "prototype-pollution-content",
        "nunjucks-1331",
        _js("Object.prototype.content = 'PWNED'"),
        "inert",
        "make `{{ content }}` print attacker text in every later render",
    ),
    Escape(
        "proto-literal-pollution",
        "nunjucks-1331",
        _js("({}).__proto__.content = 'PWNED'"),
        "inert",
        "the same through `__proto__`",
    ),
    Escape(
        "define-getter-from-template",
        "sandboxjs-31",
        '{{ "".sub.__proto__.__proto__.__defineGetter__("content", '
        "range.constructor(\"return 'PWNED'\")) }}",
        "inert",
        "a getter on Object.prototype, without writing any JavaScript statement",
    ),
    Escape(
        "define-getter-tostring",
        "static-eval-32",
        _js("({})['__proto__']['__defineGetter__']('toString', ({})['constructor'])"),
        "refused",
        "replace how every object prints",
    ),
    Escape(
        "lookup-getter-proto",
        "vm2-184",
        _js(
            "var p = Object.prototype.__lookupGetter__('__proto__').call(Function); "
            "p.constructor = null; return 'x'"
        ),
        "refused",
        "reach a prototype through `__lookupGetter__` and overwrite it",
    ),
    Escape(
        "object-prototype-getter",
        "vm2-175",
        _js("Object.defineProperty(Object.prototype, 'get', {get: function () { return 1 }})"),
        "refused",
        "a getter every property descriptor read would run",
    ),
    Escape(
        "prepare-stack-trace",
        "gf3-65",
        _js("Error.prepareStackTrace = function (_, c) { return c[0].getThis() }; return 'x'"),
        "inert",
        "see the frames (and `this`) of later renders' errors",
    ),
    Escape(
        "weakmap-set-and-stack",
        "vm2-444",
        _js(
            "var set = WeakMap.prototype.set; "
            "WeakMap.prototype.set = function (k, v) { return set.call(this, k, k) }; "
            "return 'x'"
        ),
        "inert",
        "hook a built-in every later caller uses",
    ),
    Escape(
        "error-prototype-then-overflow",
        "vm2-199",
        _js(
            "RangeError.prototype.c = function (x) { return x }; "
            "function r() { return r() } return r()"
        ),
        "refused",
        "plant a method on errors, then raise one by a stack overflow",
    ),
    Escape(
        "stack-overflow-error",
        "safe-eval-31",
        _js(
            "function s() { new Error().stack; s() } "
            "try { s() } catch (e) { return e.constructor.constructor('return process')() }"
        ),
        "refused",
        "reach the host through the error a stack overflow throws",
    ),
    Escape(
        "array-species",
        "vm2-562",
        _js(
            "Object.defineProperty(Array, Symbol.species, {get: function () { return Object }});"
            " return 'x'"
        ),
        "refused",
        "change what every later `map`, `filter` and `slice` builds",
    ),
    Escape(
        "string-trim-override",
        "evals",
        _js("String.prototype.trim = function () { return 'PWNED' }; return 'x'"),
        "inert",
        "change the author's `trim` filter through the built-in it calls",
    ),
    Escape(
        "json-parse-override",
        "evals",
        _js("JSON.parse = function () { return {question: 'PWNED'} }; return 'x'"),
        "inert",
        "rewrite the vars of every later render as they are read",
    ),
    Escape(
        "function-call-override",
        "evals",
        _js("Function.prototype.call = function () { return 'PWNED' }; return 'x'"),
        "inert",
        "hijack every later function call",
    ),
    Escape(
        "to-primitive-getter",
        "evals",
        _js(
            "Object.defineProperty(Object.prototype, Symbol.toPrimitive, "
            "{value: function () { return 'PWNED' }}); return 'x'"
        ),
        "refused",
        "change how every object prints",
    ),
    Escape(
        "runtime-context-lookup",
        "evals",
        _js(
            "var r = nunjucks.runtime, lookup = r.contextOrFrameLookup; "
            "r.contextOrFrameLookup = function (c, f, n) { "
            "return n === 'question' ? 'PWNED' : lookup(c, f, n) }; return 'x'"
        ),
        "inert",
        "hook the context lookup, so the next template reads what the attacker chose",
    ),
    Escape(
        "runtime-suppress-value",
        "evals",
        _js("nunjucks.runtime.suppressValue = function () { return 'PWNED' }; return 'x'"),
        "inert",
        "rewrite everything `{{ }}` prints",
    ),
    Escape(
        "this-env-filter",
        "evals",
        "{{ range.constructor(\"this.env.filters.trim = function () { return 'PWNED' }; "
        "return 'x'\")() }}",
        "inert",
        "replace the author's `trim` filter through the render's context (`this`)",
    ),
    Escape(
        "this-env-add-filter",
        "evals",
        "{{ range.constructor(\"this.env.addFilter('trim', function () { return 'PWNED' }); "
        "return 'x'\")() }}",
        "refused",
        "the same through Environment.addFilter",
    ),
    Escape(
        "this-env-globals",
        "evals",
        "{{ range.constructor(\"this.env.globals.content = 'PWNED'; return 'x'\")() }}",
        "inert",
        "add a global every later template sees",
    ),
    Escape(
        "template-blocks",
        "evals",
        "{% block b %}x{% endblock %}"
        '{{ range.constructor("this.blocks.b[0].constructor = null; '
        "Object.setPrototypeOf(this.blocks.b[0], null); return 'x'\")() }}",
        "refused",
        "change a compiled template through its blocks",
    ),
    Escape(
        "jinja-compat",
        "evals",
        _js("nunjucks.installJinjaCompat(); return 'x'"),
        "refused",
        "patch the parser and runtime for every later template",
    ),
    Escape(
        "bridge-output-limit",
        "evals",
        _js("__evals('setMaxOutput', '[0]'); return 'x'"),
        "refused",
        "turn the output limit off through the host bridge",
    ),
    Escape(
        "bridge-render",
        "evals",
        _js("return __render('{{ 1 }}', '{}', null, false, false)"),
        "refused",
        "call the host's render entry point",
    ),
    Escape(
        "bridge-host-filter",
        "evals",
        "{{ this.constructor.constructor('return globalThis')().__host_filter }}",
        "refused",
        "call Python through the filters' callable",
    ),
    Escape(
        "promise-job",
        "evals",
        _js(
            "Promise.resolve().then(function () { Object.prototype.content = 'PWNED' }); return 'x'"
        ),
        "inert",
        "run code after the render, when the next one has begun",
    ),
    Escape(
        "finalization-callback",
        "vm2-r4fx",
        _js(
            "var r = new FinalizationRegistry(function () { Object.prototype.content = 'PWNED' });"
            " for (var i = 0; i < 1000; i++) r.register({}, i); return 'x'"
        ),
        "inert",
        "run code from a garbage collection after the render",
    ),
    Escape(
        "recursion",
        "evals",
        "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}",
        "refused",
        "exhaust the stack",
    ),
    Escape(
        "huge-range",
        "evals",
        "{% for i in range(0, 1000000000000) %}x{% endfor %}",
        "refused",
        "exhaust memory building a list",
    ),
    Escape(
        "huge-string",
        "evals",
        _js("return 'x'.repeat(1 << 29)"),
        "refused",
        "exhaust memory",
    ),
    Escape(
        "jinja-cycler-globals",
        "portswigger",
        "{{ cycler.__init__.__globals__.os.popen('touch MARK').read() }}",
        "refused",
        "Jinja2's route to `os` (Nunjucks has none)",
    ),
    Escape(
        "dataset-env-read",
        "evals",
        "{{ env.HOSTILE_TOKEN }}",
        "inert",
        "read the environment from a dataset value",
    ),
)

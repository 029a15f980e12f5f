"""Hostile suite files: wrong types for every config key, bad YAML, bombs, encodings."""

from __future__ import annotations

from tests.hostile.builders import GOOD_AGENT, correct_runs, dedent, line_of
from tests.hostile.harness import Case, ErrorRow, UsageError

HEAD = """\
prompts: ['{{q}}']
providers:
  - {id: file://good.py, label: good}
"""
TEST = """\
tests:
  - vars: {q: hi}
    assert: [{type: contains, value: ok}]
"""


def bad_suite(
    id: str,
    text: str,
    needle: str,
    *mentions: str,
    argv: tuple[str, ...] = ("run", "suite.yaml"),
    mode: str = "inprocess",
    limit_s: float = 20.0,
    files: dict[str, str | bytes] | None = None,
) -> Case:
    """A suite rejected at the line holding `needle`, naming `mentions` in the message."""
    return Case(
        id=id,
        category="suites",
        files={"suite.yaml": text, "good.py": GOOD_AGENT, **(files or {})},
        expect=UsageError(("suite.yaml", *mentions), line=line_of(text, needle)),
        argv=argv,
        mode=mode,
        limit_s=limit_s,
    )


def with_options(options: str) -> str:
    """The standard suite with an `evaluateOptions` block."""
    return HEAD + f"evaluateOptions: {options}\n" + TEST


def with_gates(gates: str) -> str:
    """The standard suite with a `gates` block (good is the only agent)."""
    return HEAD + TEST + f"gates: {gates}\n"


def with_test(test: str) -> str:
    """The standard head with one test written out."""
    return HEAD + "tests:\n" + dedent(test)


REF_BOMB = (
    "a: [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(
        f"{name}: [" + ", ".join(["{$ref: '#/" + below + "'}"] * 9) + "]\n"
        for below, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "prompts: ['{{q}}']\n"
    + "providers: [{id: file://good.py, label: good}]\n"
    + "tests: [{vars: {q: hi, big: {$ref: '#/i'}}}]\n"
)
"""Nested `$ref`s, each list holding nine references to the one above: billions of values."""

ALIAS_BOMB = dedent(
    """
    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
    i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
    prompts: ['{{q}}']
    providers: [{id: file://good.py, label: good}]
    tests:
      - vars: {q: *i}
    """
)

ALIAS_BOMB_IN_METADATA = HEAD + dedent(
    """
    tests:
      - vars: {q: hi}
        metadata:
          a: &a [x, x, x, x, x, x, x, x, x, x]
          b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
          c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
          d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
          e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
          f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
          g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
          h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
    """
)

# The author's prompt loops 10^10 times. (In a var, the loop would not render at all: the
# var reads `i` and `j`, which no test defines, so promptfoo leaves it as written.)
PROMPT_LOOP = (
    "prompts: ['{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
    "{% endfor %}{{q}}']\n"
    "providers:\n  - {id: file://good.py, label: good}\n" + TEST
)

# Types and ranges of every key of docs (evaluateOptions, env, scenarios, vars, gates...).
CASES = [
    bad_suite(
        "providers-empty",
        HEAD.replace("providers:\n  - {id: file://good.py, label: good}", "providers: []") + TEST,
        "providers: []",
        "providers",
    ),
    bad_suite(
        "tests-empty",
        HEAD + "tests: []\n",
        "tests: []",
        "tests",
    ),
    bad_suite(
        "repeat-zero",
        with_options("{repeat: 0}"),
        "repeat",
        "repeat",
    ),
    bad_suite(
        "repeat-negative",
        with_options("{repeat: -1}"),
        "repeat",
        "repeat",
    ),
    bad_suite(
        "repeat-fraction",
        with_options("{repeat: 2.5}"),
        "repeat",
        "repeat",
    ),
    bad_suite(
        "repeat-boolean",
        with_options("{repeat: true}"),
        "repeat",
        "repeat",
    ),
    bad_suite(
        "repeat-text",
        with_options("{repeat: three}"),
        "repeat",
        "repeat",
    ),
    bad_suite(
        "max-concurrency-zero",
        with_options("{maxConcurrency: 0}"),
        "maxConcurrency",
        "maxConcurrency",
    ),
    bad_suite(
        "max-concurrency-negative",
        with_options("{maxConcurrency: -4}"),
        "maxConcurrency",
        "maxConcurrency",
    ),
    bad_suite(
        "timeout-negative",
        with_options("{timeoutMs: -5}"),
        "timeoutMs",
        "timeoutMs",
    ),
    bad_suite(
        "timeout-nan",
        with_options("{timeoutMs: .nan}"),
        "timeoutMs",
        "timeoutMs",
    ),
    bad_suite(
        "timeout-infinite",
        with_options("{timeoutMs: .inf}"),
        "timeoutMs",
        "timeoutMs",
    ),
    Case(
        id="timeout-zero-means-none",
        category="suites",
        files={"suite.yaml": with_options("{timeoutMs: 0}"), "good.py": GOOD_AGENT},
        expect=correct_runs("timeoutMs: 0 means no timeout, as in promptfoo", 1),
    ),
    bad_suite(
        "delay-negative",
        with_options("{delay: -1}"),
        "delay",
        "delay",
    ),
    bad_suite(
        "evaluate-options-list",
        HEAD + "evaluateOptions: [1, 2]\n" + TEST,
        "evaluateOptions",
        "evaluateOptions",
    ),
    bad_suite(
        "env-list",
        HEAD + "env: [A, B]\n" + TEST,
        "env:",
        "env",
    ),
    bad_suite(
        "env-string",
        HEAD + "env: production\n" + TEST,
        "env:",
        "env",
    ),
    bad_suite(
        "env-nested-mapping",
        HEAD + "env:\n  TOKEN: {nested: 1}\n" + TEST,
        "TOKEN",
        "env",
    ),
    bad_suite(
        "scenarios-string",
        HEAD + TEST + "scenarios: weekly\n",
        "scenarios",
        "scenarios",
    ),
    bad_suite(
        "scenarios-list-of-numbers",
        HEAD + TEST + "scenarios: [1, 2]\n",
        "scenarios",
        "scenarios",
    ),
    bad_suite(
        "scenario-config-string",
        HEAD + TEST + "scenarios:\n  - config: fast\n    tests: [{vars: {q: a}}]\n",
        "config: fast",
        "config",
    ),
    bad_suite(
        "vars-string",
        with_test("  - vars: hello\n"),
        "vars: hello",
        "vars",
        argv=("validate", "suite.yaml"),  # a vars file to promptfoo: run gives no vars
    ),
    bad_suite(
        "vars-list",
        with_test("  - vars: [1, 2]\n"),
        "vars: [1, 2]",
        "vars",
    ),
    bad_suite(
        "test-threshold-text",
        with_test("  - vars: {q: hi}\n    threshold: high\n"),
        "threshold",
        "threshold",
    ),
    bad_suite(
        "test-threshold-nan",
        with_test("  - vars: {q: hi}\n    threshold: .nan\n"),
        "threshold",
        "threshold",
    ),
    bad_suite(
        "assert-weight-text",
        with_test(
            "  - vars: {q: hi}\n    assert:\n      - {type: contains, value: ok, weight: heavy}\n"
        ),
        "weight",
        "weight",
    ),
    bad_suite(
        "assert-weight-negative",
        with_test(
            "  - vars: {q: hi}\n    assert:\n      - {type: contains, value: ok, weight: -2}\n"
        ),
        "weight",
        "weight",
    ),
    bad_suite(
        "assert-weight-nan",
        with_test(
            "  - vars: {q: hi}\n    assert:\n      - {type: contains, value: ok, weight: .nan}\n"
        ),
        "weight",
        "weight",
    ),
    bad_suite(
        "assert-threshold-text",
        with_test(
            "  - vars: {q: hi}\n    assert:\n      - {type: similar, value: ok, threshold: x}\n"
        ),
        "threshold",
        "threshold",
    ),
    Case(
        id="assert-not-a-mapping",
        category="suites",
        files={
            "suite.yaml": with_test("  - vars: {q: hi}\n    assert: [contains]\n"),
            "good.py": GOOD_AGENT,
        },
        expect=UsageError(("suite.yaml", "type"), line=(5, 6)),
    ),
    bad_suite(
        "assert-list-not-a-list",
        with_test("  - vars: {q: hi}\n    assert: {type: contains, value: ok}\n"),
        "assert:",
        "list",
    ),
    bad_suite(
        "test-metadata-string",
        with_test("  - vars: {q: hi}\n    metadata: important\n"),
        "metadata",
        "metadata",
    ),
    bad_suite(
        "test-options-string",
        with_test("  - vars: {q: hi}\n    options: fast\n"),
        "options",
        "options",
    ),
    Case(
        id="priority-unknown",
        category="suites",
        files={
            "suite.yaml": with_test("  - vars: {q: hi}\n    metadata: {priority: P9}\n"),
            "good.py": GOOD_AGENT,
        },
        expect=UsageError(("suite.yaml", "priority"), line=(5, 6)),
    ),
    bad_suite(
        "gates-max-cost-ratio-negative",
        with_gates("{max_cost_ratio: -1}"),
        "max_cost_ratio",
        "max_cost_ratio",
    ),
    bad_suite(
        "gates-max-latency-ratio-infinite",
        with_gates("{max_latency_ratio: .inf}"),
        "max_latency_ratio",
        "max_latency_ratio",
    ),
    bad_suite(
        "gates-min-repeats-fraction",
        with_gates("{min_repeats: 0.5}"),
        "min_repeats",
        "min_repeats",
    ),
    bad_suite(
        "gates-min-repeats-text",
        with_gates("{min_repeats: two}"),
        "min_repeats",
        "min_repeats",
    ),
    bad_suite(
        "gates-repeat-zero",
        with_gates("{repeat: 0}"),
        "repeat",
        "repeat",
    ),
    bad_suite(
        "gates-environment-repeat-negative",
        with_gates("{environments: {pr: {repeat: -3}}}"),
        "environments",
        "repeat",
        argv=("run", "suite.yaml", "--env", "pr"),
    ),
    bad_suite(
        "gates-confidence-one",
        with_gates("{confidence: 1.0}"),
        "confidence",
        "confidence",
    ),
    bad_suite(
        "gates-confidence-zero",
        with_gates("{confidence: 0}"),
        "confidence",
        "confidence",
    ),
    bad_suite(
        "gates-boolean-as-text",
        with_gates("{block_p0_regressions: 'yes'}"),
        "block_p0_regressions",
        "block_p0_regressions",
    ),
    bad_suite(
        "gates-per-tag-number",
        with_gates("{per_tag: {golden: 5}}"),
        "per_tag",
        "per_tag",
    ),
    bad_suite(
        "gates-tags-mapping",
        with_gates("{tags: {golden: 1}}"),
        "tags",
        "tags",
    ),
    bad_suite(
        "gates-min-pass-rate-text",
        with_gates("{min_pass_rate: high}"),
        "min_pass_rate",
        "min_pass_rate",
    ),
    bad_suite(
        "gates-unknown-key", with_gates("{min_pass_rat: 0.5}"), "min_pass_rat", "min_pass_rate"
    ),
    bad_suite(
        "gates-list",
        HEAD + TEST + "gates: [min_pass_rate]\n",
        "gates",
        "gates",
    ),
    bad_suite(
        "prompts-empty",
        "prompts: []\nproviders: [{id: file://good.py, label: good}]\n" + TEST,
        "prompts",
        "prompts",
    ),
    bad_suite(
        "prompts-number",
        "prompts: 5\nproviders: [{id: file://good.py, label: good}]\n" + TEST,
        "prompts",
        "prompts",
    ),
    bad_suite(  # an unclosed block; an unclosed {{ is text (prompt-partial-tag-is-text)
        "prompt-template-unclosed",
        "prompts: ['{% if q %}{{q}}']\nproviders: [{id: file://good.py, label: good}]\n" + TEST,
        "prompts",
        "prompt",
    ),
    bad_suite(
        "provider-id-number",
        "prompts: ['{{q}}']\nproviders:\n  - {id: 5, label: x}\n" + TEST,
        "id: 5",
        "provider",
    ),
    bad_suite(
        "provider-without-id",
        "prompts: ['{{q}}']\nproviders:\n  - {label: x, config: {a: 1}}\n" + TEST,
        "label: x",
        "provider",
    ),
    bad_suite(
        "provider-delay-text",
        "prompts: ['{{q}}']\nproviders:\n  - {id: file://good.py, delay: slow}\n" + TEST,
        "delay",
        "delay",
    ),
    bad_suite(
        "provider-config-string",
        "prompts: ['{{q}}']\nproviders:\n  - {id: file://good.py, config: fast}\n" + TEST,
        "config",
        "config",
    ),
    bad_suite(
        "provider-labels-duplicate",
        "prompts: ['{{q}}']\nproviders:\n  - {id: file://good.py, label: a}\n"
        "  - {label: a, id: file://good.py}\n" + TEST,
        "{label: a",
        "label",
    ),
    bad_suite(
        "default-test-list",
        HEAD + "defaultTest: [a]\n" + TEST,
        "defaultTest",
        "defaultTest",
    ),
    bad_suite(
        "default-test-vars-number",
        HEAD + "defaultTest: {vars: 5}\n" + TEST,
        "defaultTest",
        "vars",
    ),
    bad_suite(
        "nunjucks-filter-missing-file",
        HEAD + "nunjucksFilters: {shout: file://missing.py}\n" + TEST,
        "nunjucksFilters",
        "missing.py",
    ),
    bad_suite(
        "derived-metrics-bad",
        HEAD + TEST + "derivedMetrics: [{name: f1, value: 'import os'}]\n",
        "derivedMetrics",
        "f1",
    ),
    bad_suite(
        "suite-is-a-list",
        "- prompts: ['{{q}}']\n",
        "prompts",
        "mapping",
    ),
    Case(
        id="suite-empty-file",
        category="suites",
        files={"suite.yaml": ""},
        expect=UsageError(("suite.yaml", "mapping")),
    ),
    bad_suite(
        "yaml-duplicate-key",
        HEAD + TEST + "tests: [{vars: {q: other}}]\n",
        "tests: [",
        "duplicate",
    ),
    bad_suite(
        "yaml-alias-bomb-run",
        ALIAS_BOMB,
        "b: &b",
        "alias",
        mode="subprocess",
        limit_s=6,
    ),
    bad_suite(
        "yaml-alias-bomb-validate",
        ALIAS_BOMB,
        "b: &b",
        "alias",
        argv=("validate", "suite.yaml"),
        mode="subprocess",
        limit_s=6,
    ),
    bad_suite(
        "yaml-alias-bomb-in-metadata",
        ALIAS_BOMB_IN_METADATA,
        "b: &b",
        "alias",
        mode="subprocess",
        limit_s=6,
    ),
    bad_suite(
        "ref-bomb-run",
        REF_BOMB,
        "f: [",
        "reference",
        mode="subprocess",
        limit_s=6,
    ),
    bad_suite(
        "yaml-recursive-anchor",
        HEAD + TEST + "metadata: &loop [*loop]\n",
        "metadata",
        "YAML",
        mode="subprocess",
    ),
    bad_suite(
        "yaml-python-tag",
        HEAD + TEST + "metadata: !!python/object/apply:os.system ['touch @OUTSIDE@/pwned']\n",
        "metadata",
        "YAML",
    ),
    bad_suite(
        "yaml-two-documents",
        HEAD + TEST + "---\nprompts: [x]\n",
        "---",
        "YAML",
    ),
    bad_suite(
        "yaml-tab-indent",
        HEAD + "tests:\n\t- vars: {q: hi}\n",
        "\t- vars",
        "YAML",
    ),
    bad_suite(
        "yaml-nul-byte",
        HEAD + TEST.replace("hi", "h\x00i"),
        "h\x00i",
        "YAML",
    ),
    bad_suite(
        "yaml-deep-nesting",
        HEAD + TEST + "metadata: " + "[" * 50_000 + "]" * 50_000 + "\n",
        "metadata",
        "nesting",
        mode="subprocess",
    ),
    Case(
        id="latin1-byte-in-suite",
        category="suites",
        files={
            "suite.yaml": (HEAD + TEST.replace("hi", "caf\xe9")).encode("latin-1"),
            "good.py": GOOD_AGENT,
        },
        expect=UsageError(("suite.yaml", "UTF-8"), line=5),
    ),
    Case(
        id="utf16-suite",
        category="suites",
        files={"suite.yaml": (HEAD + TEST).encode("utf-16"), "good.py": GOOD_AGENT},
        expect=UsageError(("suite.yaml", "UTF-8")),
    ),
    Case(
        id="utf8-bom-suite",
        category="suites",
        files={"suite.yaml": "\ufeff" + HEAD + TEST, "good.py": GOOD_AGENT},
        expect=correct_runs("a UTF-8 byte-order mark is ignored", 1),
    ),
    Case(
        id="crlf-suite",
        category="suites",
        files={"suite.yaml": (HEAD + TEST).replace("\n", "\r\n"), "good.py": GOOD_AGENT},
        expect=correct_runs("Windows line endings load as the same suite", 1),
    ),
    Case(
        id="suite-path-missing",
        category="suites",
        files={},
        argv=("run", "nowhere.yaml"),
        expect=UsageError(("nowhere.yaml",)),
    ),
    Case(
        id="suite-directory-without-suite",
        category="suites",
        files={"dir/readme.txt": "nothing"},
        argv=("run", "dir"),
        expect=UsageError(("dir", "promptfooconfig.yaml")),
    ),
    Case(
        id="suite-path-is-a-fifo-like-device",
        category="suites",
        files={},
        argv=("validate", "/dev/null"),
        expect=UsageError(("/dev/null", "mapping")),
    ),
    bad_suite(
        "prompt-file-binary",
        "prompts: [file://prompt.txt]\nproviders: [{id: file://good.py, label: good}]\n" + TEST,
        "prompts",
        "prompt.txt",
        files={"prompt.txt": b"\xff\xfe\x00\x00binary\x81"},
    ),
    bad_suite(
        "unknown-top-level-key-refused",
        HEAD + TEST + "promts: [x]\n",
        "promts:",
        "unknown key 'promts'",
        "did you mean 'prompts'",
        argv=("validate", "suite.yaml"),
    ),
    bad_suite(
        "provider-file-missing-function",
        "prompts: ['{{q}}']\nproviders: [{id: 'file://good.py:nope', label: good}]\n" + TEST,
        "file://good.py:nope",
        "nope",
        argv=("validate", "suite.yaml"),
    ),
    bad_suite(
        "provider-function-not-callable",
        "prompts: ['{{q}}']\nproviders: [{id: 'file://agent.py:VALUE', label: good}]\n" + TEST,
        "file://agent.py:VALUE",
        "VALUE",
        files={"agent.py": "VALUE = 5\n"},
        argv=("validate", "suite.yaml"),
    ),
    bad_suite(
        "agent-syntax-error",
        "prompts: ['{{q}}']\nproviders: [{id: file://agent.py, label: good}]\n" + TEST,
        "file://agent.py",
        "agent.py",
        files={"agent.py": "def call_api(prompt, options, context)\n    return 1\n"},
        argv=("validate", "suite.yaml"),
    ),
    bad_suite(
        "agent-import-raises",
        "prompts: ['{{q}}']\nproviders: [{id: file://agent.py, label: good}]\n" + TEST,
        "file://agent.py",
        "agent.py",
        files={"agent.py": "raise ImportError('no module named secret_sdk')\n"},
        argv=("validate", "suite.yaml"),
    ),
    bad_suite(
        "yaml-duplicate-key-in-vars",
        HEAD + "tests:\n  - vars:\n      q: hi\n      q: again\n",
        "q: again",
        "duplicate",
    ),
    bad_suite(
        "yaml-alias-bomb-with-merge-key",
        "base: &base {x: 1}\nmerged: {<<: *base}\n" + ALIAS_BOMB,
        "base: &base",  # PyYAML's composer (merge keys): the first aliased anchor
        "alias",
        mode="subprocess",
        limit_s=10,
    ),
    bad_suite(
        "prompt-file-latin1",
        "prompts: [file://prompt.txt]\nproviders: [{id: file://good.py, label: good}]\n" + TEST,
        "prompts",
        "prompt.txt",
        "UTF-8",
        files={"prompt.txt": "caf\xe9 {{q}}".encode("latin-1")},
    ),
    Case(
        id="prompt-range-bomb",
        category="suites",
        files={
            "suite.yaml": HEAD.replace("'{{q}}'", "'{% for i in range(10**12) %}x{% endfor %}'")
            + TEST
            + "gates: {}\n",
            "good.py": GOOD_AGENT,
        },
        expect=ErrorRow("template_error", message="range()"),
    ),
    Case(
        id="prompt-loop-from-author-times-out",
        category="suites",
        files={
            "suite.yaml": PROMPT_LOOP + "evaluateOptions: {timeoutMs: 1000}\ngates: {}\n",
            "good.py": GOOD_AGENT,
        },
        expect=ErrorRow("timeout"),
        mode="subprocess",
        limit_s=15,  # the 1 s timeout, then the interpreter's start and exit on a busy machine
    ),
    bad_suite(
        "tests-file-is-a-directory",
        HEAD + "tests: file://cases\n",
        "tests:",
        "directory",
        files={"cases/a.yaml": "- vars: {q: hi}\n"},
    ),
    bad_suite(
        "scenarios-file-is-a-directory",
        HEAD + "scenarios: file://cases\n",
        "scenarios:",
        "directory",
        files={"cases/a.yaml": "- config: [{vars: {q: hi}}]\n  tests: [{}]\n"},
    ),
    bad_suite(
        "tests-list-names-a-missing-file",
        HEAD + "tests:\n  - file://cases.yaml\n",
        "file://cases.yaml",
        "cases.yaml",
    ),
    bad_suite(
        "test-transform-not-code",
        with_test("- vars: {q: hi}\n  options: {transform: 5}\n"),
        "vars: {q: hi}",
        "transform",
    ),
    bad_suite(
        "assertion-transform-not-code",
        with_test("- vars: {q: hi}\n  assert:\n    - type: contains\n      transform: [a]\n"),
        "transform: [a]",
        "transform",
    ),
    bad_suite(
        "provider-transform-not-code",
        "prompts: ['{{q}}']\nproviders:\n  - id: file://good.py\n    transform: {a: 1}\n" + TEST,
        "transform:",
        "transform",
    ),
    *[
        bad_suite(f"{key}-{name}", HEAD + TEST + block, needle, *mentions)
        for key, name, block, needle, mentions in (
            ("budget", "max-cost-negative", "budget: {max_cost: -1}\n", "budget", ("max_cost",)),
            ("budget", "max-cost-text", "budget: {max_cost: cheap}\n", "budget", ("max_cost",)),
            ("budget", "unknown-key", "budget: {max_cots: 1}\n", "budget", ("max_cots",)),
            ("budget", "list", "budget: [1]\n", "budget", ("budget",)),
            ("prices", "negative", "prices: {m: {input: -1, output: 1}}\n", "prices", ("input",)),
            ("prices", "text", "prices: {m: {input: free, output: 1}}\n", "prices", ("input",)),
            ("tools", "string", "tools: calculator\n", "tools", ("tools",)),
            (
                "tools",
                "effect-unknown",
                "tools: [{name: t, effect: explode}]\n",
                "tools",
                ("effect",),
            ),
            ("policy", "list", "policy: [deny]\n", "policy", ("policy",)),
            (
                "policy",
                "max-identical-negative",
                "policy: {max_identical_calls: -1}\n",
                "policy",
                ("max_identical_calls",),
            ),
            ("trace", "redact-number", "trace: {redact: 5}\n", "trace", ("redact",)),
            ("trace", "string", "trace: on\n", "trace", ("trace",)),
        )
    ],
]

"""Why corpus cases fail today: one entry per root cause, with where it lives and the fix.

A case that fails carries `xfail=cause(KEY)`; the reason then names the root cause, so
`python -m tests.hostile.report` groups the failing cases by cause. When a fix lands,
its cases pass, strict xfail turns them into failures, and the marks (and, once none
uses it, the entry here) are removed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RootCause:
    """A defect: a short name, what goes wrong, the code responsible, the fix recommended."""

    short: str
    what: str
    where: str
    fix: str


CAUSES: dict[str, RootCause] = {
    "numbers": RootCause(
        "numeric settings not type/range-checked",
        "numeric settings are not type- and range-checked; 0, negatives, fractions, "
        "booleans, NaN and infinities are accepted or crash later",
        "evals/suite/loader.py (_Loader.evaluate_options, case, assertion, provider_spec), "
        "evals/suite/gates.py (_parse_block)",
        "one validator (integer or finite float, with a range) used by every key, raising "
        "SuiteError at the key's line with the accepted range as the fix",
    ),
    "shapes": RootCause(
        "wrong section types reach code: tracebacks",
        "a section of the wrong type (list for a mapping, text for a number) reaches code "
        "that assumes its type: AttributeError/TypeError/ValueError tracebacks, exit 3",
        "evals/suite/loader.py (load: env; provider_spec: config, delay; case: metadata, "
        "options, threshold; assertion: weight, threshold), evals/suite/test_cases.py "
        "(expand_tests: vars, scenarios, defaultTest.vars), evals/suite/gates.py (per_tag, "
        "min_repeats)",
        "check each section's shape where it is read (mapping / list / string / number) "
        "and raise SuiteError with the line and an example of the right form",
    ),
    "lines": RootCause(
        "error without line or fix",
        "the error is right but names no line (or the suite's first line) or gives no fix",
        "evals/suite/loader.py (prompts, defaultTest, evaluateOptions, duplicate labels, "
        "non-mapping suite), evals/suite/prompts.py, evals/suite/test_cases.py "
        "(check_templates), evals/suite/gates.py (parse_gates, number keys), "
        "evals/suite/tests_files.py (JSON, JSONL)",
        "give every SuiteError the offending node's line (lists and scalars too: keep "
        "their marks in yaml_lines) and a fix; JSON errors carry exc.lineno",
    ),
    "extension-blocks": RootCause(
        "budget/prices/tools/policy/trace not validated at load",
        "the harness's own top-level blocks (budget, prices, tools, policy, trace) are "
        "not validated at load: wrong types and values are ignored until an assertion "
        "reads them, or refused without file, line or fix",
        "evals/suite/loader.py (KNOWN_TOP_LEVEL only names them), graders/budget.py, "
        "graders/policy.py, graders/contracts.py, evals/tracing/options.py",
        "parse every block at load with the graders' own option parsers; SuiteError at the "
        "key's line",
    ),
    "response-validation": RootCause(
        "garbage responses accepted",
        "garbage in a provider response is accepted: NaN/infinite/negative/boolean cost, "
        "negative/NaN/over-64-bit tokens, non-numeric or negative latency, outputs that are "
        "NaN, sets, bytes, objects, self-referencing, lone surrogates, over 32 MiB or "
        "nested over 256 levels; they pass budgets, print $nan, or break the store and "
        "reports later",
        "evals/agents/base.py (normalize_response, _usage, _steps)",
        "validate at the boundary (in-process, worker, exec, http alike): finite "
        "non-negative numbers, integer tokens below 2**63, JSON-able values within the "
        "size and depth limits, valid UTF-8; anything else is a `malformed` row",
    ),
    "store-send": RootCause(
        "unpicklable records dropped or abort the evaluation",
        "a record the pipe cannot pickle (deep nesting, 5000-digit int, cycles) makes the "
        "send to the store process fail: the batch is dropped, a traceback is printed, or "
        "the evaluation aborts and stays `running`",
        "evals/store/process.py (StoreProcess.add/send), evals/store/codec.py (encode_run)",
        "encode each record when it is added and turn an encoding failure into that run's "
        "`malformed` row; a failed send or batch is a HarnessFault, never a drop",
    ),
    "worker-protocol": RootCause(
        "huge, deep or unencodable worker replies never return",
        "a worker reply over 64 MiB, nested 100,000 deep or holding a lone surrogate is "
        "never delivered: the run hangs until its timeout or forever",
        "evals/agents/worker.py (Worker.reply: RecursionError and UnicodeEncodeError "
        "escape), evals/agents/worker_client.py (_LINE_LIMIT kills the reply reader)",
        "check size, depth and encodability in the worker before writing (a `malformed` "
        "reply), and read over-long lines as a `malformed` reply instead of stopping",
    ),
    "async-blocking": RootCause(
        "blocking async agents never time out",
        "an async agent that blocks the event loop (CPU loop, time.sleep) or swallows "
        "cancellation is never timed out: the whole evaluation hangs",
        "evals/run/runner.py (asyncio.wait_for on the harness's own loop)",
        "a watchdog thread that notices a blocked loop and fails the run as `timeout`; run "
        "in-process async agents on a loop thread of their own; stop waiting for a task "
        "that ignores cancellation after a grace period",
    ),
    "error-size": RootCause(
        "unbounded error messages; slow YAML report",
        "error messages are stored unbounded (a 10 MiB message), and the YAML report's "
        "pure-Python emitter takes about 4 s per MB",
        "evals/run/runner.py (_error_record), reports/data_files.py (render_yaml)",
        "truncate stored error messages (say 16 KiB, keeping the end) and dump YAML with "
        "the C emitter (CSafeDumper)",
    ),
    "exec-limits": RootCause(
        "exec stdout size unlimited",
        "an exec: agent's stdout is read whole whatever its size",
        "evals/agents/exec_provider.py (ExecAgent.call: communicate())",
        "read with a size limit and kill the command past it: a `malformed` row",
    ),
    "http-limits": RootCause(
        "HTTP body size, JSON depth, redirects",
        "HTTP replies: the body size is not limited, deeply nested JSON raises "
        "RecursionError, redirects are not followed (a 302 is a success with no output)",
        "evals/agents/http_provider.py (HttpAgent.call, _read_reply)",
        "stream with a size limit, parse JSON with a depth limit (`malformed`), follow "
        "redirects as promptfoo's fetch does (a loop is an `agent_error`)",
    ),
    "worker-children": RootCause(
        "worker's children outlive the evaluation",
        "processes a worker agent forked outlive the evaluation",
        "evals/agents/worker_client.py (_Session.close), evals/agents/processes.py",
        "kill the worker's process group when the session closes",
    ),
    "interrupt": RootCause(
        "interrupted evaluations stay running; SIGTERM/SIGHUP unhandled",
        "an interrupted evaluation stays `running` in the store (SIGINT), and SIGTERM / "
        "SIGHUP are not handled at all (the harness dies with the signal)",
        "evals/cli.py (main), evals/pipeline/evaluation.py (run_evaluation)",
        "handle SIGINT/SIGTERM/SIGHUP alike: stop starting runs, store what completed, "
        "mark the evaluation `interrupted` (resumable), exit 130",
    ),
    "store-process-loss": RootCause(
        "store-process death printed as a traceback",
        "when the store process dies, the failure is raised inside an event-loop callback "
        "and printed as a traceback",
        "evals/store/process.py (StoreProcess.add schedules send with call_soon)",
        "record the failure in the callback and raise HarnessFault from the next add/flush",
    ),
    "plan-streaming": RootCause(
        "the plan is built in memory",
        "the plan is materialised (`list(plan)`) before the first run: repeat: 1e9 builds "
        "a billion runs in memory",
        "evals/pipeline/evaluation.py (run_evaluation: planned = list(plan))",
        "stream the plan to the runner; count it lazily for progress and zero-run checks",
    ),
}


def cause(key: str) -> str:
    """The xfail reason of a case failing because of root cause `key`."""
    return f"[{key}] {CAUSES[key].short}"

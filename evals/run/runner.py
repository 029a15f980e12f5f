"""Execute planned runs concurrently: the only place in the harness with concurrency.

A fixed pool of workers pulls from the plan, so memory stays flat however many runs
there are. Each run is called with a timeout, graded, and handed to `on_record` as soon
as it completes. Whatever the agent does (raise, hang, return garbage) becomes an error
row; only the harness's own faults propagate.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from evals.agents.base import (
    Agent,
    AgentBlocked,
    AgentExited,
    CallContext,
    guarded_call,
)
from evals.agents.threads import ThreadCalls
from evals.agents.validate import MalformedResponse, check_response
from evals.common import jsengine
from evals.common.blocking import UserCodeBlocked, interruptible
from evals.common.files import default_label
from evals.common.jsvalues import js_stringify
from evals.common.transforms import TransformError
from evals.common.world import WorldError
from evals.grade.grading import AssertionRaised, grade_case_async
from evals.graders.base import output_text
from evals.graders.cost import resolve_cost, suite_prices
from evals.model.errors import HarnessFault
from evals.model.plan import PlannedRun
from evals.model.protocols import RunTrace, Tracer
from evals.model.results import AgentResponse, ErrorKind, Grade, RunRecord
from evals.run.conversation import Conversations
from evals.run.environment import RunWorld, WorldSeed
from evals.run.limiter import Limiter, limit_keys
from evals.run.watchdog import LoopWatchdog
from evals.suite.prompt_functions import call_prompt_function
from evals.suite.vars import (
    fills_in_python,
    render_prompt_text,
    resolve_var_references,
    resolve_vars,
)
from evals.tracing import NULL_TRACER
from evals.tracing.redact import Redactor

Rendered = tuple[str, dict[str, Any], dict[str, Any] | None]
"""A run's prompt text, the vars it was rendered with and the config its prompt function
added (None when none)."""


def render_prompt(
    run: PlannedRun, root: Path | None = None, env: dict[str, str] | None = None
) -> Rendered:
    """The prompt text sent to the agent, the vars it was rendered with, and the config a
    prompt function added to the prompt's (None when it added none).

    `file://` vars are loaded (with `root`), vars naming other vars (`{{ other }}`) are
    resolved, and the test's `prefix`/`suffix` options wrap the template, as promptfoo
    renders prompts; the vars returned are those the run's checks see, as in promptfoo.
    `env` is what the prompt template sees as `env` (by default the process's
    environment); vars never see it. A prompt function
    makes the template from the vars first (without prefix or suffix, as in promptfoo).
    """
    variables = run.case.vars
    raw = run.prompt.raw
    env = dict(os.environ) if env is None else env
    function = run.prompt.function
    if function is not None:
        provider = provider_seen(run)
        if root is not None:
            variables = resolve_vars(variables, raw, root, provider)
        template, added = call_prompt_function(
            function, variables, provider, run.prompt.config, root or Path(".")
        )
        variables = resolve_var_references(variables)
        return render_prompt_text(template, variables, env), variables, added
    text = prompt_template(run)
    if text is None:
        import json

        from evals.common.templating import render_value

        rendered = render_value(raw, variables, env, filters=True)
        return json.dumps(rendered, ensure_ascii=False), variables, None
    if root is not None:
        variables = resolve_vars(variables, raw, root, provider_seen(run))
    variables = resolve_var_references(variables)
    return render_prompt_text(text, variables, env), variables, None


def provider_seen(run: PlannedRun) -> dict[str, Any]:
    """What promptfoo tells a prompt function or a var loader of the run's provider: its
    id (`python:agent.py:default` for a Python file written as a string, the id as written
    for a provider written as a mapping) and the label written for it ("")."""
    by_file = default_label(run.provider.id)
    promptfoo_id = by_file if run.provider.label == by_file else run.provider.id
    return {
        "id": promptfoo_id,
        "label": "" if run.provider.label == promptfoo_id else run.provider.label,
    }


def prompt_template(run: PlannedRun) -> str | None:
    """The run's text prompt with the test's `prefix`/`suffix`; None for a chat prompt or
    a prompt function."""
    raw = run.prompt.raw
    if not isinstance(raw, str) or run.prompt.function is not None:
        return None
    options = run.case.options
    return f"{options.get('prefix') or ''}{raw}{options.get('suffix') or ''}"


def _template_text(run: PlannedRun) -> str:
    """The run's prompt before rendering, as promptfoo's `context.prompt.raw` holds it:
    the test's prefix and suffix around the template (a prompt function's code)."""
    raw = run.prompt.raw
    if not isinstance(raw, str):
        return js_stringify(raw)
    options = run.case.options
    return f"{options.get('prefix') or ''}{raw}{options.get('suffix') or ''}"


def prompt_config(run: PlannedRun, added: dict[str, Any] | None) -> dict[str, Any]:
    """The config the provider is told of the prompt (its `context.prompt.config`): the
    prompt's own, what its function added, then the test's options but `repeat`, as
    promptfoo's mergeProviderPromptConfig merges them."""
    options = {k: v for k, v in run.case.options.items() if k != "repeat"}
    return {**(run.prompt.config or {}), **(added or {}), **options}


@interruptible
def transformed_output(run: PlannedRun, output: Any, root: Path) -> Any:
    """The output after the provider's `transform`, then the test's `options.transform`."""
    test_transform = run.case.options.get("transform") or run.case.options.get("postprocess")
    if not run.provider.transform and not test_transform:
        return output
    from evals.common.transforms import apply_output_transform

    context = {"vars": run.case.vars, "prompt": {"raw": run.prompt.raw, "label": run.prompt.label}}
    if run.provider.transform:
        output = apply_output_transform(
            run.provider.transform, output, context, root, "provider transform"
        )
    if test_transform:
        output = apply_output_transform(test_transform, output, context, root, "options.transform")
    return output


def _record(run: PlannedRun, prompt: str, response: AgentResponse, **outcome: Any) -> RunRecord:
    """The record of a planned run: its identity and seeds, plus the outcome fields given."""
    return RunRecord(
        key=run.key,
        case_index=run.case.index,
        prompt_index=run.prompt_index,
        agent_index=run.agent_index,
        seed=run.seed,
        prompt=prompt,
        vars=run.case.vars,
        response=response,
        metadata={"shared_seed": run.shared_seed}
        if run.look is None
        else {"shared_seed": run.shared_seed, "look": run.look},
        **outcome,
    )


# Stored error messages hold at most this many characters: their beginning (the exception's
# class) and mostly their end (where a traceback's last, most telling lines are).
MAX_ERROR_CHARS = 16 << 10
_ERROR_HEAD = 1 << 10


def truncate_error(message: str) -> str:
    """`message` as stored: at most about MAX_ERROR_CHARS characters, the middle cut.
    Cut only what is masked already: a secret cut in two would leave its pieces."""
    if len(message) <= MAX_ERROR_CHARS:
        return message
    tail = MAX_ERROR_CHARS - _ERROR_HEAD
    cut = len(message) - MAX_ERROR_CHARS
    return f"{message[:_ERROR_HEAD]} [... {cut} characters cut ...] {message[-tail:]}"


def _error_record(
    run: PlannedRun, prompt: str, kind: str, message: str, started: float
) -> RunRecord:
    ended = time.time()
    return _record(
        run,
        prompt,
        AgentResponse(error=message),
        status="error",
        error=message,
        error_kind=kind,
        latency_ms=(ended - started) * 1000.0,
        started_at=started,
        ended_at=ended,
    )


def infra_record(run: PlannedRun, message: str) -> RunRecord:
    """The error row of a run the infrastructure failed (its worker or node died, its
    worker could not start): a failed run, counted by the error-rate gate."""
    return _error_record(run, "", "infra", truncate_error(message), time.time())


def _tokens_used(response: AgentResponse | None) -> int:
    if response is None:
        return 0
    total = response.token_usage.get("total") if response.token_usage else None
    return int(total) if isinstance(total, int | float) else 0


def _response_error(
    run: PlannedRun,
    prompt: str,
    response: AgentResponse,
    kind: ErrorKind,
    message: str,
    started: float,
) -> RunRecord:
    """An error row that keeps the agent's response (its output, cost and tokens)."""
    record = _error_record(run, prompt, kind, message, started)
    record.response = response
    record.latency_ms = response.latency_ms or record.latency_ms
    return record


def _with_errors_cut(record: RunRecord) -> RunRecord:
    """`record` with its error messages (the run's, and the response's) cut to the stored
    length: a record already masked, so the cut halves no secret."""
    error, response = record.error, record.response
    if error is not None and len(error) > MAX_ERROR_CHARS:
        record = replace(record, error=truncate_error(error))
    if response.error is not None and len(response.error) > MAX_ERROR_CHARS:
        record = replace(record, response=replace(response, error=truncate_error(response.error)))
    return record


# How long a timed-out agent call may take to honour its cancellation before the harness
# stops waiting for it (an agent that swallows CancelledError would otherwise hold its run,
# and the evaluation, forever).
CANCEL_GRACE_S = 1.0


async def _within(call: Awaitable[AgentResponse], timeout_s: float) -> AgentResponse:
    """The agent's response, or TimeoutError after `timeout_s`: the call is cancelled and
    given `CANCEL_GRACE_S` to end; one that ignores the cancellation is closed and left."""
    task = asyncio.ensure_future(guarded_call(call))
    try:
        done, _ = await asyncio.wait((task,), timeout=timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if done:
        return task.result()
    task.add_done_callback(_quietly)
    task.cancel()
    done, _ = await asyncio.wait((task,), timeout=CANCEL_GRACE_S)
    if not done:
        _abandon(task)
    raise TimeoutError


def _quietly(task: asyncio.Future[Any]) -> None:
    """Retrieve what a call the runner gave up on ended with, so nothing logs it."""
    if not task.cancelled():
        task.exception()


def _abandon(task: asyncio.Task[Any]) -> None:
    """Close the coroutine of a call that ignored its cancellation (GeneratorExit at the
    point it waits), then cancel its task, which a closed coroutine cannot refuse: neither
    the task nor the event loop's shutdown waits for it."""
    with contextlib.suppress(Exception):
        task.get_coro().close()
    task.cancel()


# Plain prompt fills a runner remembers for later repeats (repeats run one after another
# over every test, so a fill is met again only after all the others): at most this many,
# of prompts up to this many characters (about 16 MB at most).
_MAX_FILLS = 16_384
_MAX_FILL_CHARS = 1024


class Runner:
    """Runs a plan against built agents and grades each response."""

    def __init__(
        self,
        agents: dict[str, Agent],
        *,
        suite_id: str,
        suite_root: Path,
        concurrency: int = 4,
        timeout_s: float | None = None,
        suite_config: dict[str, Any] | None = None,
        tracer: Tracer = NULL_TRACER,
        latency_source: str = "wall",
        limiter: Limiter | None = None,
        secrets: frozenset[str] = frozenset(),
        conversations: Conversations | None = None,
        environment: Path | None = None,
    ) -> None:
        self.agents = agents
        self.world = None if environment is None else WorldSeed(environment)
        self.conversations = conversations
        self.limiter = limiter
        self.suite_id = suite_id
        self.suite_root = suite_root
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self.suite_config = suite_config or {}
        self.prices = suite_prices(self.suite_config)
        self.tracer = tracer
        self.latency_source = latency_source
        self.redactor = Redactor(secrets=secrets)
        self._fills: dict[tuple[str, tuple[tuple[str, str], ...]], Rendered] = {}
        # daemon threads: a Python var loader, prompt function or filter that never returns
        # ends its run at the timeout and holds neither a thread others wait for nor the exit
        self._render_threads = ThreadCalls("evals-render")
        self._render_slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        suite_env = {str(k): str(v) for k, v in (self.suite_config.get("env") or {}).items()}
        self.template_env = {**os.environ, **suite_env}
        evaluate_options = self.suite_config.get("evaluateOptions") or {}
        self.default_delay_s = float(evaluate_options.get("delay") or 0) / 1000.0
        # A template, regex or JavaScript check may not outlast the run's own timeout.
        js_limit = jsengine.DEFAULT_TIME_LIMIT_S
        jsengine.set_time_limit(min(js_limit, timeout_s) if timeout_s else js_limit)

    async def execute(self, run: PlannedRun) -> RunRecord:
        """Call the agent once and grade the result; never raises for agent faults.

        The run executes inside its trace's root span; the spans end up on the record.
        Secrets (known values, key shapes, URL credentials) are masked in the record
        returned: its prompt, vars, output, error, trajectory and grade.
        """
        async with self.tracer.run_span(run) as traced:
            if self.conversations is None:
                record = await self._execute(run, traced)
            else:
                record = await self._converse(run, traced, self.conversations)
            # Graded on what the agent said; traced, stored and reported with secrets
            # masked, and only then are long error messages cut.
            record = _with_errors_cut(self.redactor.scrub(record))
            traced.finish(record)
        return record

    async def _converse(
        self, run: PlannedRun, traced: RunTrace, conversations: Conversations
    ) -> RunRecord:
        """`_execute` with the run's `_conversation` var (when its prompt reads it) and the
        outputs earlier tests stored (`storeOutputAs`), which the agent and the assertions
        see and the record leaves out, as promptfoo's output; then the run's own output
        stored when its test says so."""
        own = run.case.vars
        template = prompt_template(run)
        source = js_stringify(run.prompt.raw) if template is None else template
        variables = conversations.vars_for(run, source)
        if variables is own:
            record = await self._execute(run, traced)
        else:
            case = replace(run.case, vars=variables)
            record = await self._execute(replace(run, case=case), traced)
            added = variables.keys() - own.keys()
            kept = {k: v for k, v in record.vars.items() if k not in added}
            kept.update({k: own[k] for k in own if k in conversations.registers})
            record.vars = kept
        conversations.store(run, record.response.output)
        return record

    async def _render(self, run: PlannedRun) -> Rendered:
        """The run's prompt and vars, rendered in a worker thread within the run's timeout.

        A plain prompt (`{{ name }}` slots over vars holding no template or file) is filled
        in place. Otherwise the event loop keeps serving other runs meanwhile; a render
        still going at the
        timeout raises TimeoutError (its thread stops at the sandbox's time limit, which
        is no longer than the timeout), and the sandbox's memory and output limits make an
        oversized template a TemplateError.
        """
        template = prompt_template(run)
        if template is not None and fills_in_python(template, run.case.vars):
            return self._filled(run, template)
        rendering = self._render_off_loop(run)
        if not self.timeout_s:
            return await rendering
        return await asyncio.wait_for(rendering, self.timeout_s)

    async def _render_off_loop(self, run: PlannedRun) -> Rendered:
        """`render_prompt` on a render thread, as many at once as asyncio.to_thread's pool
        would run (each render thread keeps its own JavaScript engine); a render abandoned
        at the timeout frees its slot."""
        loop = asyncio.get_running_loop()
        if self._render_slots is None or self._render_slots[0] is not loop:
            self._render_slots = (loop, asyncio.Semaphore(min(32, (os.cpu_count() or 1) + 4)))
        async with self._render_slots[1]:
            return await self._render_threads.run(
                render_prompt, run, self.suite_root, self.template_env
            )

    def _filled(self, run: PlannedRun, template: str) -> Rendered:
        """`render_prompt` of a plain fill (microseconds), remembered for the next repeats
        of the test when its vars are all strings: the fill depends on the template and the
        vars alone (the environment it sees is the runner's, fixed). The first
        `_MAX_FILLS` fills of prompts up to `_MAX_FILL_CHARS` characters are kept."""
        variables = run.case.vars
        if not all(type(value) is str for value in variables.values()):
            return render_prompt(run, self.suite_root, self.template_env)
        key = (template, tuple(variables.items()))
        filled = self._fills.get(key)
        if filled is None:
            filled = render_prompt(run, self.suite_root, self.template_env)
            if len(self._fills) < _MAX_FILLS and len(filled[0]) <= _MAX_FILL_CHARS:
                self._fills[key] = filled
        return filled

    async def _execute(self, run: PlannedRun, traced: RunTrace) -> RunRecord:
        """The run, in a fresh copy of the suite's world state when it declares one."""
        if self.world is None:
            return await self._call_and_grade(run, traced, None)
        world = self.world.fresh()
        try:
            return await self._call_and_grade(run, traced, world)
        finally:
            world.close()

    async def _call_and_grade(
        self, run: PlannedRun, traced: RunTrace, world: RunWorld | None
    ) -> RunRecord:
        prompt = ""
        started = time.time()
        try:
            prompt, variables, added = await self._render(run)
            if variables is not run.case.vars:
                run = replace(run, case=replace(run.case, vars=variables))
        except TimeoutError:
            message = f"rendering the prompt took longer than the timeout of {self.timeout_s:g} s"
            return _error_record(run, prompt, "timeout", message, started)
        except Exception as exc:
            return _error_record(
                run, prompt, "template_error", f"prompt template error: {exc}", started
            )
        agent = self.agents[run.agent_key]
        context = CallContext(
            vars=run.case.vars,
            prompt=prompt,
            case_id=run.case.id,
            case_metadata=run.case.metadata,
            agent=run.provider.label,
            repeat=run.key.repeat,
            seed=run.seed,
            suite_id=self.suite_id,
            shared_seed=run.shared_seed,
            timeout_s=self.timeout_s,
            traceparent=traced.traceparent,
            extra=dict(traced.extra),
            environment=None if world is None else str(world.path),
            prompt_label=run.prompt.label,
            prompt_raw=_template_text(run),
            prompt_config=prompt_config(run, added),
        )
        limiter = self.limiter if run.case.provider_output is None else None
        keys = () if limiter is None else limit_keys(run.caller, run.provider.label, limiter.names)
        if limiter is not None and keys:
            await limiter.acquire(keys)
        response: AgentResponse | None = None
        t0 = time.perf_counter()
        try:
            if run.case.provider_output is not None:
                response = AgentResponse(
                    output=run.case.provider_output,
                    token_usage={"total": 0, "prompt": 0, "completion": 0},
                    cost=0.0,
                )
            elif self.timeout_s:
                response = await _within(agent.call(prompt, context), self.timeout_s)
            else:
                response = await guarded_call(agent.call(prompt, context))
            if run.case.provider_output is None:
                check_response(response)
        except (TimeoutError, AgentBlocked):
            return _error_record(
                run, prompt, "timeout", f"agent timed out after {self.timeout_s:g} s", started
            )
        except MalformedResponse as exc:
            return _error_record(
                run, prompt, "malformed", f"malformed agent response: {exc}", started
            )
        except AgentExited as exc:
            return _error_record(run, prompt, "agent_exit", str(exc), started)
        except (asyncio.CancelledError, HarnessFault):
            raise  # the harness's own fault (its response cache, say) stops the evaluation
        except Exception as exc:
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            return _error_record(run, prompt, "agent_error", f"agent raised {detail}", started)
        finally:
            if limiter is not None and keys:
                await limiter.release(keys, _tokens_used(response))
        latency_ms = (time.perf_counter() - t0) * 1000.0
        if self.conversations is not None:
            self.conversations.record(run, prompt, response.output, response.metadata or None)
        delay_s = run.caller.delay_ms / 1000.0 or self.default_delay_s
        if delay_s > 0 and not response.cached:
            await asyncio.sleep(delay_s)  # promptfoo's provider delay, after each call
        traced.adopt(response)
        if world is not None:
            try:
                outcome = await asyncio.to_thread(world.outcome)
            except (WorldError, OSError) as exc:
                message = f"the world state cannot be read after the run: {exc}"
                return _response_error(run, prompt, response, "agent_error", message, started)
            response = replace(response, metadata={**response.metadata, "environment": outcome})
        ended = time.time()
        if response.error is not None:
            return _response_error(run, prompt, response, "agent_error", response.error, started)
        if response.output is None and not response.trajectory:
            # promptfoo's rule for a provider that answered nothing: a failed run (a passed
            # one in a red-team config); an agent that stopped with no answer after acting
            # (awaiting approval) is graded on what it did
            return self._unanswered(run, prompt, response, latency_ms, started, ended)
        try:
            output = transformed_output(run, response.output, self.suite_root)
        except TransformError as exc:
            return _response_error(run, prompt, response, "agent_error", exc.row_error, started)
        except UserCodeBlocked:
            message = f"the output transform ran past the timeout of {self.timeout_s:g} s"
            return _response_error(run, prompt, response, "timeout", message, started)
        if output is not response.output:
            # as in promptfoo, the transformed output is the run's output from here on:
            # reports, the store and comparisons across a test's outputs show it
            response = replace(response, output=output)
        try:
            with traced.stage("grade"):
                grading = grade_case_async(
                    run.case,
                    response,
                    output=output,
                    prompt=prompt,
                    latency_ms=latency_ms,
                    latency_source=self.latency_source,
                    suite_root=self.suite_root,
                    agent=run.provider.label,
                    provider_config=run.provider.config,
                    provider_id=run.provider.id,
                    suite_config=self.suite_config,
                )
                grade = await (
                    asyncio.wait_for(grading, self.timeout_s) if self.timeout_s else grading
                )
        except (TimeoutError, UserCodeBlocked):  # the scoring function blocked the loop
            message = f"the checks took longer than the timeout of {self.timeout_s:g} s"
            return _response_error(run, prompt, response, "timeout", message, started)
        except AssertionRaised as exc:
            kind: ErrorKind = "timeout" if self._is_timeout(exc) else "grader_error"
            record = _response_error(run, prompt, response, kind, exc.message, started)
            record.grade = exc.grade  # the run's other checks, policy violations included
            return self._priced(record, output)
        record = _record(
            run,
            prompt,
            response,
            status="pass" if grade.passed else "fail",
            grade=grade,
            latency_ms=latency_ms,
            started_at=started,
            ended_at=ended,
        )
        return self._priced(record, output)

    def _priced(self, record: RunRecord, output: Any) -> RunRecord:
        """The answered run with its cost worked out (`resolve_cost`) when the agent
        reported none, or the model no price was found for in `metadata.cost_unknown`. Graders
        saw the response as the agent returned it (promptfoo's `cost` assertion reads
        only a reported cost)."""
        response = record.response
        if response.cost is not None:
            return record
        cost = resolve_cost(
            response, self.prices, prompt=record.prompt, output_text=output_text(output)
        )
        if cost.amount is not None:
            record.response = replace(response, cost=cost.amount)
        else:
            record.metadata = {**record.metadata, "cost_unknown": cost.unpriced}
        return record

    def _is_timeout(self, raised: AssertionRaised) -> bool:
        """Whether a check was stopped at the run's own timeout (by the watchdog, or by the
        sandbox when the timeout is shorter than its limit of one call): the run timed
        out, as a slow agent's would."""
        if raised.limit == "timeout":
            return True
        if raised.limit != "time" or not self.timeout_s:
            return False
        return self.timeout_s <= jsengine.DEFAULT_TIME_LIMIT_S

    def _unanswered(
        self,
        run: PlannedRun,
        prompt: str,
        response: AgentResponse,
        latency_ms: float,
        started: float,
        ended: float,
    ) -> RunRecord:
        """The record of a run whose provider answered no output and no error: failed with
        promptfoo's "No output" (score 0, nothing graded), or passed when the suite is a
        red-team config (`redteam:`), where an empty answer counts as a refusal."""
        passed = self.suite_config.get("redteam") is not None
        return _record(
            run,
            prompt,
            response,
            status="pass" if passed else "fail",
            grade=Grade(passed, 0.0, "" if passed else "No output", None),
            latency_ms=latency_ms,
            started_at=started,
            ended_at=ended,
        )

    async def run(self, plan: Iterable[PlannedRun], on_record: Callable[[RunRecord], None]) -> int:
        """Execute every planned run with bounded concurrency; returns how many ran."""
        iterator = iter(plan)
        count = 0

        async def worker() -> None:
            nonlocal count
            for run in iterator:
                record = await self.execute(run)
                on_record(record)
                count += 1

        watchdog = LoopWatchdog(self.timeout_s) if self.timeout_s else None
        if watchdog is not None:
            watchdog.start()
        try:
            await asyncio.gather(*(worker() for _ in range(self.concurrency)))
        finally:
            if watchdog is not None:
                watchdog.stop()
            self._render_threads.close()
        return count

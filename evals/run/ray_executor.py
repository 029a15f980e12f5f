"""Runs planned runs on a Ray cluster (or a local Ray instance), one run at a time per call.

- **Shipped, not assumed.** The suite folder and the agents' local code travel with the
  job as its `working_dir` (`evals.run.bundle`), pinned to the suite fingerprint; each
  worker checks the files it received against the bundle's digest. The variables named
  by `pass_env:` (or `--pass-env`) are sent to each worker once it has started and set in
  its process environment; they are not part of the runtime_env (which Ray keeps in its
  job table and shows on its dashboard), and never reach the store, a report or a log.
- **Workers.** One actor per CPU of the cluster (`num_cpus=1`); each builds the agents
  once and runs up to `concurrency` runs at once with the local runner, so a run graded
  on a node is exactly the run graded in-process (same seeds, graders, timeouts and error
  rows). Actors are never restarted and their calls never retried by Ray.
- **Streaming.** The driver hands runs to the least-loaded worker one at a time and
  reports each record as soon as its run completes; only the driver writes the store,
  with the same idempotent run keys as the local executor, and the progress bar moves
  run by run.
- **Limits.** The suite's `limits:` live in one limiter actor on the driver's node; each
  worker asks it before every agent call, so a limit holds over all nodes. The response
  cache (`--cache`) is one actor on the driver's node over the driver's cache file.
- **Failures.** A worker or node that dies loses only its unfinished runs: they go to
  the live workers, up to `max_attempts` tries per run. A record that reached the driver
  is never run again, so a run is reported exactly once and an agent is not called again
  for a stored run. A run whose tries are used up, or that no live worker is left for,
  becomes an `infra` error row: a failed run the error-rate gate counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import traceback
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from evals.model.evaluation import EvaluationMeta
from evals.model.plan import PlannedRun
from evals.model.protocols import OnRecord
from evals.model.results import AgentResponse, RunRecord
from evals.model.suite import CallLimit, Suite
from evals.run.bundle import Bundle, stage_bundle, verify_bundle
from evals.run.limiter import CallLimiter
from evals.run.local import build_agents, close_agents, load_errors, suite_runner
from evals.run.runner import Runner, infra_record

MAX_ATTEMPTS = 3
START_TIMEOUT_S = 600.0
START_GRACE_S = 30.0
"""How long the other workers may take to answer once one has: every worker unpacks the
same bundle, so one still silent by then waits for a CPU the cluster does not have free
(a node gone, another job's actors); the runs go to the workers that answered."""
STOP_TIMEOUT_S = 60.0


def _detail(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


class LimiterServer:
    """The limiter actor: the suite's `limits:` for every worker of the evaluation.

    Calls are held per worker, so the slots of a worker that died are given back
    (`forget`) instead of leaking.
    """

    def __init__(self, limits: dict[str, CallLimit]) -> None:
        self.limiter = CallLimiter(limits)
        self.held: dict[int, list[tuple[str, ...]]] = {}
        self.gone: set[int] = set()

    async def acquire(self, keys: tuple[str, ...], holder: int) -> None:
        """Wait until a call under `keys` by worker `holder` may start."""
        await self.limiter.acquire(keys)
        if holder in self.gone:
            await self.limiter.release(keys, 0)
            return
        self.held.setdefault(holder, []).append(keys)

    async def release(self, keys: tuple[str, ...], tokens: int, holder: int) -> None:
        """Worker `holder`'s call under `keys` ended, having used `tokens` tokens."""
        held = self.held.get(holder, [])
        if keys in held:
            held.remove(keys)
            await self.limiter.release(keys, tokens)

    async def forget(self, holder: int) -> None:
        """Give back every slot worker `holder` held: it died."""
        self.gone.add(holder)
        for keys in self.held.pop(holder, []):
            await self.limiter.release(keys, 0)


class RemoteLimiter:
    """A worker's view of the limiter actor (the runner's `Limiter`)."""

    def __init__(self, actor: Any, names: tuple[str, ...], holder: int) -> None:
        self.actor = actor
        self._names = names
        self.holder = holder

    @property
    def names(self) -> tuple[str, ...]:
        """The `limits:` keys the actor enforces."""
        return self._names

    async def acquire(self, keys: tuple[str, ...]) -> None:
        """Wait for the limiter actor's go."""
        await self.actor.acquire.remote(keys, self.holder)

    async def release(self, keys: tuple[str, ...], tokens: int) -> None:
        """Tell the limiter actor the call ended."""
        await self.actor.release.remote(keys, tokens, self.holder)


class CacheServer:
    """The response cache actor: the driver's cache file, on the driver's node."""

    def __init__(self, path: str) -> None:
        from evals.run.cache import SqliteResponseCache

        self.cache = SqliteResponseCache(Path(path))

    def get(self, key: str) -> AgentResponse | None:
        """The cached response for `key`, or None."""
        return self.cache.get(key)

    def put(self, key: str, response: AgentResponse) -> None:
        """Remember a response."""
        self.cache.put(key, response)


class RemoteCache:
    """A worker's view of the cache actor (a `ResponseCache`)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def get(self, key: str) -> AgentResponse | None:
        """The cached response for `key`, asked of the cache actor."""
        import ray

        response: AgentResponse | None = ray.get(self.actor.get.remote(key))
        return response

    def put(self, key: str, response: AgentResponse) -> None:
        """Hand a response to the cache actor."""
        import ray

        ray.get(self.actor.put.remote(key, response))

    def close(self) -> None:
        """Nothing to release: the actor belongs to the driver."""


class RunWorker:
    """A worker actor: the evaluation's agents, built once, and the local runner."""

    def __init__(
        self,
        suite: Suite,
        meta: EvaluationMeta,
        trace: bool | None,
        concurrency: int,
        timeout_s: float | None,
        bundle: Bundle,
        holder: int,
        limiter: Any,
        cache: Any,
    ) -> None:
        self.suite = suite
        self.meta = meta
        self.trace = trace
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.bundle = bundle
        self.holder = holder
        self.limiter = limiter
        self.cache = cache
        self.runner: Runner | None = None
        self._resources = contextlib.ExitStack()

    async def start(
        self,
        env: dict[str, str],
        representatives: list[PlannedRun],
        driver_broken: frozenset[str],
    ) -> str | None:
        """Take the passed environment, check the shipped files, build the agents the plan
        calls (`representatives`: one planned run per agent).

        Returns None when ready, or why this worker cannot run anything: an agent that
        does not load here though it loads on the driver (`driver_broken` names the ones
        that do not load there either: their runs are error rows, as they are locally)
        means this worker's environment lacks something.
        """
        os.environ.update(env)
        try:
            problem = verify_bundle(Path.cwd(), self.bundle.digest)
            if problem is not None:
                return problem
            suite = replace(self.suite, path=Path.cwd() / self.bundle.suite_path)
            from evals.tracing import run_tracer

            tracer = self._resources.enter_context(run_tracer(suite, self.meta, self.trace))
            cache = None if self.cache is None else RemoteCache(self.cache)
            agents = build_agents(suite, representatives, cache)
            problem = next(
                (error for key, error in load_errors(agents).items() if key not in driver_broken),
                None,
            )
            if problem is not None:
                await close_agents(agents)
                return f"worker could not start: {problem}"
            limiter = None
            if self.limiter is not None:
                limiter = RemoteLimiter(self.limiter, tuple(suite.limits), self.holder)
            self.runner = suite_runner(
                suite,
                agents,
                concurrency=self.concurrency,
                timeout_s=self.timeout_s,
                tracer=tracer,
                limiter=limiter,
            )
        except Exception as exc:
            return f"worker could not start: {_detail(exc)}"
        return None

    async def execute(self, run: PlannedRun) -> RunRecord:
        """Run, grade and return one planned run (each call carries its run: a worker
        never holds the plan)."""
        if self.runner is None:
            raise RuntimeError("execute called on a worker that did not start")
        return await self.runner.execute(run)

    async def node(self) -> str:
        """The id of the node this worker runs on."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    async def stop(self) -> None:
        """Close the agents and flush the worker's traces."""
        if self.runner is not None:
            await close_agents(self.runner.agents)
        self._resources.close()


async def _broken_agents(suite: Suite, representatives: list[PlannedRun]) -> frozenset[str]:
    """The agents of the plan that do not load on the driver either (their runs are
    error rows on every worker, as they would be locally)."""
    agents = build_agents(suite, representatives)
    try:
        return frozenset(load_errors(agents))
    finally:
        await close_agents(agents)


def _driver_node(ray: Any) -> Any:
    """A scheduling strategy that pins an actor to the driver's node."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)


class RayExecutor:
    """Executes planned runs on Ray worker actors and streams each record back."""

    def __init__(
        self,
        suite: Suite,
        *,
        meta: EvaluationMeta,
        concurrency: int,
        timeout_s: float | None,
        trace: bool | None = None,
        cache_path: Path | None = None,
        address: str | None = None,
        pass_env: tuple[str, ...] = (),
        workers: int | None = None,
        max_attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self.suite = suite
        self.meta = meta
        self.trace = trace
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self.cache_path = cache_path
        self.address = address
        self.pass_env = pass_env
        self.workers = workers
        self.max_attempts = max(1, max_attempts)

    def _connect(self, runtime_env: dict[str, Any], scratch: str) -> tuple[Any, Any]:
        """Ray, connected, and the workers' runtime_env with the bundle uploaded.

        Connecting here makes the bundle the job's runtime_env (this works through a
        `ray://` client too); in a process already connected, the bundle is uploaded to
        the cluster for the workers alone.
        """
        import ray

        if not ray.is_initialized():
            ray.init(
                address=self.address,
                runtime_env=runtime_env,
                log_to_driver=False,
                include_dashboard=False,
            )
            return ray, None
        from ray._private.runtime_env.working_dir import upload_working_dir_if_needed

        return ray, upload_working_dir_if_needed(
            runtime_env, include_gitignore=False, scratch_dir=scratch
        )

    async def run(self, plan: Iterable[PlannedRun], on_record: OnRecord) -> None:
        """Execute every planned run once, reporting each record as it completes.

        The plan is read twice, once for the agents it calls and once as the runs go to
        the workers, never listed: a plan that can be read only once (an iterator) is
        listed first."""
        if isinstance(plan, Iterator):
            plan = list(plan)
        representatives = list({run.agent_key: run for run in plan}.values())
        if not representatives:
            return
        with (
            tempfile.TemporaryDirectory(prefix="evals-bundle-") as staging,
            tempfile.TemporaryDirectory(prefix="evals-upload-") as scratch,
        ):
            bundle = stage_bundle(self.suite, Path(staging))
            ray, runtime_env = self._connect(bundle.runtime_env(self.suite), scratch)
            helpers = self._helpers(ray)
            workers = self._workers(ray, bundle, runtime_env, helpers)
            silent: set[int] = set()
            try:
                driver_broken = await _broken_agents(self.suite, representatives)
                live, problem, silent = await self._start(workers, representatives, driver_broken)
                await _Dispatch(ray, workers, live, problem, helpers[0], self).run(
                    iter(plan), on_record
                )
            finally:
                await self._shutdown(ray, workers, helpers, silent)

    def _helpers(self, ray: Any) -> tuple[Any, Any]:
        """The limiter and cache actors, on the driver's node (None when not needed)."""
        place = _driver_node(ray)
        limiter = cache = None
        if self.suite.limits:
            limiter = (
                ray.remote(LimiterServer)
                .options(num_cpus=0, max_concurrency=10_000, scheduling_strategy=place)
                .remote(self.suite.limits)
            )
        if self.cache_path is not None:
            cache = (
                ray.remote(CacheServer)
                .options(num_cpus=0, max_concurrency=1, scheduling_strategy=place)
                .remote(str(self.cache_path.resolve()))
            )
        return limiter, cache

    def _workers(
        self, ray: Any, bundle: Bundle, runtime_env: Any, helpers: tuple[Any, Any]
    ) -> list[Any]:
        """One worker actor per CPU (or `workers`), with the bundle as working_dir (the
        job's, when `runtime_env` is None)."""
        count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor = ray.remote(RunWorker).options(
            num_cpus=1,
            max_restarts=0,
            max_task_retries=0,
            max_concurrency=self.concurrency + 2,
            runtime_env=runtime_env,
        )
        return [
            actor.remote(
                self.suite,
                self.meta,
                self.trace,
                self.concurrency,
                self.timeout_s,
                bundle,
                index,
                *helpers,
            )
            for index in range(count)
        ]

    async def _start(
        self,
        workers: list[Any],
        representatives: list[PlannedRun],
        driver_broken: frozenset[str],
    ) -> tuple[set[int], str, set[int]]:
        """Start every worker; the ones ready, why the others are not, and the ones that
        never answered (still silent `START_GRACE_S` after the first answer)."""
        import ray

        env = {name: os.environ[name] for name in self.pass_env if name in os.environ}
        agents = ray.put(representatives)  # stored once in the cluster, read by every worker
        starting = {
            asyncio.wrap_future(worker.start.remote(env, agents, driver_broken).future()): index
            for index, worker in enumerate(workers)
        }
        done, pending = await asyncio.wait(
            starting, timeout=START_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
        )
        if done and pending:
            more, pending = await asyncio.wait(pending, timeout=START_GRACE_S)
            done |= more
        live: set[int] = set()
        problems: list[str] = []
        for future in done:
            try:
                problem = future.result()
            except Exception as exc:
                problem = f"worker could not start: {_detail(exc)}"
            if problem is None:
                live.add(starting[future])
            else:
                problems.append(problem)
        if pending:
            waited = START_GRACE_S if done else START_TIMEOUT_S
            problems.append(f"{len(pending)} workers did not start in {waited:g} s")
        silent = {starting[future] for future in pending}
        return live, problems[0] if problems else "no worker started", silent

    async def _shutdown(
        self, ray: Any, workers: list[Any], helpers: tuple[Any, Any], silent: set[int]
    ) -> None:
        """Stop the workers that answered (a silent one would never take the call either),
        then kill every actor."""
        stopping = [
            asyncio.wrap_future(worker.stop.remote().future())
            for index, worker in enumerate(workers)
            if index not in silent
        ]
        if stopping:
            stopped, _ = await asyncio.wait(stopping, timeout=STOP_TIMEOUT_S)
            for future in stopped:
                future.exception()  # a dead worker cannot stop: nothing to report
        for actor in [*workers, *helpers]:
            if actor is not None:
                ray.kill(actor)


class _Dispatch:
    """The driver's loop: hand runs to live workers as they have room, collect each record,
    reschedule the runs of workers that died. It holds the runs in flight and those waiting
    for another attempt, never the plan: the next run is read from it when a worker has
    room."""

    def __init__(
        self,
        ray: Any,
        workers: list[Any],
        live: set[int],
        problem: str,
        limiter: Any,
        executor: RayExecutor,
    ) -> None:
        self.ray = ray
        self.workers = workers
        self.live = live
        self.problem = problem
        self.limiter = limiter
        self.capacity = executor.concurrency
        self.max_attempts = executor.max_attempts
        self.load = dict.fromkeys(live, 0)
        self.retries: deque[tuple[PlannedRun, int]] = deque()
        self.inflight: dict[asyncio.Future[RunRecord], tuple[PlannedRun, int, int]] = {}

    def _next(self, plan: Iterator[PlannedRun]) -> tuple[PlannedRun, int] | None:
        """The next run to hand out with the attempts it had: a retry first, else the plan's
        next run."""
        if self.retries:
            return self.retries.popleft()
        run = next(plan, None)
        return None if run is None else (run, 0)

    def _submit(self, plan: Iterator[PlannedRun]) -> None:
        while self.live:
            index = min(self.live, key=lambda i: self.load[i])
            if self.load[index] >= self.capacity:
                return
            taken = self._next(plan)
            if taken is None:
                return
            run, tries = taken
            future = asyncio.wrap_future(self.workers[index].execute.remote(run).future())
            self.inflight[future] = (run, index, tries + 1)
            self.load[index] += 1

    def _lose(self, index: int) -> None:
        """Worker `index` died: no more runs for it, its limiter slots given back."""
        if index in self.live:
            self.live.discard(index)
            self.problem = f"worker {index} died"
            self.ray.kill(self.workers[index])
            if self.limiter is not None:
                self.limiter.forget.remote(index)

    async def run(self, plan: Iterator[PlannedRun], on_record: OnRecord) -> None:
        from ray.exceptions import RayError, RayTaskError

        self._submit(plan)
        while self.inflight:
            done, _ = await asyncio.wait(self.inflight, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                run, index, tries = self.inflight.pop(future)
                self.load[index] -= 1
                try:
                    record = future.result()
                except RayTaskError:
                    raise  # the harness's own fault on the worker, as it would be locally
                except RayError as exc:
                    self._lose(index)
                    if tries < self.max_attempts:
                        self.retries.appendleft((run, tries))
                    else:
                        message = f"{_detail(exc)} (tried {tries} times)"
                        on_record(infra_record(run, message))
                    continue
                on_record(record)
            self._submit(plan)
        while (taken := self._next(plan)) is not None:
            on_record(infra_record(taken[0], f"no live Ray worker: {self.problem}"))

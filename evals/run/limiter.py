"""The suite's `limits:` enforced: calls in flight, requests and tokens per minute.

`CallLimiter` keeps the limits of one evaluation on one event loop. The local executor
calls it directly; on a Ray cluster one limiter actor on the driver's node holds it and
every worker asks that actor before each agent call, so a limit holds over all nodes.
Waiting for a limit happens before the run's clock starts: it is neither latency nor
timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Protocol

from evals.model.suite import CallLimit, ProviderSpec

TOKEN_POLL_S = 0.5


class Limiter(Protocol):
    """What the runner asks before and tells after each agent call."""

    @property
    def names(self) -> tuple[str, ...]:
        """The `limits:` keys this limiter enforces."""
        ...

    async def acquire(self, keys: tuple[str, ...]) -> None:
        """Wait until a call under every limit in `keys` may start."""
        ...

    async def release(self, keys: tuple[str, ...], tokens: int) -> None:
        """A call under `keys` ended having used `tokens` tokens."""
        ...


def limit_keys(provider: ProviderSpec, label: str, names: Iterable[str]) -> tuple[str, ...]:
    """The `limits:` keys a call of `provider` (in the agent column `label`) is under.

    A key applies when it equals the label, the provider's id, the id's scheme (the text
    before its first `:`), or is `*`.
    """
    matching = {"*", label, provider.id, provider.id.split(":", 1)[0]}
    return tuple(sorted(name for name in names if name in matching))


class CallLimiter:
    """Per-key concurrency, evenly spaced request starts and a token allowance.

    Requests per minute are paced, not counted per clock minute: starts are at least
    60 / rate seconds apart, so no burst exceeds the rate in any window (providers
    enforce their per-minute limits over shorter windows too). Tokens per minute are an
    allowance that refills continuously up to one minute's worth; calls reporting their
    usage draw it down, and new calls wait while it is spent.
    """

    def __init__(
        self, limits: dict[str, CallLimit], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = dict(limits)
        self.clock = clock
        self._slots = {
            key: asyncio.Semaphore(limit.concurrency)
            for key, limit in self.limits.items()
            if limit.concurrency
        }
        self._next_start = dict.fromkeys(self.limits, 0.0)
        now = clock()
        self._allowance = {
            key: (float(limit.tokens_per_minute), now)
            for key, limit in self.limits.items()
            if limit.tokens_per_minute
        }

    @property
    def names(self) -> tuple[str, ...]:
        """The keys of `limits:`."""
        return tuple(self.limits)

    def _tokens_left(self, key: str) -> float:
        """The key's token allowance now (refilled since it was last drawn)."""
        level, stamp = self._allowance[key]
        per_minute = float(self.limits[key].tokens_per_minute or 0)
        now = self.clock()
        level = min(per_minute, level + (now - stamp) * per_minute / 60.0)
        self._allowance[key] = (level, now)
        return level

    async def _wait_for_tokens(self, key: str) -> None:
        per_second = float(self.limits[key].tokens_per_minute or 0) / 60.0
        while (left := self._tokens_left(key)) <= 0:
            # look again at least twice a second: the clock is the limiter's to read
            await asyncio.sleep(min(TOKEN_POLL_S, (1.0 - left) / per_second))

    async def acquire(self, keys: tuple[str, ...]) -> None:
        """Take a slot under each key, wait for tokens, then for the next paced start."""
        taken: list[asyncio.Semaphore] = []
        try:
            for key in sorted(keys):  # one order everywhere: no two calls wait on each other
                slot = self._slots.get(key)
                if slot is not None:
                    await slot.acquire()
                    taken.append(slot)
            for key in keys:
                if key in self._allowance:
                    await self._wait_for_tokens(key)
            paced = [k for k in keys if self.limits[k].requests_per_minute]
            if paced:
                now = self.clock()
                start = max([now, *(self._next_start[k] for k in paced)])
                for key in paced:
                    rate = float(self.limits[key].requests_per_minute or 0)
                    self._next_start[key] = start + 60.0 / rate
                if start > now:
                    await asyncio.sleep(start - now)
        except BaseException:
            for slot in taken:
                slot.release()
            raise

    async def release(self, keys: tuple[str, ...], tokens: int) -> None:
        """Free the call's slots and draw its tokens from the allowances."""
        for key in keys:
            slot = self._slots.get(key)
            if slot is not None:
                slot.release()
            if key in self._allowance and tokens > 0:
                level = self._tokens_left(key)
                self._allowance[key] = (level - tokens, self.clock())

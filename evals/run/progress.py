"""Progress of an evaluation on stderr: a live bar on a terminal, sparse lines in CI logs.

`advance` is called once per finished run from the runner's callback, so it only counts
and reads a monotonic clock; drawing happens at most every `REFRESH_S` seconds on a
terminal, and at every tenth of the total or every `LOG_EVERY_S` seconds in a log.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from evals.model.results import RunRecord

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

REFRESH_S = 0.1
LOG_EVERY_S = 5.0


class Progress:
    """Counts finished runs by status and shows them: done/total, passes, failures,
    errors and the rate in runs per second."""

    def __init__(self, total: int, enabled: bool = True, console: Console | None = None) -> None:
        self.total = total
        self.counts = {"pass": 0, "fail": 0, "error": 0}
        self.done = 0
        self._enabled = enabled and total > 0
        self._console: Console  # set when shown: rich loads only for a shown progress
        self._started = time.monotonic()
        self._next_draw = 0.0
        self._next_log_count = 0
        self._last_logged = 0
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None
        if not self._enabled:
            return
        if console is None:
            from rich.console import Console

            console = Console(stderr=True)
        self._console = console
        if self._console.is_terminal:  # the live bar's module loads only when it is drawn
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("[bold]runs"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=self._console,
                transient=True,
            )
            self._task = self._bar.add_task(self._status(), total=total)
            self._bar.start()
        else:
            self._next_log_count = self._log_step()

    def _log_step(self) -> int:
        return max(1, self.total // 10)

    def _status(self) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        return (
            f"[green]{self.counts['pass']} pass[/] [red]{self.counts['fail']} fail[/] "
            f"[magenta]{self.counts['error']} error[/] {self.done / elapsed:.1f} runs/s"
        )

    def _plain_line(self) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        share = self.done / self.total * 100
        return (
            f"runs {self.done}/{self.total} ({share:.0f}%): {self.counts['pass']} pass, "
            f"{self.counts['fail']} fail, {self.counts['error']} error, "
            f"{self.done / elapsed:.1f} runs/s"
        )

    def advance(self, record: RunRecord) -> None:
        """Count one finished run and redraw when it is time to."""
        self.done += 1
        self.counts[record.status] = self.counts.get(record.status, 0) + 1
        if not self._enabled:
            return
        now = time.monotonic()
        if self._bar is not None:
            if self._task is not None and (now >= self._next_draw or self.done == self.total):
                self._next_draw = now + REFRESH_S
                self._bar.update(self._task, completed=self.done, description=self._status())
            return
        if self.done >= self._next_log_count or now >= self._next_draw:
            self._next_log_count = self.done + self._log_step()
            self._next_draw = now + LOG_EVERY_S
            self._log()

    def _log(self) -> None:
        self._last_logged = self.done
        self._console.print(self._plain_line(), highlight=False, soft_wrap=True)

    def close(self) -> None:
        """Stop drawing; in a log, print the final count unless it was just printed."""
        if not self._enabled:
            return
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self.done != self._last_logged:
            self._log()
        self._enabled = False

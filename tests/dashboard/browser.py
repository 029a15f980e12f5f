"""Serving `evals dashboard` and driving it in headless Chromium, for the browser tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from evals.team.serving import STREAMLIT_OPTIONS

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    """A TCP port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_serving(port: int, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"evals dashboard exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"evals dashboard did not listen on port {port}")


@contextmanager
def _served(command: list[str], port: int, timeout_s: float) -> Iterator[str]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_until_serving(port, process, timeout_s)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=20)


@contextmanager
def serve(store_url: str, timeout_s: float = 60) -> Iterator[str]:
    """Run `evals dashboard` on `store_url`; yields its address, stops it on exit."""
    port = free_port()
    command = [sys.executable, "-m", "evals", "dashboard", "--store", store_url]
    with _served([*command, "--port", str(port)], port, timeout_s) as address:
        yield address


@contextmanager
def serve_script(script: str, timeout_s: float = 60) -> Iterator[str]:
    """Run a plain Streamlit `script` the way `evals dashboard` runs its app (on the
    loopback interface, with its Streamlit options); yields its address, stops it on exit."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port)]
    options = ["--server.address", "127.0.0.1", *STREAMLIT_OPTIONS]
    with _served([*command, *options], port, timeout_s) as address:
        yield address


@contextmanager
def chromium(executable: str) -> Iterator[Any]:
    """A headless Chromium launched by Playwright from `executable`; closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def script_finished(payload: Any) -> bool:
    """Whether a websocket frame from the server says the page's script finished."""
    if isinstance(payload, str):
        return False
    message = ForwardMsg()
    message.ParseFromString(payload)
    return message.WhichOneof("type") == "script_finished"


# True once no element of the page is still a placeholder awaiting its component's code.
SKELETONS_GONE = "document.querySelectorAll('[data-testid=\"stSkeleton\"]').length === 0"


class ScriptRuns:
    """Counts the page's script runs the server reports finished, to wait for the next."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.finished: list[float] = []
        # The page's own clock (`performance.now()`, seconds) when the last `after` saw
        # it drawn: after a navigation, the seconds since the navigation began.
        self.drawn_on_page_clock = 0.0
        page.on("websocket", self._watch)

    def _watch(self, socket: Any) -> None:
        socket.on(
            "framereceived",
            lambda payload: (
                self.finished.append(time.perf_counter()) if script_finished(payload) else None
            ),
        )

    def after(self, action: Any, timeout_s: float = 300) -> float:
        """Do `action` (a navigation, a click), wait until a script run finishes after it,
        the page is quiet and every element is drawn (no loading skeleton left); returns
        the seconds until the page was drawn."""
        seen = len(self.finished)
        began = time.perf_counter()
        action()
        while len(self.finished) <= seen:
            if time.perf_counter() - began > timeout_s:
                raise TimeoutError(f"no script run finished within {timeout_s:.0f} s")
            self.page.wait_for_timeout(20)
        while True:
            count = len(self.finished)
            seen_at = self.page.wait_for_function(
                f"() => ({SKELETONS_GONE}) && performance.now()", timeout=timeout_s * 1000
            )
            drawn = time.perf_counter() - began
            self.drawn_on_page_clock = float(seen_at.json_value()) / 1000
            self.page.wait_for_timeout(700)
            if len(self.finished) == count:
                return drawn


class ConsoleErrors:
    """Console errors of a page, and every request the server refused (status 400 or
    more). The dashboard's page shell names the server's address, so even a page opened
    at its own address (`/case`) makes no failing request (no `/case/_stcore/health`
    probe)."""

    def __init__(self, page: Any) -> None:
        self.messages: list[str] = []
        page.on("console", self._console)
        page.on("response", self._response)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.messages.append(message.text)

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.messages.append(f"{response.status} {response.url}")

    def unexpected(self) -> list[str]:
        """Every console error and refused request seen so far."""
        return list(self.messages)

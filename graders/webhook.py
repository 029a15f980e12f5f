"""promptfoo's webhook assertion: an HTTP endpoint decides.

The output and `{prompt, vars}` are POSTed as JSON to the assertion's URL; the endpoint
answers `{pass, score?, reason?}`. Like promptfoo, a request that cannot be sent is retried
with exponential backoff (`PROMPTFOO_REQUEST_BACKOFF_MS`, 4 retries) and each attempt times
out after `WEBHOOK_TIMEOUT` ms (default 5000); a non-2xx status or a body that is not JSON
fails the assertion with the reason starting "Webhook error: ".
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from typing import TYPE_CHECKING, Any

from evals.common.jsvalues import js_stringify
from evals.graders.base import GradeContext
from evals.graders.jscompat import invariant
from evals.graders.registry import register
from evals.model.results import Grade

if TYPE_CHECKING:
    import httpx

MAX_RETRIES = 4


class WebhookError(Exception):
    """The webhook could not be reached or gave an unusable answer."""


def _env_ms(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


async def post_with_retries(url: str, body: str) -> httpx.Response:
    """POST `body`, retrying transport failures with promptfoo's backoff schedule."""
    import httpx  # heavy; imported only when a suite posts to a webhook

    timeout = _env_ms("WEBHOOK_TIMEOUT", 5000) / 1000
    backoff_ms = _env_ms("PROMPTFOO_REQUEST_BACKOFF_MS", 5000)
    last = ""
    async with httpx.AsyncClient(timeout=timeout) as client:
        for attempt in range(MAX_RETRIES + 1):
            try:
                return await client.post(
                    url, content=body, headers={"Content-Type": "application/json"}
                )
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
                if attempt < MAX_RETRIES:
                    await asyncio.sleep(2**attempt * (backoff_ms + 1000 * random.random()) / 1000)
    raise WebhookError(f"Request failed after {MAX_RETRIES} retries: {last}")


def _score(answer: dict[str, Any], passed: bool, inverse: bool) -> float:
    if "score" not in answer:
        return 1.0 if passed else 0.0
    score = float(answer["score"])
    return 1.0 - score if inverse else score


@register("webhook", layer="final", promptfoo=True)
async def webhook(ctx: GradeContext) -> Grade:
    """The endpoint's `pass` decides (`not-webhook` inverts it), with its score and reason."""
    url = ctx.value
    invariant(url, '"webhook" assertion type must have a URL value')
    invariant(isinstance(url, str), '"webhook" assertion type must have a URL value')
    body = js_stringify({"output": ctx.output, "context": {"prompt": ctx.prompt, "vars": ctx.vars}})
    try:
        response = await post_with_retries(url, body)
        if not response.is_success:
            raise WebhookError(f"Webhook response status: {response.status_code}")
        answer = json.loads(response.text)
        if not isinstance(answer, dict):
            raise WebhookError(f"Webhook returned {js_stringify(answer)}, not an object")
        verdict = answer.get("pass")
        passed = not (isinstance(verdict, bool) and verdict == ctx.inverse)
        score = _score(answer, passed, ctx.inverse)
    except (WebhookError, ValueError, TypeError) as exc:
        return Grade(False, 0.0, f"Webhook error: {exc}", ctx.assertion.raw)
    fallback = "Assertion passed" if passed else f"Webhook returned {str(ctx.inverse).lower()}"
    return Grade(passed, score, answer.get("reason") or fallback, ctx.assertion.raw)

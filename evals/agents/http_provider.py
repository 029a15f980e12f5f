"""promptfoo's `http`/`https` provider: an agent behind an HTTP endpoint.

Config as in promptfoo: `url` (or the provider id itself), `method` (GET unless set),
`headers`, `body` and `queryParams` templated with the case's vars and `{{prompt}}`,
`transformRequest` (over `prompt`, `vars`, `context`) and `transformResponse` /
`responseParser` (over `json`, `text`, `context`), `validateStatus` (over `status`).
Transforms are Python (see evals.common.transforms); JavaScript-style paths such as
`json.choices[0].message.content` read the same.

Two harness choices differ from promptfoo and are documented in docs/agents.md: a reply
that is already a provider response (`{"output": ...}` or `{"error": ...}`) is taken as
is when no transformResponse is set, and a status outside 200-399 is an error unless
`validateStatus` says otherwise.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from evals.agents.base import CallContext, normalize_response
from evals.agents.processes import MAX_REPLY_BYTES
from evals.agents.validate import MalformedResponse, load_json
from evals.common.templating import render, render_value
from evals.common.transforms import Transform, TransformError, compile_transform, http_body
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec

_RESPONSE_PARAMS = ("json", "text", "context")
_REQUEST_PARAMS = ("prompt", "vars", "context")


def _status_body(code: str) -> str:
    """promptfoo's validateStatus: a function expression is called, anything else returned."""
    text = code.strip()
    if "=>" in text or text.startswith("function"):
        return f"return ({text})(status);"
    return f"return {text}"


_ERROR_BODY_CHARS = 500
# Redirects followed at most, as fetch does (promptfoo calls endpoints with fetch).
MAX_REDIRECTS = 20


async def read_body(reply: httpx.Response, limit: int | None = None) -> bytes:
    """The body of a streamed reply; MalformedResponse as soon as it passes `limit` bytes
    (by default MAX_REPLY_BYTES)."""
    limit = MAX_REPLY_BYTES if limit is None else limit
    body = bytearray()
    async for chunk in reply.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise MalformedResponse(f"the HTTP reply is larger than {limit >> 20} MiB")
    return bytes(body)


def endpoint_url(spec: ProviderSpec) -> str | None:
    """The configured URL: `config.url`, else the provider id when it is a URL."""
    url = spec.config.get("url")
    if url:
        return str(url)
    if spec.id.startswith(("http://", "https://")):
        return spec.id
    return None


def _json_content_type(headers: dict[str, str]) -> bool:
    return any(
        k.lower().startswith("content-type") and "application/json" in str(v)
        for k, v in headers.items()
    )


def _default_headers(method: str, body: Any) -> dict[str, str]:
    if method.upper() == "GET":
        return {}
    if isinstance(body, (dict, list)):
        return {"content-type": "application/json"}
    if isinstance(body, str):
        return {"content-type": "application/x-www-form-urlencoded"}
    return {}


def check_http_config(spec: ProviderSpec, root: Path) -> None:
    """Reject an HTTP provider config that cannot work, before any run."""
    config = spec.config
    if endpoint_url(spec) is None:
        raise SuiteError(
            f"HTTP provider {spec.label!r} has no url",
            line=spec.line,
            fix="add config: {url: 'https://host/path', method: POST, body: {...}}",
        )
    method = str(config.get("method") or "GET")
    if config.get("body") is None and method.upper() != "GET":
        raise SuiteError(
            f"HTTP provider {spec.label!r} uses {method} without a body",
            line=spec.line,
            fix="add config.body (for example {input: '{{prompt}}'}) or use method: GET",
        )
    HttpAgent(spec, root, client=False)


def _parse_json_leaves(value: Any) -> Any:
    if isinstance(value, list):
        return [_parse_json_leaves(v) for v in value]
    if isinstance(value, dict):
        return {k: _parse_json_leaves(v) for k, v in value.items()}
    if isinstance(value, str) and value.strip().startswith(("{", "[")):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return value
        return parsed if isinstance(parsed, (dict, list)) else value
    return value


def render_json_body(body: Any, variables: dict[str, Any]) -> Any:
    """Render a JSON body's string leaves; leaves that render to JSON objects are parsed.

    This is promptfoo's processJsonBody: `messages: '{{ history | dump }}'` sends an array.
    """
    rendered = render_value(body, variables)
    if isinstance(rendered, str):
        try:
            return json.loads(rendered)
        except json.JSONDecodeError:
            return rendered
    return _parse_json_leaves(rendered)


def _js_truthy(value: Any) -> bool:
    return value not in (None, "", 0, False) or isinstance(value, (dict, list))


class HttpAgent:
    """An agent behind an HTTP endpoint, one pooled client per agent."""

    def __init__(self, spec: ProviderSpec, root: Path, *, client: bool = True) -> None:
        config = spec.config
        self.label = spec.label
        self.url = endpoint_url(spec) or ""
        self.method = str(config.get("method") or "GET")
        self.body = config.get("body")
        self.query_params: dict[str, Any] = dict(config.get("queryParams") or {})
        self.tools = config.get("tools")
        self.tool_choice = config.get("tool_choice")
        configured = {str(k).lower(): str(v) for k, v in (config.get("headers") or {}).items()}
        self.headers = {**_default_headers(self.method, self.body), **configured}
        self.is_json = _json_content_type(self.headers)
        if isinstance(self.body, str) and self.is_json:
            with contextlib.suppress(json.JSONDecodeError):
                self.body = json.loads(self.body)
        if isinstance(self.body, (dict, list)) and not self.is_json:
            raise SuiteError(
                f"HTTP provider {spec.label!r} has an object body but its Content-Type "
                "is not application/json",
                line=spec.line,
                fix="set headers: {Content-Type: application/json} or make the body a string",
            )
        self.transform_response = self._transform(
            config.get("transformResponse") or config.get("responseParser"),
            _RESPONSE_PARAMS,
            root,
            "transformResponse",
            lambda code: http_body(code, _RESPONSE_PARAMS, allow_statements=False),
        )
        self.transform_request = self._transform(
            config.get("transformRequest"),
            _REQUEST_PARAMS,
            root,
            "transformRequest",
            lambda code: http_body(code, _REQUEST_PARAMS, allow_statements=True),
        )
        self.validate_status = self._transform(
            config.get("validateStatus"), ("status",), root, "validateStatus", _status_body
        )
        timeout_ms = config.get("timeout")
        self.client = (
            httpx.AsyncClient(
                timeout=None if timeout_ms is None else float(timeout_ms) / 1000,
                follow_redirects=True,
                max_redirects=MAX_REDIRECTS,
            )
            if client
            else None
        )

    @staticmethod
    def _transform(
        source: Any,
        params: tuple[str, ...],
        root: Path,
        what: str,
        body: Callable[[str], str],
    ) -> Transform | None:
        if source is None:
            return None
        try:
            return compile_transform(source, params, root, what, body, default="transform")
        except SuiteError as exc:
            exc.message = f"HTTP provider {what}: {exc.message}"
            raise

    def _variables(self, prompt: str, context: CallContext) -> dict[str, Any]:
        variables: dict[str, Any] = {**context.vars, "prompt": prompt}
        for name, value in (("tools", self.tools), ("tool_choice", self.tool_choice)):
            if value is not None:
                variables[name] = json.dumps(value) if isinstance(value, (dict, list)) else value
        return variables

    def _request_body(self, prompt: Any, variables: dict[str, Any]) -> Any:
        if self.is_json:
            if isinstance(prompt, dict):
                return {**(self.body if isinstance(self.body, dict) else {}), **prompt}
            if isinstance(prompt, list):
                return prompt
            return render_json_body(self.body, {**variables, "prompt": prompt})
        if self.body is None:
            return None
        return render(str(self.body), {**variables, "prompt": prompt})

    def _content(self, body: Any) -> str | None:
        if self.method.upper() == "GET" or body is None:
            return None
        if self.is_json and not isinstance(body, str):
            return json.dumps(body, ensure_ascii=False)
        return body.strip() if isinstance(body, str) else str(body)

    def _status_ok(self, status: int) -> bool:
        if self.validate_status is None:
            return 200 <= status < 400
        return bool(self.validate_status(status))

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Send one request built from the case and read the reply as a provider response."""
        if self.client is None:
            raise RuntimeError("this HttpAgent was built for validation only")
        variables = self._variables(prompt, context)
        request_prompt: Any = prompt
        if self.transform_request is not None:
            try:
                request_prompt = self.transform_request(
                    prompt, variables, context.promptfoo_context()
                )
            except TransformError as exc:
                return AgentResponse(error=f"Failed to transform request: {exc}")
        headers = {k: render(v, variables) for k, v in self.headers.items()}
        if context.traceparent:
            headers["traceparent"] = context.traceparent
        params = {k: render(str(v), variables) for k, v in self.query_params.items()}
        try:
            async with self.client.stream(
                render(self.method, variables).upper(),
                render(self.url, variables),
                headers=headers,
                params=params or None,
                content=self._content(self._request_body(request_prompt, variables)),
            ) as reply:
                body = await read_body(reply)
        except httpx.HTTPError as exc:
            return AgentResponse(error=f"HTTP request failed: {type(exc).__name__}: {exc}")
        return self._read_reply(reply, body)

    def _read_reply(self, reply: httpx.Response, body: bytes) -> AgentResponse:
        text = body.decode(reply.encoding or "utf-8", errors="replace")
        http_meta = {
            "status": reply.status_code,
            "statusText": reply.reason_phrase,
            "headers": dict(reply.headers),
        }
        latency_ms = reply.elapsed.total_seconds() * 1000.0
        if not self._status_ok(reply.status_code):
            shown = text if len(text) <= _ERROR_BODY_CHARS else text[:_ERROR_BODY_CHARS] + "…"
            return AgentResponse(
                error=f"HTTP call failed with status {reply.status_code} "
                f"{reply.reason_phrase}: {shown}",
                metadata={"http": http_meta},
                latency_ms=latency_ms,
            )
        try:
            data = load_json(text, "the HTTP reply") if text else None
        except json.JSONDecodeError:
            data = None
        if self.transform_response is not None:
            info = {"response": {**http_meta, "data": text, "cached": False}}
            try:
                parsed = self.transform_response(data, text, info)
            except TransformError as exc:
                return AgentResponse(
                    error=f"Failed to transform response: {exc}", metadata={"http": http_meta}
                )
        elif isinstance(data, dict) and ("output" in data or "error" in data):
            parsed = data
        else:
            parsed = data if _js_truthy(data) else text
        if not (isinstance(parsed, dict) and ("output" in parsed or "error" in parsed)):
            parsed = {"output": parsed}
        metadata = parsed.get("metadata")
        merged = {
            "latencyMs": latency_ms,
            **parsed,
            "metadata": {"http": http_meta, **(metadata if isinstance(metadata, dict) else {})},
        }
        if not merged.get("tokenUsage"):
            merged["tokenUsage"] = {"numRequests": 1}
        return normalize_response(merged)

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self.client is not None:
            await self.client.aclose()

"""http/https providers against a local server: templating, traceparent, transforms, statuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.agents.http_provider import HttpAgent, check_http_config, render_json_body
from evals.agents.validate import MalformedResponse
from evals.common.transforms import compile_transform, http_body
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec
from evals.suite import load_suite

from .helpers import TRACEPARENT, make_context, run
from .servers import Reply, Request, serve


def _answer(request: Request) -> Reply:
    body = request.json if request.body else None
    return Reply({"choices": [{"message": {"content": f"got {body}"}}], "n": 2})


ROUTES = {
    "/chat": _answer,
    "/provider": lambda r: Reply(
        {"output": "ready", "tokenUsage": {"prompt_tokens": 7, "completion_tokens": 3}, "cost": 1}
    ),
    "/text": lambda r: Reply("plain words"),
    "/boom": lambda r: Reply({"detail": "exploded"}, status=500),
    "/teapot": lambda r: Reply("short and stout", status=418),
}


def _call(config: dict, prompt: str = "hola", root: Path = Path("."), **vars) -> AgentResponse:
    async def go() -> AgentResponse:
        agent = HttpAgent(ProviderSpec(id="https", label="h", config=config), root)
        try:
            return await agent.call(prompt, make_context(prompt, **vars))
        finally:
            await agent.aclose()

    return run(go())


def test_method_headers_body_and_query_are_templated():
    with serve(ROUTES) as server:
        response = _call(
            {
                "url": server.url + "/chat",
                "method": "POST",
                "headers": {"Content-Type": "application/json", "X-User": "{{user}}"},
                "body": {"input": "{{prompt}}", "history": "{{ turns | dump }}", "n": 3},
                "queryParams": {"case": "{{user}}-1"},
                "transformResponse": "json.choices[0].message.content",
            },
            prompt='say "hi"',
            user="ana",
            turns=[{"role": "user", "content": "x"}],
        )
        request = server.requests[0]
    assert request.method == "POST"
    assert request.headers["x-user"] == "ana"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["traceparent"] == TRACEPARENT
    assert request.query == {"case": ["ana-1"]}
    assert request.json == {
        "input": 'say "hi"',
        "history": [{"role": "user", "content": "x"}],
        "n": 3,
    }
    assert response.output.startswith("got {'input': 'say \"hi\"'")
    assert response.metadata["http"]["status"] == 200
    assert response.token_usage == {"numRequests": 1}


def test_default_method_is_get_without_a_body():
    with serve(ROUTES) as server:
        response = _call({"url": server.url + "/text"})
        request = server.requests[0]
    assert (request.method, request.body) == ("GET", b"")
    assert response.output == "plain words"


def test_provider_shaped_json_is_accepted_as_is():
    with serve(ROUTES) as server:
        response = _call(
            {"url": server.url + "/provider", "method": "POST", "body": "q={{prompt}}"}
        )
        request = server.requests[0]
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert request.body == b"q=hola"
    assert response.output == "ready"
    assert response.token_usage == {"prompt": 7, "completion": 3, "total": 10}
    assert response.cost == 1.0


def test_plain_json_without_transform_is_the_whole_document():
    with serve(ROUTES) as server:
        response = _call({"url": server.url + "/chat"})
    assert response.output == {"choices": [{"message": {"content": "got None"}}], "n": 2}


@pytest.mark.parametrize(
    ("transform", "expected"),
    [
        ("json.n * 10", 20),
        ("json['choices'][0]['message']['content'].toUpperCase()", "GOT NONE"),
        ("json.missing?.field || text.slice(0, 8)", '{"choice'),
        ("(json, text, context) => ({output: json.n, cost: 0.25})", 2),
        ("function (json) { return {output: json.n + 1}; }", 3),
        ("context.response.status === 200 && !json.missing", True),
        ("file://shape.py:shape", "n=2 status=200"),
    ],
)
def test_transform_response_variants(tmp_path, transform, expected):
    (tmp_path / "shape.py").write_text(
        "def shape(json, text, context):\n"
        "    return {'output': f\"n={json['n']} status={context['response']['status']}\"}\n"
    )
    with serve(ROUTES) as server:
        response = _call(
            {"url": server.url + "/chat", "transformResponse": transform}, root=tmp_path
        )
    assert response.error is None
    assert response.output == expected


def test_transform_request_builds_the_body():
    with serve(ROUTES) as server:
        _call(
            {
                "url": server.url + "/chat",
                "method": "POST",
                "headers": {"content-type": "application/json"},
                "body": {"model": "m"},
                "transformRequest": "{'messages': [{'role': 'user', 'content': prompt}]}",
            }
        )
        body = server.requests[0].json
    assert body == {"model": "m", "messages": [{"role": "user", "content": "hola"}]}


def test_error_statuses_are_errors_unless_validate_status_accepts_them():
    with serve(ROUTES) as server:
        failed = _call({"url": server.url + "/boom"})
        teapot = _call({"url": server.url + "/teapot", "validateStatus": "status < 500"})
    assert failed.error is not None
    assert failed.error.startswith("HTTP call failed with status 500")
    assert "exploded" in failed.error
    assert failed.metadata["http"]["status"] == 500
    assert teapot.error is None
    assert teapot.output == "short and stout"


def test_unreachable_server_is_an_error_response():
    with serve(ROUTES) as server:
        url = server.url
    response = _call({"url": url + "/chat"})
    assert response.error is not None
    assert response.error.startswith("HTTP request failed: ConnectError")


def test_config_problems_fail_at_load(write_suite):
    bad = [
        ("{id: https, config: {method: POST, body: x}}", "has no url"),
        ("{id: 'http://h/x', config: {method: POST}}", "without a body"),
        ("{id: 'http://h/x', config: {transformResponse: 'json.[0'}}", "not valid JavaScript"),
        (
            "{id: 'http://h/x', config: {method: POST, body: {a: 1},"
            " headers: {Content-Type: text/plain}}}",
            "not application/json",
        ),
    ]
    for provider, message in bad:
        path = write_suite(f"prompts: [p]\nproviders: [{provider}]\ntests: [{{}}]\n")
        with pytest.raises(SuiteError, match=message):
            load_suite(path)


def test_check_accepts_a_good_config_and_refuses_the_same_without_a_body(tmp_path):
    spec = ProviderSpec(id="http://127.0.0.1:9/x", label="h", config={"method": "GET"})
    assert check_http_config(spec, tmp_path) is None
    post = ProviderSpec(id="http://127.0.0.1:9/x", label="h", config={"method": "POST"})
    with pytest.raises(SuiteError, match="uses POST without a body"):
        check_http_config(post, tmp_path)


def test_render_json_body_parses_rendered_json_leaves():
    body = {"a": "{{ x | dump }}", "b": "[not json", "c": ["{{ y }}"]}
    assert render_json_body(body, {"x": {"k": 1}, "y": '{"z": 2}'}) == {
        "a": {"k": 1},
        "b": "[not json",
        "c": [{"z": 2}],
    }
    assert render_json_body('{"q": "{{ x }}"}', {"x": "v"}) == {"q": "v"}


def test_http_transforms_are_wrapped_as_promptfoo_wraps_them():
    params = ("prompt", "vars", "context")
    assert http_body("(p) => p", params, True) == "return ((p) => p)(prompt, vars, context);"
    assert http_body("return {a: 1}", params, True) == "return {a: 1}"
    assert http_body("return {a: 1}", params, False) == "return (return {a: 1});"
    assert http_body("{a: prompt}", params, True) == "return ({a: prompt});"


def test_transform_results_are_plain_json():
    fn = compile_transform("return json.items", ("json",), Path("."), "t", http_body_of("json"))
    result = fn({"items": [{"a": 1}]})
    assert type(result) is list and type(result[0]) is dict


def http_body_of(*params: str):
    return lambda code: http_body(code, params, allow_statements=True)


def test_redirects_are_followed_and_a_loop_is_an_error():
    routes = {
        "/moved": lambda request: Reply("", status=302, headers={"Location": "/ok"}),
        "/ok": lambda request: Reply({"output": "arrived"}),
        "/loop": lambda request: Reply("", status=302, headers={"Location": "/loop"}),
    }
    with serve(routes) as server:
        moved = _call({"url": server.url + "/moved"})
        loop = _call({"url": server.url + "/loop"})
        loops = sum(1 for r in server.requests if r.path == "/loop")
    assert moved.output == "arrived"
    assert loop.error is not None and "TooManyRedirects" in loop.error
    assert loops == 21  # the first request and fetch's 20 redirects


def test_large_and_deep_bodies_are_malformed(monkeypatch):
    import evals.agents.http_provider as http_provider

    monkeypatch.setattr(http_provider, "MAX_REPLY_BYTES", 1000)
    routes = {
        "/big": lambda request: Reply("x" * 5000),
        "/small": lambda request: Reply("x" * 1000),
        "/deep": lambda request: Reply("[" * 100_000 + "]" * 100_000),
    }
    with serve(routes) as server:
        assert _call({"url": server.url + "/small"}).output == "x" * 1000
        with pytest.raises(MalformedResponse, match="larger than"):
            _call({"url": server.url + "/big"})
        monkeypatch.setattr(http_provider, "MAX_REPLY_BYTES", 1 << 20)
        with pytest.raises(MalformedResponse, match="nested too deeply"):
            _call({"url": server.url + "/deep"})

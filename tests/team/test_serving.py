"""Serving the dashboard to a team: a network address without login is refused, login
settings come from Streamlit's secrets or the environment, and roles from claims by
configuration."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.cli import main
from evals.team.serving import (
    AuthSettings,
    RoleRules,
    is_loopback,
    load_auth,
    roles_for,
    secrets_toml,
    serving_refusal,
    session_expired,
)

AUTH = """
[auth]
redirect_uri = "https://evals.example.com/oauth2callback"
cookie_secret = "a-long-random-secret"
[auth.okta]
client_id = "abc"
client_secret = "def"
server_metadata_url = "https://example.okta.com/.well-known/openid-configuration"
"""
ROLES = """
[evals_roles]
viewer_domains = ["example.com"]
triager_groups = ["evals-triagers"]
session_hours = 8
"""
NOBODY = AuthSettings(configured=False, source="nowhere")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.5", False),
        ("evals.internal", False),
    ],
)
def test_only_loopback_addresses_count_as_local(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    refused = serving_refusal(host, NOBODY, insecure_no_auth=False)
    assert (refused is None) is loopback
    assert serving_refusal(host, NOBODY, insecure_no_auth=True) is None


def test_starting_on_all_interfaces_without_auth_is_refused_saying_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("EVALS_OIDC_CLIENT_ID", "EVALS_OIDC_REDIRECT_URI", "EVALS_OIDC_COOKIE_SECRET"):
        monkeypatch.delenv(name, raising=False)
    assert main(["dashboard", "--host", "0.0.0.0"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "refusing to serve the dashboard on 0.0.0.0 without authentication" in err
    assert ".streamlit/secrets.toml" in err and "EVALS_OIDC_CLIENT_ID" in err
    assert "--insecure-no-auth" in err and "docs/team.md" in err


def test_login_without_any_role_is_refused(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(AUTH, encoding="utf-8")
    auth = load_auth([secrets], {})
    assert auth.configured and auth.providers == ("okta",)
    assert "no role is" in (serving_refusal("0.0.0.0", auth, False) or "")
    secrets.write_text(AUTH + ROLES, encoding="utf-8")
    auth = load_auth([tmp_path / "missing.toml", secrets], {})
    assert serving_refusal("0.0.0.0", auth, False) is None
    assert auth.source == str(secrets) and auth.session_hours == 8


def test_login_from_the_environment_becomes_a_secrets_table() -> None:
    environ = {
        "EVALS_OIDC_REDIRECT_URI": "https://evals.example.com/oauth2callback",
        "EVALS_OIDC_COOKIE_SECRET": 'se"cr\\et',
        "EVALS_OIDC_CLIENT_ID": "id",
        "EVALS_OIDC_CLIENT_SECRET": "secret",
        "EVALS_OIDC_METADATA_URL": "https://kc.example.com/realms/x/.well-known/openid-configuration",
        "EVALS_TRIAGER_EMAILS": "Alice@Example.com, bob@example.com",
    }
    auth = load_auth([], environ)
    assert auth.configured and auth.source == "environment" and auth.providers == ("default",)
    assert auth.roles.triager_emails == ("alice@example.com", "bob@example.com")
    parsed = tomllib.loads(secrets_toml(auth.auth_table))["auth"]
    assert parsed["cookie_secret"] == 'se"cr\\et'
    assert parsed["server_metadata_url"] == environ["EVALS_OIDC_METADATA_URL"]


RULES = RoleRules(
    viewer_domains=("example.com",),
    triager_groups=("evals-triagers",),
    triager_emails=("lead@partner.org",),
)


@pytest.mark.parametrize(
    ("claims", "roles"),
    [
        ({"email": "ann@example.com", "email_verified": True}, {"viewer"}),
        ({"email": "ann@EXAMPLE.com", "email_verified": True}, {"viewer"}),
        ({"email": "ann@example.com", "email_verified": False}, set()),
        ({"email": "ann@example.com"}, set()),
        ({"email": "ann@example.com.evil.io", "email_verified": True}, set()),
        (
            {"email": "ann@example.com", "email_verified": True, "groups": ["evals-triagers"]},
            {"viewer", "triager"},
        ),
        (
            {"email": "x@other.org", "email_verified": True, "groups": "evals-triagers"},
            {"viewer", "triager"},
        ),
        ({"email": "lead@partner.org", "email_verified": True}, {"viewer", "triager"}),
        ({"sub": "123"}, set()),
    ],
)
def test_roles_come_from_claims_by_the_configured_rules(claims, roles) -> None:
    assert roles_for(claims, RULES) == frozenset(roles)


@pytest.mark.slow
@given(email=st.emails(), groups=st.lists(st.text(max_size=8), max_size=3))
def test_a_triager_is_always_a_viewer(email: str, groups: list[str]) -> None:
    claims = {"email": email, "email_verified": True, "groups": groups}
    roles = roles_for(claims, RoleRules(triager_domains=(email.rpartition("@")[2].lower(),)))
    assert roles == frozenset({"viewer", "triager"})
    assert roles_for(claims, RoleRules()) == frozenset()


def test_a_session_older_than_its_length_or_of_unknown_age_has_expired() -> None:
    now = 1_800_000_000.0
    assert not session_expired({"iat": now - 3600}, 12, now)
    assert session_expired({"iat": now - 13 * 3600}, 12, now)
    assert session_expired({"iat": now - 60, "auth_time": now - 13 * 3600}, 12, now)
    assert session_expired({}, 12, now)

"""Who is looking at the dashboard, and what they may do.

`visitor()` runs before any page: with OpenID Connect configured it sends an anonymous
visitor to log in (`st.login`), logs out a session older than the configured length,
and maps the provider's claims to roles by configuration (`evals.team.serving`).
Without login the dashboard serves only the loopback interface, where the one user is
the machine's (viewer and triager), or, started with `--insecure-no-auth`, anonymous
viewers. A page that is not allowed stops the script; nothing below it runs.
"""

from __future__ import annotations

import getpass
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from evals.dashboard import sessions
from evals.team.serving import (
    TRIAGER,
    VIEWER,
    AuthSettings,
    load_auth,
    roles_for,
    serving_refusal,
    session_expired,
)

MODE_VARIABLE = "EVALS_DASHBOARD_AUTH"


@dataclass(frozen=True, slots=True)
class Visitor:
    """The person behind this session: what the triage log records, and their roles."""

    name: str
    actor: str
    roles: frozenset[str]
    mode: str

    @property
    def can_triage(self) -> bool:
        """True for a triager: may record triage actions."""
        return TRIAGER in self.roles


def settings() -> AuthSettings:
    """The login and role settings from Streamlit's secrets files and the environment."""
    files = [Path(p) for p in st.get_option("secrets.files") or []]
    return load_auth(files, os.environ)


def _mode(auth: AuthSettings) -> str:
    chosen = os.environ.get(MODE_VARIABLE)
    if chosen in ("oidc", "local", "insecure"):
        return chosen
    address = st.get_option("server.address")
    refusal = serving_refusal(address or "0.0.0.0", auth, insecure_no_auth=False)
    if refusal is not None:
        st.error(refusal)
        st.stop()
    return "oidc" if auth.configured else "local"


def _claims() -> dict[str, Any]:
    return dict(st.user.to_dict())


@st.cache_resource(show_spinner=False)
def _revocations(path: str) -> sessions.Revocations:
    return sessions.Revocations(Path(path))


def revocations() -> sessions.Revocations:
    """The server's record of logged-out sessions (one per file, shared by sessions)."""
    return _revocations(str(sessions.revocations_path()))


def log_out(claims: dict[str, Any], auth: AuthSettings) -> None:
    """End this login on the server as well as in this browser: a copy of its cookie is
    refused from now on (see `evals.dashboard.sessions`)."""
    now = time.time()
    revocations().revoke(
        sessions.session_key(claims), sessions.expiry(claims, auth.session_hours), now
    )
    st.logout()


def _login_page(auth: AuthSettings, note: str = "Log in to see the results store.") -> None:
    st.title("evals")
    st.write(note)
    for provider in auth.providers:
        label = "Log in" if provider == "default" else f"Log in with {provider}"
        if st.button(label, key=f"login_{provider}", type="primary"):
            st.login(None if provider == "default" else provider)
    st.stop()


def _logged_in(auth: AuthSettings) -> Visitor:
    if not st.user.is_logged_in:
        _login_page(auth)
    claims = _claims()
    now = time.time()
    if session_expired(claims, auth.session_hours, now):
        st.logout()
        st.stop()
    if revocations().is_revoked(sessions.session_key(claims), now):
        # A copy of a cookie whose session was logged out: refused, whatever browser holds it.
        _login_page(auth, "This session was logged out. Log in again to see the results store.")
    email = str(claims.get("email") or "")
    actor = email or f"{claims.get('iss', '')}#{claims.get('sub', '')}"
    roles = roles_for(claims, auth.roles)
    if not roles:
        st.title("evals")
        st.error(f"{actor} has no role on this dashboard; ask its administrators for one.")
        if st.button("Log out"):
            log_out(claims, auth)
        st.stop()
    return Visitor(str(claims.get("name") or actor), actor, roles, "oidc")


def visitor() -> Visitor:
    """The current visitor; stops the script for anyone who may not see the dashboard."""
    auth = settings()
    mode = _mode(auth)
    if mode == "oidc":
        return _logged_in(auth)
    if mode == "local":
        user = getpass.getuser()
        return Visitor(user, f"{user} (local)", frozenset({VIEWER, TRIAGER}), mode)
    return Visitor("anonymous", "anonymous", frozenset({VIEWER}), mode)


def sidebar(person: Visitor) -> None:
    """Who is logged in, with which roles, and the logout button."""
    roles = ", ".join(sorted(person.roles))
    st.sidebar.caption(f"{person.name} · {roles}")
    if person.mode == "oidc" and st.sidebar.button("Log out", key="logout"):
        log_out(_claims(), settings())
    elif person.mode == "insecure":
        st.sidebar.caption("No login: served for a trusted network, read-only.")


def pages(person: Visitor) -> list[Any]:
    """The team pages: the audit trail, and triage, listed for triagers only. Others can
    still open triage's address, where they are told it needs the triager role (rather
    than being sent to another page)."""
    return [
        st.Page("views/audit.py", title="Audit trail", icon=":material/history:", url_path="audit"),
        st.Page(
            "views/triage.py",
            title="Triage",
            icon=":material/flag:",
            url_path="triage",
            visibility="visible" if person.can_triage else "hidden",
        ),
    ]

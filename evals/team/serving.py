"""Serving the dashboard to a team: who may start it where, and who may do what.

The dashboard logs users in with Streamlit's OpenID Connect support (`st.login`), set up
by an `[auth]` table in `.streamlit/secrets.toml` (or the `EVALS_OIDC_*` variables, which
`evals dashboard` writes into a private secrets file). Without it the dashboard serves
only the loopback interface, unless `--insecure-no-auth` says the network is trusted.

Roles come from the identity provider's claims by configuration (an `[evals_roles]`
table in the secrets file, or `EVALS_*` variables), never from code: a viewer reads, a
triager may also record triage actions. Everything here is pure: the dashboard and the
command line pass in the files and environment they read.
"""

from __future__ import annotations

import ipaddress
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals.model.errors import SuiteError

VIEWER = "viewer"
TRIAGER = "triager"
DEFAULT_SESSION_HOURS = 12.0
# EVALS_OIDC_* variable -> key of Streamlit's [auth] table
OIDC_VARIABLES = {
    "EVALS_OIDC_REDIRECT_URI": "redirect_uri",
    "EVALS_OIDC_COOKIE_SECRET": "cookie_secret",
    "EVALS_OIDC_CLIENT_ID": "client_id",
    "EVALS_OIDC_CLIENT_SECRET": "client_secret",
    "EVALS_OIDC_METADATA_URL": "server_metadata_url",
}
_ROLE_KEYS = (
    "viewer_domains",
    "viewer_groups",
    "viewer_emails",
    "triager_domains",
    "triager_groups",
    "triager_emails",
)


@dataclass(frozen=True, slots=True)
class RoleRules:
    """Which claims make a viewer or a triager (a triager is also a viewer).

    A user matches a role by the domain of a verified email, membership of a group (the
    `groups_claim` claim: a list or a string) or the exact email. `viewer_anyone` admits
    every user the identity provider logs in: only for a provider that admits nobody
    else.
    """

    viewer_domains: tuple[str, ...] = ()
    viewer_groups: tuple[str, ...] = ()
    viewer_emails: tuple[str, ...] = ()
    triager_domains: tuple[str, ...] = ()
    triager_groups: tuple[str, ...] = ()
    triager_emails: tuple[str, ...] = ()
    viewer_anyone: bool = False
    groups_claim: str = "groups"
    require_verified_email: bool = True

    def configured(self) -> bool:
        """True when some rule can admit someone."""
        return self.viewer_anyone or any(getattr(self, key) for key in _ROLE_KEYS)


@dataclass(frozen=True, slots=True)
class AuthSettings:
    """Whether login is configured, from where, its providers and the role rules."""

    configured: bool
    source: str
    providers: tuple[str, ...] = ()
    roles: RoleRules = field(default_factory=RoleRules)
    session_hours: float = DEFAULT_SESSION_HOURS
    auth_table: dict[str, Any] = field(default_factory=dict)


def _words(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(str(item).strip().lower() for item in items if str(item).strip())


def _providers(auth: Mapping[str, Any]) -> tuple[str, ...]:
    named = tuple(
        name for name, value in auth.items() if isinstance(value, Mapping) and "client_id" in value
    )
    if "client_id" in auth and "server_metadata_url" in auth:
        named = ("default", *named)
    return named


def role_rules(table: Mapping[str, Any], environ: Mapping[str, str]) -> RoleRules:
    """The role rules of an `[evals_roles]` table, each key overridable by the variable
    `EVALS_<KEY>` (comma-separated lists; `EVALS_VIEWER_ANYONE=1`)."""

    def pick(key: str) -> Any:
        return environ.get(f"EVALS_{key.upper()}", table.get(key))

    anyone = pick("viewer_anyone")
    verified = pick("require_verified_email")
    return RoleRules(
        **{key: _words(pick(key)) for key in _ROLE_KEYS},
        viewer_anyone=str(anyone).lower() in ("1", "true", "yes") if anyone is not None else False,
        groups_claim=str(pick("groups_claim") or "groups"),
        require_verified_email=str(verified).lower() not in ("0", "false", "no")
        if verified is not None
        else True,
    )


def load_auth(secrets_files: Sequence[Path], environ: Mapping[str, str]) -> AuthSettings:
    """The login settings: the `[auth]` table of the first secrets file that has one
    (Streamlit's own locations), else the `EVALS_OIDC_*` variables; the role rules and
    the session length likewise (`[evals_roles]`, `session_hours`)."""
    secrets: dict[str, Any] = {}
    source = "nowhere"
    for path in secrets_files:
        if not path.is_file():
            continue
        try:
            found = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SuiteError(f"cannot read {path}: {exc}", file=str(path)) from None
        secrets = {**secrets, **found}
        if "auth" in found:
            source = str(path)
    auth = dict(secrets.get("auth") or {})
    from_environment = {
        key: environ[name] for name, key in OIDC_VARIABLES.items() if environ.get(name)
    }
    if not auth and from_environment:
        auth, source = from_environment, "environment"
    roles_table = secrets.get("evals_roles") or {}
    hours = float(
        environ.get("EVALS_SESSION_HOURS")
        or roles_table.get("session_hours")
        or DEFAULT_SESSION_HOURS
    )
    providers = _providers(auth)
    configured = bool(auth.get("redirect_uri") and auth.get("cookie_secret") and providers)
    return AuthSettings(
        configured=configured,
        source=source if configured else "nowhere",
        providers=providers,
        roles=role_rules(roles_table, environ),
        session_hours=hours,
        auth_table=auth,
    )


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach (localhost, 127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


HOW_TO_CONFIGURE = (
    "configure OpenID Connect login: an [auth] table in .streamlit/secrets.toml "
    "(redirect_uri ending in /oauth2callback, cookie_secret, client_id, client_secret, "
    "server_metadata_url) or the variables "
    + ", ".join(OIDC_VARIABLES)
    + ", and roles in an [evals_roles] table (viewer_domains, triager_groups, ...); "
    "see docs/team.md. On a trusted network only, pass --insecure-no-auth"
)


def serving_refusal(host: str, auth: AuthSettings, insecure_no_auth: bool) -> str | None:
    """Why the dashboard must not start on `host` with these settings, or None.

    Without login it serves only loopback addresses, unless `insecure_no_auth`; with
    login it needs role rules, or nobody could see anything.
    """
    if auth.configured and not auth.roles.configured():
        return (
            "login is configured but no role is: nobody could see the dashboard; set "
            "[evals_roles] viewer_domains, viewer_groups or viewer_emails (docs/team.md)"
        )
    if auth.configured or insecure_no_auth or is_loopback(host):
        return None
    return (
        f"refusing to serve the dashboard on {host} without authentication: anyone who "
        f"reaches that address could read the results store. To serve a team, "
        f"{HOW_TO_CONFIGURE}."
    )


def roles_for(claims: Mapping[str, Any], rules: RoleRules) -> frozenset[str]:
    """The roles a logged-in user's claims give by the rules: none, viewer, or both.

    An email counts only when the provider says it is verified (`email_verified`), unless
    the rules say the provider verifies every email itself.
    """
    email = str(claims.get("email") or "").strip().lower()
    verified = claims.get("email_verified")
    if rules.require_verified_email and verified not in (True, "true", "True"):
        email = ""
    domain = email.rpartition("@")[2] if "@" in email else ""
    raw_groups = claims.get(rules.groups_claim) or []
    groups = {
        str(g).strip().lower()
        for g in ([raw_groups] if isinstance(raw_groups, str) else raw_groups)
    }

    def matches(domains: tuple[str, ...], names: tuple[str, ...], emails: tuple[str, ...]) -> bool:
        return bool(
            (domain and domain in domains) or (groups & set(names)) or (email and email in emails)
        )

    roles: set[str] = set()
    if matches(rules.triager_domains, rules.triager_groups, rules.triager_emails):
        roles |= {VIEWER, TRIAGER}
    if rules.viewer_anyone or matches(
        rules.viewer_domains, rules.viewer_groups, rules.viewer_emails
    ):
        roles.add(VIEWER)
    return frozenset(roles)


def session_expired(claims: Mapping[str, Any], hours: float, now: float) -> bool:
    """True when the login behind the claims (`iat`, when the provider issued the ID
    token; `auth_time` when present) is older than `hours`, or its age is unknown."""
    issued = claims.get("auth_time") or claims.get("iat")
    try:
        return now - float(issued) > hours * 3600  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return True


def secrets_toml(auth: Mapping[str, Any]) -> str:
    """An `[auth]` table as TOML text, for Streamlit to read from a private file."""
    lines = ["[auth]"]
    for key, value in auth.items():
        escaped = str(value).replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'{key} = "{escaped}"')
    return "\n".join(lines) + "\n"


def secrets_files(cwd: Path, home: Path) -> list[Path]:
    """Where Streamlit looks for secrets by default, in its order (later wins)."""
    return [home / ".streamlit" / "secrets.toml", cwd / ".streamlit" / "secrets.toml"]


def auth_mode(host: str, auth: AuthSettings) -> str:
    """`oidc` (users log in), `local` (loopback only: the one user is the machine's) or
    `insecure` (no login on a network address: everyone is an anonymous viewer)."""
    if auth.configured:
        return "oidc"
    return "local" if is_loopback(host) else "insecure"


# Streamlit options `evals dashboard` always passes. Each cuts time every visit pays:
# with a file watcher every new session walks every imported module (0.3 s of CPU on the
# server's event loop with pandas and Altair loaded) to watch the ones beside the app;
# a full garbage collection after every script run stops the server for 0.2 s or more
# with the caches filled; and the dashboard is never edited while served. Usage
# statistics stay off: the dashboard reaches no other host.
STREAMLIT_OPTIONS: tuple[str, ...] = (
    "--server.headless",
    "true",
    "--browser.gatherUsageStats",
    "false",
    "--server.fileWatcherType",
    "none",
    "--server.runOnSave",
    "false",
    "--runner.postScriptGC",
    "false",
    "--client.toolbarMode",
    "minimal",
)


def launch(
    host: str, insecure_no_auth: bool, environ: Mapping[str, str], cwd: Path, home: Path
) -> tuple[list[str], dict[str, str]]:
    """The extra Streamlit arguments and environment for `evals dashboard` on `host`, or
    a SuiteError when it must not start there (`serving_refusal`).

    Login set by `EVALS_OIDC_*` variables is written to a secrets file only the user can
    read, which Streamlit is pointed at after its usual locations.
    """
    files = secrets_files(cwd, home)
    auth = load_auth(files, environ)
    refusal = serving_refusal(host, auth, insecure_no_auth)
    if refusal is not None:
        raise SuiteError(refusal, fix="see docs/team.md")
    arguments: list[str] = []
    if auth.configured and auth.source == "environment":
        import tempfile

        directory = Path(tempfile.mkdtemp(prefix="evals-dashboard-"))
        written = directory / "secrets.toml"
        written.touch(mode=0o600)
        written.write_text(secrets_toml(auth.auth_table), encoding="utf-8")
        for path in [*files, written]:
            arguments += ["--secrets.files", str(path)]
    return arguments, {"EVALS_DASHBOARD_AUTH": auth_mode(host, auth)}

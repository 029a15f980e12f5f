"""SQL checks: `is-sql` and `contains-sql`, with promptfoo 0.121's verdicts and reasons.

promptfoo parses with node-sql-parser; here sqlglot parses in the dialect `databaseType`
names (MySQL by default). The statement must parse as real statements (a query, DML, DDL
or command), not a bare expression. promptfoo's heuristics run first: an odd number of
backticks and a likely missing comma in a select list (`SELECT id name FROM t`) fail.
`allowedTables` / `allowedColumns` entries are `type::table::name` patterns matched whole
and case-insensitively, as node-sql-parser's whitelist does.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from evals.common.jsvalues import coerce_string
from evals.graders.base import GradeContext, GraderError
from evals.graders.jscompat import outcome
from evals.graders.output import output_string
from evals.graders.registry import register
from evals.graders.values import assertion_value
from evals.model.results import Grade

if TYPE_CHECKING:
    from sqlglot import exp

DIALECTS = {
    "MySQL": "mysql",
    "MariaDB": "mysql",
    "PostgresQL": "postgres",
    "PostgreSQL": "postgres",
    "Sqlite": "sqlite",
    "SQLite": "sqlite",
    "BigQuery": "bigquery",
    "TransactSQL": "tsql",
    "Snowflake": "snowflake",
    "Redshift": "redshift",
    "Hive": "hive",
    "Trino": "trino",
    "Athena": "athena",
    "Spark": "spark",
    "Databricks": "databricks",
    "Oracle": "oracle",
    "DuckDB": "duckdb",
}


@cache
def _statement_types() -> tuple[type, ...]:
    """sqlglot's statement node classes (sqlglot is imported when SQL is first checked)."""
    from sqlglot import exp

    return (
        exp.Query,
        exp.DML,
        exp.DDL,
        exp.Alter,
        exp.Command,
        exp.Use,
        exp.Set,
        exp.Show,
        exp.Describe,
        exp.Transaction,
        exp.Commit,
        exp.Rollback,
        exp.TruncateTable,
        exp.Grant,
        exp.Pragma,
        exp.Analyze,
    )


@cache
def _statement_kinds() -> tuple[tuple[type, str], ...]:
    """Enclosing statement classes and the kind node-sql-parser names them by."""
    from sqlglot import exp

    return (
        (exp.Insert, "insert"),
        (exp.Update, "update"),
        (exp.Delete, "delete"),
        (exp.Merge, "merge"),
        (exp.Create, "create"),
        (exp.Drop, "drop"),
        (exp.Alter, "alter"),
        (exp.Select, "select"),
    )


_MODIFIERS = "(?:all|distinct)"
_MYSQL_MODIFIERS = (
    "(?:all|distinct(?:row)?|high_priority|straight_join|sql_(?:big_result|buffer_result"
    "|cache|calc_found_rows|no_cache|small_result))"
)
_IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]*"


def _missing_comma(modifiers: str) -> re.Pattern[str]:
    return re.compile(
        rf"\bselect\s+(?:{modifiers}\s+)*(?!{modifiers}\b){_IDENTIFIER}\s+{_IDENTIFIER}\s+from\b",
        re.IGNORECASE,
    )


_MISSING_COMMA = {"standard": _missing_comma(_MODIFIERS), "mysql": _missing_comma(_MYSQL_MODIFIERS)}
_DOLLAR_QUOTE = re.compile(r"^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")


def _quoted_end(sql: str, start: int, quote: str) -> int:
    closing = "]" if quote == "[" else quote
    i = start + 1
    while i < len(sql):
        if closing != "]" and sql[i] == "\\":
            i += 2
            continue
        if sql[i] == closing:
            if i + 1 < len(sql) and sql[i + 1] == closing:
                i += 2
                continue
            return i + 1
        i += 1
    return len(sql)


def _ignored_end(sql: str, i: int, brackets: bool) -> tuple[int, str] | None:
    char, nxt = sql[i], sql[i + 1 : i + 2]
    if char in "'\"`" or (char == "[" and brackets):
        return _quoted_end(sql, i, char), " ? "
    if (char == "-" and nxt == "-") or char == "#":
        end = i + 1
        while end < len(sql) and sql[end] not in "\r\n":
            end += 1
        return end, " "
    if char == "/" and nxt == "*":
        close = sql.find("*/", i + 2)
        return (len(sql) if close < 0 else close + 2), " "
    if char == "$":
        delimiter = _DOLLAR_QUOTE.match(sql[i:])
        if delimiter:
            close = sql.find(delimiter.group(0), i + len(delimiter.group(0)))
            return (len(sql) if close < 0 else close + len(delimiter.group(0))), " ? "
    return None


def strip_ignored_sql(sql: str, database: str) -> str:
    """promptfoo's stripIgnoredSqlText: comments removed, quoted text replaced by `?`."""
    brackets = database in ("TransactSQL", "Sqlite")
    chunks: list[str] = []
    plain = i = 0
    while i < len(sql):
        ignored = _ignored_end(sql, i, brackets)
        if ignored is None:
            i += 1
            continue
        chunks += [sql[plain:i], ignored[1]]
        i = plain = ignored[0]
    chunks.append(sql[plain:])
    return "".join(chunks)


def _heuristic_failures(sql: str, database: str) -> int:
    trimmed = sql.strip()
    failures = int(trimmed == "")
    failures += int(trimmed.count("`") % 2 == 1)
    family = "mysql" if database in ("MySQL", "MariaDB") else "standard"
    failures += int(bool(_MISSING_COMMA[family].search(strip_ignored_sql(trimmed, database))))
    failures += int(
        database == "MySQL" and bool(re.search(r"\bgenerate_series\s*\(", trimmed, re.I))
    )
    return failures


def parse_statements(sql: str, database: str) -> list[exp.Expression]:
    """Parse SQL in the dialect; raises ValueError unless it is one or more statements."""
    try:
        dialect = DIALECTS[database]
    except KeyError:
        raise GraderError(
            f"unsupported databaseType {database!r}; use one of {', '.join(DIALECTS)}"
        ) from None
    import sqlglot
    from sqlglot.errors import SqlglotError

    try:
        statements = sqlglot.parse(sql, read=dialect)
    except SqlglotError as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    parsed = [s for s in statements if s is not None]
    if not parsed:
        raise ValueError("no SQL statement")
    for statement in parsed:
        if not isinstance(statement, _statement_types()):
            raise ValueError(f"not a SQL statement: {statement.sql(dialect=dialect)}")
    return cast("list[exp.Expression]", parsed)  # each is one of the statement classes


def _kind(node: exp.Expression) -> str:
    scope = node.parent
    while scope is not None:
        for cls, kind in _statement_kinds():
            if isinstance(scope, cls):
                return kind
        scope = scope.parent
    return "select"


def table_list(statements: list[exp.Expression]) -> list[str]:
    """node-sql-parser's tableList: `type::db::table` for every table a statement touches."""
    from sqlglot import exp

    found: list[str] = []
    for statement in statements:
        ctes = {cte.alias_or_name for cte in statement.find_all(exp.CTE)}
        for table in statement.find_all(exp.Table):
            if not table.name or table.name in ctes:
                continue
            entry = f"{_kind(table)}::{table.db or 'null'}::{table.name}"
            if entry not in found:
                found.append(entry)
    return found


def column_list(statements: list[exp.Expression]) -> list[str]:
    """node-sql-parser's columnList: `type::table::column`, aliases resolved to table names."""
    from sqlglot import exp

    found: list[str] = []
    for statement in statements:
        aliases = {t.alias: t.name for t in statement.find_all(exp.Table) if t.alias}
        for column in statement.find_all(exp.Column, exp.Star):
            if isinstance(column, exp.Star) and isinstance(column.parent, exp.Column):
                continue
            table = column.table if isinstance(column, exp.Column) else ""
            name = "(.*)" if isinstance(column, exp.Star) or column.is_star else column.name
            entry = f"{_kind(column)}::{aliases.get(table, table) or 'null'}::{name}"
            if entry not in found:
                found.append(entry)
    return found


def _allowed(item: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        try:
            if re.fullmatch(pattern, item, re.IGNORECASE):
                return True
        except re.error:
            if pattern.lower() == item.lower():
                return True
    return False


def _whitelist_reason(
    statements: list[exp.Expression] | None, error: str, allowed: list[str], kind: str
) -> str | None:
    """None when every table/column is allowed; otherwise promptfoo's failure sentence."""
    if statements is None:
        return f"SQL validation failed: {error}."
    patterns = list(allowed)
    if kind == "column":
        for item in allowed:
            parts = item.split("::")
            if len(parts) == 3 and parts[1] != "null":
                alternative = f"{parts[0]}::null::{parts[2]}"
                if alternative not in patterns:
                    patterns.append(alternative)
    actual = table_list(statements) if kind == "table" else column_list(statements)
    if all(_allowed(item, patterns) for item in actual):
        return None
    noun = "table(s)" if kind == "table" else "column(s)"
    return (
        f"SQL references unauthorized {noun}. Found: [{', '.join(actual)}]. "
        f"Allowed: [{', '.join(allowed)}]."
    )


def sql_check(sql: str, value: Any) -> tuple[bool, list[str]]:
    """promptfoo's is-sql without `not-`: (valid, failure reasons)."""
    database = "MySQL"
    allowed_tables = allowed_columns = None
    if value not in (None, "", 0, False):
        if not isinstance(value, dict):
            raise GraderError("is-sql assertion must have a object value.")
        database = value.get("databaseType") or "MySQL"
        allowed_tables, allowed_columns = value.get("allowedTables"), value.get("allowedColumns")
    syntax = f"SQL statement does not conform to the provided {database} database syntax."
    reasons = [syntax] * _heuristic_failures(sql, database)
    statements: list[exp.Expression] | None
    try:
        statements, error = parse_statements(sql, database), ""
    except ValueError as exc:
        statements, error = None, str(exc)
        reasons.append(syntax)
    for allowed, kind in ((allowed_tables, "table"), (allowed_columns, "column")):
        if allowed:
            reason = _whitelist_reason(statements, error, [str(a) for a in allowed], kind)
            if reason is not None:
                reasons.append(reason)
    return not reasons, reasons


@register("is-sql", layer="final", promptfoo=True)
def is_sql(ctx: GradeContext) -> Grade:
    """The whole output is SQL in the dialect, touching only allowed tables and columns."""
    valid, reasons = sql_check(output_string(ctx), assertion_value(ctx))
    passed = valid != ctx.inverse
    if ctx.inverse and not passed:
        reasons = ["The output SQL statement is valid"]
    return outcome(ctx, passed, " ".join(reasons))


_FENCE_START = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\r\n]*)$")
_FENCE_END = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*$")


def sql_code_blocks(text: str) -> list[str]:
    """The bodies of fenced code blocks tagged `sql` or untagged, trimmed."""
    blocks: list[str] = []
    active: tuple[str, int, bool] | None = None
    body: list[str] = []
    for line in re.split(r"\r\n?|\n", text):
        if active is None:
            opening = _FENCE_START.match(line)
            if opening:
                language = opening.group(2).strip().lower()
                active = (opening.group(1)[0], len(opening.group(1)), language in ("", "sql"))
                body = []
            continue
        closing = _FENCE_END.match(line)
        if closing and closing.group(1)[0] == active[0] and len(closing.group(1)) >= active[1]:
            if active[2]:
                blocks.append("\n".join(body).strip())
            active = None
        else:
            body.append(line)
    return blocks


@register("contains-sql", layer="final", promptfoo=True)
def contains_sql(ctx: GradeContext) -> Grade:
    """A fenced SQL block (or, without one, the whole output) is valid SQL."""
    text = coerce_string(output_string(ctx))
    value = assertion_value(ctx)
    failure = "Output does not contain valid SQL"
    found = False
    for candidate in sql_code_blocks(text) or [text]:
        if not candidate.strip():
            continue
        valid, reasons = sql_check(candidate, value)
        if valid:
            found = True
            break
        failure = " ".join(reasons)
    passed = found != ctx.inverse
    return outcome(ctx, passed, "The output SQL statement is valid" if found else failure)

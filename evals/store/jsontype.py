"""The JSON column type of the store."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Dialect, Text, TypeDecorator
from sqlalchemy.types import TypeEngine

from evals.common.encoding import dump_json


class JsonDocument(TypeDecorator[Any]):
    """A JSON document: `json` on PostgreSQL, TEXT holding JSON on SQLite.

    Written with orjson (fast), read with the standard library, which keeps integers
    wider than 64 bits and escaped lone surrogates exactly.

    SQLite gives a column declared JSON numeric affinity, which would turn the stored
    document `0` into the number 0; TEXT keeps the document as written. None is NULL.
    """

    impl = Text
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        """`json` on PostgreSQL, TEXT elsewhere."""
        if dialect.name == "postgresql":
            from sqlalchemy.dialects import postgresql  # not imported for SQLite stores

            return dialect.type_descriptor(postgresql.JSON(none_as_null=True))
        return dialect.type_descriptor(Text())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        """Serialize for SQLite; PostgreSQL's json type serializes itself."""
        if value is None or dialect.name == "postgresql":
            return value
        return dump_json(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        """Parse on SQLite; PostgreSQL's json type parses itself."""
        if value is None or dialect.name == "postgresql":
            return value
        return json.loads(value)

"""Database tools: raw table access to the refund-desk database, for DBAs and diagnostics.

These bypass every business rule, which is why the writes are destructive and need approval;
the descriptions steer the model to the domain tools first.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from toolrelay.tools import ToolContext, tool

from .backend import RefundDeskBackend
from .common import actor_of
from .records import RefundDeskError

__all__ = ["DatabaseService"]

# Table name -> (backend attribute, primary-key column).
_TABLES = {
    "customers": ("customers", "customer_id"),
    "orders": ("orders", "order_id"),
    "refunds": ("refunds", "refund_id"),
    "refund_tasks": ("refund_tasks", "task_id"),
    "transactions": ("transactions", "transaction_id"),
    "merchants": ("merchants", "merchant_id"),
    "users": ("users", "user_id"),
    "tickets": ("tickets", "ticket_id"),
}


class DatabaseService:
    """Table-level tools over a :class:`RefundDeskBackend`."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="db.list_tables", read_only=True)
    def list_tables(self) -> dict[str, int]:
        """Read-only list of the tables in the refund-desk database with their row counts.

        Use to orient yourself before a diagnostic query. Prefer the domain tools (refund.*,
        order.*, ticket.*) for ordinary questions. It changes nothing.
        """
        return {name: len(self._table(name)) for name in _TABLES}

    @tool(name="db.describe_table", read_only=True)
    def describe_table(self, table: str) -> dict[str, str]:
        """Read-only schema of one database table: each column with its type.

        Use before db.query_rows to know which columns you can filter on. It changes
        nothing.

        Args:
            table: Table name, e.g. "refunds" (see db.list_tables).
        """
        rows = self._table(table)
        if not rows:
            return {}
        first = next(iter(rows.values()))
        return {f.name: str(f.type) for f in dataclasses.fields(first)}

    @tool(name="db.query_rows", read_only=True)
    def query_rows(
        self, table: str, where: dict[str, str] | None = None, limit: int = 20
    ) -> list[dict[str, Any]]:
        """Read-only select of raw rows from a table, filtered by exact column values.

        Use for diagnostics the domain tools cannot answer, e.g. every refund on one channel.
        Values are compared as text. It never writes; for business questions prefer
        refund.find_orders or order.search.

        Args:
            table: Table name, e.g. "refunds".
            where: Column name to required value, e.g. {"channel": "cardpay"}.
            limit: Maximum number of rows to return.
        """
        return [dataclasses.asdict(row) for row in self._matching(table, where)][:limit]

    @tool(name="db.count_rows", read_only=True)
    def count_rows(self, table: str, where: dict[str, str] | None = None) -> int:
        """Read-only count of the rows of a table that match exact column values.

        Use for quick numbers such as how many refunds are in status failed. It never writes.

        Args:
            table: Table name, e.g. "refunds".
            where: Column name to required value, e.g. {"status": "failed"}.
        """
        return len(self._matching(table, where))

    @tool(name="db.get_row", read_only=True)
    def get_row(self, table: str, key: str) -> dict[str, Any]:
        """Read-only fetch of one raw row of a table by its primary key.

        Use when a domain tool hides a column you need. It never writes.

        Args:
            table: Table name, e.g. "refund_tasks".
            key: Primary-key value, e.g. "TASK-2013".
        """
        return dataclasses.asdict(self._row(table, key))

    @tool(name="db.update_row", destructive=True, requires_approval=True)
    def update_row(
        self, table: str, key: str, values: dict[str, str], context: ToolContext | None = None
    ) -> dict[str, Any]:
        """Overwrite columns of one database row directly, bypassing all business rules.

        Dangerous: no validation, no audit trail in the domain systems, no payment channel
        involved; requires approval. Use only when a DBA explicitly asks for a data fix. Never
        use it to change refund status: use refund.retry_failed_order instead.

        Args:
            table: Table name, e.g. "tickets".
            key: Primary-key value of the row.
            values: Column name to new value as text; only text, number and true/false
                columns can be written.
        """
        row = self._row(table, key)
        problems: list[str] = []
        for column, text in values.items():
            if not hasattr(row, column):
                problems.append(f"no column {column!r}")
                continue
            current = getattr(row, column)
            if isinstance(current, bool):
                setattr(row, column, text.lower() == "true")
            elif isinstance(current, int):
                setattr(row, column, int(text))
            elif isinstance(current, str) or current is None:
                setattr(row, column, text)
            else:
                problems.append(f"column {column!r} holds {type(current).__name__}")
        if problems:
            raise RefundDeskError("; ".join(problems))
        self.backend.tick()
        self.backend.audit(actor_of(context), f"db update {table}/{key}: {sorted(values)}")
        return dataclasses.asdict(row)

    @tool(name="db.delete_row", destructive=True, requires_approval=True)
    def delete_row(self, table: str, key: str, context: ToolContext | None = None) -> str:
        """Delete one database row permanently, bypassing all business rules.

        Irreversible and requires approval; references from other tables are left dangling.
        Use only when a DBA explicitly asks to remove bad data.

        Args:
            table: Table name.
            key: Primary-key value of the row to delete.
        """
        self._row(table, key)
        del self._table(table)[key]
        self.backend.tick()
        self.backend.audit(actor_of(context), f"db delete {table}/{key}")
        return f"deleted {table}/{key}"

    def _table(self, table: str) -> dict[str, Any]:
        if table not in _TABLES:
            raise RefundDeskError(f"no table {table!r}; tables: {', '.join(_TABLES)}")
        rows: dict[str, Any] = getattr(self.backend, _TABLES[table][0])
        return rows

    def _row(self, table: str, key: str) -> Any:
        rows = self._table(table)
        if key not in rows:
            raise RefundDeskError(f"no row {key!r} in {table}")
        return rows[key]

    def _matching(self, table: str, where: dict[str, str] | None) -> list[Any]:
        conditions = where or {}
        return [
            row
            for row in self._table(table).values()
            if all(str(getattr(row, c, None)) == v for c, v in conditions.items())
        ]

"""Checking a call's arguments against the JSON Schema an MCP server published for the tool.

The server would reject bad arguments too, but in its own words and after a round trip;
checking first gives the model every problem at once, located by a dotted path
(``items.0.sku``), in the same shape as a function tool's
:class:`~toolrelay.exceptions.ToolArgumentError`.

``$ref`` is resolved only inside the schema itself: a schema from a server never makes
toolrelay fetch anything.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from jsonschema import SchemaError, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry

from toolrelay.exceptions import ArgumentProblem, ToolArgumentError

__all__ = ["SchemaValidator"]

_log = logging.getLogger("toolrelay.mcp")


class SchemaValidator:
    """Validates arguments against one tool's input schema.

    A schema that is not valid JSON Schema is logged once and not checked against (the
    server still validates); everything else about the tool keeps working.

    Args:
        tool: The tool's name, for errors.
        schema: The input schema as the server gave it.
    """

    def __init__(self, tool: str, schema: Mapping[str, Any]) -> None:
        self.tool = tool
        self._validator: Validator | None = None
        try:
            document = dict(schema)
            cls = validator_for(document)
            cls.check_schema(document)
            self._validator = cls(document, registry=Registry())
        except SchemaError as exc:
            _log.warning("tool %r: invalid input schema, not validated: %s", tool, exc.message)

    @property
    def active(self) -> bool:
        """Whether arguments are checked (the schema is valid)."""
        return self._validator is not None

    def validate(self, arguments: Mapping[str, Any]) -> None:
        """Raise when ``arguments`` break the schema.

        Raises:
            ToolArgumentError: One problem per violation, sorted by location.
        """
        if self._validator is None:
            return
        try:
            errors = list(self._validator.iter_errors(dict(arguments)))
        except Exception as exc:  # an unresolvable $ref is found only while validating
            _log.warning("tool %r: cannot validate against its schema: %s", self.tool, exc)
            return
        if not errors:
            return
        unique = {(p.location, p.message): p for p in map(_problem, errors)}
        raise ToolArgumentError(self.tool, [unique[key] for key in sorted(unique)])


def _problem(error: ValidationError) -> ArgumentProblem:
    path = [str(part) for part in error.absolute_path]
    if error.validator == "required":
        # jsonschema reports a missing field at its parent; name the field itself.
        missing = _missing_field(error)
        if missing is not None:
            return ArgumentProblem(location=".".join([*path, missing]), message="Field required")
    return ArgumentProblem(location=".".join(path), message=error.message, input=error.instance)


def _missing_field(error: ValidationError) -> str | None:
    instance, required = error.instance, error.validator_value
    if not isinstance(instance, Mapping) or not isinstance(required, list):
        return None
    for name in required:
        if isinstance(name, str) and name not in instance and repr(name) in error.message:
            return name
    return None

"""The one exception tree of toolrelay.

Every error toolrelay raises derives from :class:`ToolRelayError`; foreign errors (pydantic,
provider SDKs, databases) are translated at the boundary with ``raise ... from``::

    ToolRelayError
    ├── ToolDefinitionError          a tool or its input schema is invalid (all problems listed)
    │   ├── InvalidToolNameError     a name providers would reject
    │   └── DuplicateToolError       two tools share a name (both sources named)
    ├── ToolArgumentError            a call's arguments are unusable (one entry per problem)
    │   └── InvalidJsonError         the arguments are not a JSON object
    ├── ToolNotFoundError            no tool answers to a name (closest names suggested)
    ├── ToolContextError             a tool needs a ToolContext and got none
    ├── ToolExecutionError           a tool raised; ``__cause__`` is the original exception
    │   └── ToolResultError          it did its work, but its result cannot become text
    ├── ModelError                   a chat model failed or was misused
    │   ├── ToolsNotSupportedError   tools were given to a model that cannot take them
    │   ├── ModelResponseError       the model's answer could not be understood or used
    │   ├── ModelConnectionError     the provider could not be reached (network, timeout)
    │   └── ModelAPIError            the provider answered with an error status
    │       ├── AuthenticationError  the credentials were missing, wrong or not permitted
    │       └── RateLimitError       the provider throttled the request (HTTP 429)
    ├── LimitError                   a configured limit was reached
    │   ├── ToolCallLimitError       too many tool calls in one turn (partial results kept)
    │   └── ModelCallLimitError      too many model calls in one turn
    ├── McpServerError               an MCP server could not be reached or failed (server named)
    ├── ConfigurationError           the library was set up inconsistently
    ├── LoadError                    a catalog or data file could not be loaded (line named)
    └── StorageError                 a chat memory repository or other store failed
        └── StorageUnavailableError  a store could not be reached or did not answer in time
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ArgumentProblem",
    "AuthenticationError",
    "ConfigurationError",
    "DuplicateToolError",
    "InvalidJsonError",
    "InvalidToolNameError",
    "LimitError",
    "LoadError",
    "McpServerError",
    "ModelAPIError",
    "ModelCallLimitError",
    "ModelConnectionError",
    "ModelError",
    "ModelResponseError",
    "RateLimitError",
    "StorageError",
    "StorageUnavailableError",
    "ToolArgumentError",
    "ToolCallLimitError",
    "ToolContextError",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolRelayError",
    "ToolResultError",
    "ToolsNotSupportedError",
]


class ToolRelayError(Exception):
    """Root of every error toolrelay raises."""


class ConfigurationError(ToolRelayError):
    """The library was configured inconsistently (a missing parameter, two loop advisors...)."""


class LoadError(ToolRelayError):
    """A tool catalog, a module of tools or a data file could not be loaded.

    Attributes:
        source: The path or module name that was being loaded.
        line: The 1-based line of the problem in a text file, when there is one.
        reason: What is wrong, without the location.
    """

    def __init__(self, source: str, reason: str, *, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}")


class McpServerError(ToolRelayError):
    """An MCP server could not be started or reached, closed the connection, or timed out.

    Attributes:
        server: The server's configured name.
    """

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        super().__init__(message)


class StorageError(ToolRelayError):
    """A chat memory repository or another store failed; ``__cause__`` is the driver's error."""


class StorageUnavailableError(StorageError):
    """A store (Redis, PostgreSQL) could not be reached or did not answer in time.

    Raised for refused or lost connections and timeouts. The operation may or may not have
    been applied; the stores' operations are safe to repeat once the store is back.
    """


# --- declaring tools -------------------------------------------------------------------------


class ToolDefinitionError(ToolRelayError):
    """A tool declaration is invalid.

    Attributes:
        tool: The name (or qualified function name) of the offending declaration.
        problems: Every problem found, so one fix round is enough.
    """

    def __init__(self, tool: str, problems: Sequence[str]) -> None:
        self.tool = tool
        self.problems = tuple(problems)
        listing = "; ".join(self.problems)
        super().__init__(f"invalid tool {tool!r}: {listing}")


class InvalidToolNameError(ToolDefinitionError):
    """A tool name that providers would reject."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        super().__init__(name, [reason])


class DuplicateToolError(ToolDefinitionError):
    """Two tools claim the same name (or the same provider-safe name).

    Attributes:
        name: The name claimed twice (the provider-safe form, for a clash of two names).
        first_source: Where the first tool comes from.
        second_source: Where the second one comes from.
        names: The two tools' own names when they differ and are sent to providers as the
            same ``name`` (``refund.find`` and ``refund__find``); ``None`` when they are equal.
    """

    def __init__(
        self,
        name: str,
        first_source: str,
        second_source: str,
        *,
        names: tuple[str, str] | None = None,
    ) -> None:
        self.name = name
        self.first_source = first_source
        self.second_source = second_source
        self.names = names
        if names is None:
            problem = f"defined twice, by {first_source} and by {second_source}"
        else:
            problem = (
                f"{names[0]!r} (defined by {first_source}) and {names[1]!r} (defined by "
                f"{second_source}) are both sent to providers as {name!r}"
            )
        super().__init__(name, [f"{problem}; give each tool its own name"])


# --- calling tools ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ArgumentProblem:
    """One thing wrong with a call's arguments.

    Attributes:
        location: Dotted path of the field (``"items.0.sku"``), or ``""`` for the whole input.
        message: What is wrong, in words a model can act on.
        input: The offending value, when there is one.
    """

    location: str
    message: str
    input: Any = None

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class ToolArgumentError(ToolRelayError):
    """A tool call's arguments are invalid; the tool did not run.

    Attributes:
        tool: The tool's name.
        problems: One entry per field problem.
    """

    def __init__(self, tool: str, problems: Sequence[ArgumentProblem]) -> None:
        self.tool = tool
        self.problems = tuple(problems)
        lines = "\n".join(f"- {p}" for p in self.problems)
        super().__init__(f"invalid arguments for tool {tool!r}:\n{lines}")


class InvalidJsonError(ToolArgumentError):
    """The arguments are not valid JSON, or not a JSON object."""


class ToolNotFoundError(ToolRelayError):
    """No tool answers to the requested name.

    Attributes:
        name: The name that was asked for.
        suggestions: The closest available names, best first (at most five).
    """

    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        hint = f" Did you mean: {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"Unknown tool {name!r}.{hint}")


class ToolContextError(ToolRelayError):
    """A tool needs a :class:`~toolrelay.tools.ToolContext` (or a key of it) the request lacks.

    Raised before the first model call when the request's tools are known then, and by the
    manager before any call of the tool runs, whichever door it came through.

    Attributes:
        tool: The tool's name.
        key: The missing key, or ``None`` when the tool needs any context and got none.
        caller: The tool keeps idempotency keys per caller and the context names none (no
            ``user_id``, ``tenant_id`` or ``session_id``); ``key`` is ``"user_id"``.
    """

    def __init__(self, tool: str, key: str | None = None, *, caller: bool = False) -> None:
        self.tool = tool
        self.key = key
        self.caller = caller
        how = (
            f"ChatClient(..., context={{{(key or 'tenant_id')!r}: ...}}) or "
            ".prompt(...).tool_context({...})"
        )
        if caller:
            message = (
                f"tool {tool!r} keeps its idempotency keys per caller, and the request names "
                "no caller: give its tool context a 'user_id' (or a 'tenant_id' or "
                f"'session_id'), as with {how}; or, when every caller may share its results, "
                "declare idempotency_scope='global'"
            )
        elif key is None:
            message = (
                f"tool {tool!r} requires a ToolContext, but the request has none; pass it "
                f"with the request's tool context ({how})"
            )
        else:
            message = (
                f"tool {tool!r} requires {key!r} in its ToolContext, but the request has "
                f"none; pass it with the request's tool context ({how})"
            )
        super().__init__(message)


class ToolExecutionError(ToolRelayError):
    """A tool raised while running; the original exception is ``__cause__``.

    Attributes:
        tool: The tool's name.
    """

    def __init__(self, tool: str, message: str) -> None:
        self.tool = tool
        super().__init__(message)


class ToolResultError(ToolExecutionError):
    """A tool's function returned, but its value cannot be turned into text.

    The work is done (a refund paid, say): the manager answers with an error and an
    idempotent call keeps its key, so that a retry never does the work twice. The
    converter's exception is ``__cause__``.
    """

    def __init__(self, tool: str) -> None:
        super().__init__(tool, f"tool {tool!r} returned a value that cannot be turned into text")


# --- models ----------------------------------------------------------------------------------


class ModelError(ToolRelayError):
    """A chat model failed or was used in a way it does not support."""


class ToolsNotSupportedError(ModelError):
    """Tools were given to a model that cannot call tools."""


class ModelResponseError(ModelError):
    """The model's answer could not be used (no generation, unparsable structured output...)."""


class ModelConnectionError(ModelError):
    """The provider could not be reached, or did not answer in time.

    Attributes:
        provider: Which provider (``"openai"``, ``"anthropic"``, ...).
    """

    def __init__(self, provider: str, message: str) -> None:
        self.provider = provider
        super().__init__(message)


class ModelAPIError(ModelError):
    """The provider answered a request with an error status.

    Attributes:
        provider: Which provider (``"openai"``, ``"anthropic"``, ...).
        status_code: The HTTP status, or ``None`` for an error reported inside a stream.
    """

    def __init__(self, provider: str, status_code: int | None, message: str) -> None:
        self.provider = provider
        self.status_code = status_code
        super().__init__(message)


class AuthenticationError(ModelAPIError):
    """The provider rejected the credentials (HTTP 401) or their permissions (HTTP 403)."""


class RateLimitError(ModelAPIError):
    """The provider throttled the request (HTTP 429), after the client's own retries."""


# --- limits ----------------------------------------------------------------------------------


class LimitError(ToolRelayError):
    """A configured limit was reached."""


class ToolCallLimitError(LimitError):
    """Too many tool calls in one turn.

    Attributes:
        partial: Whatever results were produced before the limit (a ``ToolExecutionResult``).
    """

    def __init__(self, message: str, partial: Any = None) -> None:
        self.partial = partial
        super().__init__(message)


class ModelCallLimitError(LimitError):
    """The tool loop called the model more times than allowed in one turn."""

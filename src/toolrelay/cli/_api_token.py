"""``toolrelay api-token``: a new API token for a gateway's ``[[auth.tokens]]``.

The token is printed once, for the caller; the gateway file keeps only its SHA-256 digest
(:class:`~toolrelay.mcp._auth.ApiToken`), so a leaked file reveals no token.
"""

from __future__ import annotations

import json
import secrets
from typing import Annotated

import typer

from toolrelay.cli._output import JsonOption, emit_json, missing_extra

__all__ = ["TOKEN_PREFIX", "api_token_command"]

TOKEN_PREFIX = "trl_"
"""What every token starts with, so secret scanners and people recognise one."""


def api_token_command(
    user: Annotated[str, typer.Option("--user", help="The caller's user_id.", show_default=False)],
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="The caller's tenant_id.", show_default=False)
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option("--scope", help="A scope of the caller; repeat for more.", show_default=False),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Make an API token for one caller and print it with its [[auth.tokens]] entry.

    The token (256 random bits) is shown once: give it to the caller, who sends it as
    `Authorization: Bearer <token>`. Add the entry to the gateway file's [auth]; it holds the
    token's SHA-256 digest, never the token. Needs the mcp extra.
    """
    try:
        from toolrelay.mcp._auth import ApiToken
    except ImportError as exc:  # the SDK is an optional extra
        raise missing_extra("toolrelay api-token", "mcp") from exc
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    entry = ApiToken(
        sha256=ApiToken.digest(token), user_id=user, tenant_id=tenant, scopes=tuple(scope or ())
    )
    fields = entry.model_dump(exclude_none=True)
    if as_json:
        emit_json({"token": token, "entry": fields})
        return
    lines = [f"{name} = {json.dumps(value, ensure_ascii=False)}" for name, value in fields.items()]
    typer.echo(f"token (shown only now; give it to the caller): {token}\n")
    typer.echo("add to the gateway file:\n[[auth.tokens]]\n" + "\n".join(lines))

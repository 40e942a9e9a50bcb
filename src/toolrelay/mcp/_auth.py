"""Who may call a server over HTTP: bearer tokens verified, the caller's identity from them.

An :class:`Authenticator` is one of two kinds, each a gateway file's ``[auth]`` table:

.. code-block:: toml

    [auth]                                      # JWTs from an authorization server
    issuer = "https://auth.example.com"         # the tokens' iss
    audience = "https://tools.example.com/mcp"  # their aud: this server
    jwks = "keys/jwks.json"                     # or key = "keys/public.pem"
    [auth.claims]                               # tool context key = claim
    tenant_id = "org_id"

    [[auth.tokens]]                             # or: API tokens, each bound to one caller
    sha256 = "9f86d081884c7d65..."              # toolrelay api-token makes one
    user_id = "ops-bot"
    tenant_id = "acme"
    scopes = ["refunds:read"]

The SDK's bearer middleware asks :func:`token_verifier`'s verifier about each request's
``Authorization: Bearer`` token: a JWT's signature (PyJWT, against the key or the JWKS key its
``kid`` names), issuer, audience and expiry are checked, with ``leeway`` seconds of clock
skew; an API token's SHA-256 digest is compared in constant time with each entry's. A token
that fails is answered 401 with ``WWW-Authenticate`` and nothing runs. A verified token
carries the caller's tool context entries (:func:`verified_context`): ``user_id`` (the
``sub`` claim unless mapped), ``scopes`` (``scope``, space-separated, or ``scp``), and every
entry ``[auth.claims]`` maps, each required. Key files are read again when they change, and
a JWKS at once (at most every few seconds) when a token names a key it lacks, so keys rotate
without a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from mcp.server.auth.provider import AccessToken, TokenVerifier
from pydantic import Field, field_validator, model_validator

from toolrelay._plural import plural
from toolrelay._settings import FrozenMapping, RelativePath, Settings

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "ApiToken",
    "Authenticator",
    "describe",
    "token_verifier",
    "verified_context",
]

_log = logging.getLogger("toolrelay.mcp")

ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
"""The JWT algorithms an :class:`Authenticator` accepts: signed with a private key, checked
with the public one. Shared secrets (``HS256``...) and ``none`` are refused."""

_DIGEST = re.compile(r"[0-9a-f]{64}")
_RELOAD_SECONDS = 5.0  # the least time between two reads of a JWKS for an unknown kid


class ApiToken(Settings):
    """One ``[[auth.tokens]]`` entry: an opaque API token and the caller it stands for.

    The token itself is never stored: only its SHA-256 digest (``toolrelay api-token``
    makes a token and prints its entry once).

    Attributes:
        sha256: The token's SHA-256 digest, 64 lowercase hex digits.
        user_id: The caller's ``user_id``.
        tenant_id: The caller's ``tenant_id``, if it has one.
        scopes: The caller's scopes.
    """

    sha256: str
    user_id: str = Field(min_length=1)
    tenant_id: str | None = Field(None, min_length=1)
    scopes: tuple[str, ...] = Field((), strict=False)

    @field_validator("sha256")
    @classmethod
    def _digest(cls, value: str) -> str:
        if not _DIGEST.fullmatch(value):
            raise ValueError(
                "must be the token's SHA-256 digest, 64 lowercase hex digits (toolrelay "
                "api-token prints a new token's entry); never the token itself"
            )
        return value

    @classmethod
    def digest(cls, token: str) -> str:
        """The ``sha256`` entry of ``token``."""
        return hashlib.sha256(token.encode()).hexdigest()


class Authenticator(Settings):
    """How a server over HTTP knows its callers: JWTs checked against a key, or API tokens.

    A gateway file's ``[auth]`` table (see the module docs); in code
    ``Authenticator(issuer=..., audience=..., jwks="keys/jwks.json")`` or
    ``Authenticator(tokens=[{"sha256": ..., "user_id": ...}])``.

    Attributes:
        issuer: The JWTs' ``iss``: the authorization server. When it and ``audience`` are
            http(s) URLs, the server publishes its Protected Resource Metadata (RFC 9728)
            naming it.
        audience: The JWTs' ``aud``: this server, as the authorization server names it
            (its URL, ``https://tools.example.com/mcp``).
        key: A PEM file with the public key (or a certificate) the JWTs are signed for.
        jwks: A JSON Web Key Set file; a token's ``kid`` picks its key.
        algorithms: The JWT algorithms accepted, among :data:`ASYMMETRIC_ALGORITHMS`.
        leeway: Seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``.
        claims: Tool context entries read from claims (``{"tenant_id": "org_id"}``), each
            required; ``user_id`` is ``sub`` unless mapped, ``scopes`` the ``scope`` or
            ``scp`` claim unless mapped.
        tokens: The API tokens, instead of JWTs.

    Raises:
        ConfigurationError: Neither or both kinds; a JWT setting missing or given with API
            tokens; an algorithm that is not asymmetric; a key file that cannot be read.
    """

    issuer: str | None = Field(None, min_length=1)
    audience: str | None = Field(None, min_length=1)
    key: RelativePath | None = None
    jwks: RelativePath | None = None
    algorithms: tuple[str, ...] = Field(("RS256", "ES256", "EdDSA"), strict=False, min_length=1)
    leeway: float = Field(30.0, ge=0, le=300)
    claims: FrozenMapping[str] = Field(default_factory=dict)
    tokens: tuple[ApiToken, ...] = Field((), strict=False)

    @field_validator("algorithms")
    @classmethod
    def _asymmetric(cls, algorithms: tuple[str, ...]) -> tuple[str, ...]:
        for name in algorithms:
            if name not in ASYMMETRIC_ALGORITHMS:
                raise ValueError(
                    f"{name!r} is not accepted: tokens must be signed with a private key "
                    f"(one of {', '.join(sorted(ASYMMETRIC_ALGORITHMS))})"
                )
        return algorithms

    @field_validator("key")
    @classmethod
    def _readable_key(cls, path: str | None) -> str | None:
        if path is not None:
            _read_pem(Path(path))
        return path

    @field_validator("jwks")
    @classmethod
    def _readable_jwks(cls, path: str | None) -> str | None:
        if path is not None:
            _read_jwks(Path(path))
        return path

    @field_validator("claims")
    @classmethod
    def _claim_names(cls, claims: Mapping[str, str]) -> Mapping[str, str]:
        for key, claim in claims.items():
            if not key or not claim:
                raise ValueError("each entry maps a tool context key to a claim name")
        return claims

    @field_validator("tokens")
    @classmethod
    def _distinct(cls, tokens: tuple[ApiToken, ...]) -> tuple[ApiToken, ...]:
        if len({t.sha256 for t in tokens}) < len(tokens):
            raise ValueError("two entries have the same sha256")
        return tokens

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        jwt_fields = [name for name in _JWT_FIELDS if name in self.model_fields_set]
        if self.tokens:
            if jwt_fields:
                raise ValueError(
                    f"{', '.join(jwt_fields)} apply to JWTs; API tokens ([[auth.tokens]]) "
                    "take none of them"
                )
            return self
        if (self.key is None) == (self.jwks is None):
            raise ValueError(
                "needs the JWTs' key (key = PEM file, or jwks = JWKS file, one of them) or "
                "API tokens ([[auth.tokens]] entries)"
            )
        missing = [name for name in ("issuer", "audience") if getattr(self, name) is None]
        if missing:
            raise ValueError(f"JWTs are checked against an issuer and an audience: add {missing}")
        return self


_JWT_FIELDS = ("issuer", "audience", "key", "jwks", "algorithms", "leeway", "claims")


def describe(auth: Authenticator | None) -> str:
    """Who may call a server with this authenticator, for its start-up line."""
    if auth is None:
        return "_meta identity trusted: loopback, no authenticator"
    if auth.tokens:
        return f"bearer token required: {plural(len(auth.tokens), 'API token')}"
    return f"bearer token required: a JWT from {auth.issuer} for {auth.audience}"


def token_verifier(auth: Authenticator) -> TokenVerifier:
    """The SDK's token verifier for ``auth``: a verified token carries its caller's context."""
    return _ApiTokens(auth.tokens) if auth.tokens else _Jwts(auth)


def verified_context(token: AccessToken) -> dict[str, Any]:
    """The tool context entries of a verified caller.

    A token from :func:`token_verifier` carries them; any other verifier's gives its
    subject (or client) as ``user_id`` and its scopes.
    """
    if isinstance(token, _Caller):
        return dict(token.context)
    return {"user_id": token.subject or token.client_id, "scopes": tuple(token.scopes)}


class _Caller(AccessToken):
    """A verified token with its caller's tool context entries."""

    context: dict[str, Any]


class _Refused(Exception):
    """A token that verified but lacks what the caller's context needs."""


class _ApiTokens:
    """Verifies opaque API tokens by their SHA-256 digests."""

    def __init__(self, tokens: tuple[ApiToken, ...]) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        digest = ApiToken.digest(token)
        found = None
        for entry in self.tokens:  # every entry, so the time says nothing of which matched
            if hmac.compare_digest(digest, entry.sha256):
                found = entry
        if found is None:
            _log.info("bearer token refused: no API token has its digest")
            return None
        context: dict[str, Any] = {"user_id": found.user_id, "scopes": found.scopes}
        if found.tenant_id is not None:
            context["tenant_id"] = found.tenant_id
        return _Caller(
            token=token,
            # The SDK binds a session to its client and subject: one per token.
            client_id=f"api-token:{found.sha256[:16]}",
            subject=found.user_id,
            scopes=list(found.scopes),
            context=context,
        )


class _Jwts:
    """Verifies JWTs with PyJWT against a key file or a JWKS file."""

    def __init__(self, auth: Authenticator) -> None:
        self.auth = auth
        self.keys = _KeyFile(Path(auth.jwks or auth.key or ""), jwks=auth.jwks is not None)

    async def verify_token(self, token: str) -> AccessToken | None:
        auth = self.auth
        try:
            claims = jwt.decode(
                token,
                self.keys.key_for(jwt.get_unverified_header(token)),
                algorithms=list(auth.algorithms),
                audience=auth.audience,
                issuer=auth.issuer,
                leeway=auth.leeway,
                options={"require": ["exp", "iss", "aud"], "enforce_minimum_key_length": True},
            )
            context = _claimed(claims, auth.claims)
        except (jwt.PyJWTError, _Refused, TypeError, ValueError) as exc:
            # PyJWT raises TypeError for a key of another kind than the token's algorithm.
            _log.info("bearer token refused: %s", exc)
            return None
        subject = claims.get("sub")
        client = claims.get("client_id") or claims.get("azp") or subject
        return _Caller(
            token=token,
            client_id=str(client),
            subject=None if subject is None else str(subject),
            scopes=list(context["scopes"]),
            # The SDK refuses a token past expires_at itself, without the leeway.
            expires_at=int(claims["exp"] + auth.leeway),
            resource=auth.audience,
            claims=claims,
            context=context,
        )


def _claimed(claims: Mapping[str, Any], mapping: Mapping[str, str]) -> dict[str, Any]:
    """The caller's context entries from a verified token's claims."""
    context: dict[str, Any] = {}
    for key, claim in {"user_id": "sub", **mapping}.items():
        value = claims.get(claim)
        if value is None or value == "":
            raise _Refused(f"the token has no {claim!r} claim (the caller's {key})")
        context[key] = _scopes(value, claim) if key == "scopes" else value
    if "scopes" not in context:
        given = claims.get("scope", claims.get("scp"))
        context["scopes"] = () if given is None else _scopes(given, "scope")
    return context


def _scopes(value: object, claim: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return tuple(value)
    raise _Refused(f"the token's {claim!r} claim is neither a text nor a list of texts")


class _KeyFile:
    """The public keys in a PEM or JWKS file, read again when the file changes."""

    def __init__(self, path: Path, *, jwks: bool) -> None:
        self.path = path
        self.jwks = jwks
        self._stamp: tuple[int, int, int] | None = None
        self._keys: dict[str | None, Any] = {}
        self._forced = 0.0

    def key_for(self, header: Mapping[str, Any]) -> Any:
        """The key a token with this JOSE header is checked with."""
        self._refresh(force=False)
        if not self.jwks:
            return self._keys[None]
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise _Refused("the token's kid is not a text")
        if kid is None:
            if len(self._keys) == 1:
                return next(iter(self._keys.values()))
            raise _Refused("the token names no key (kid) and the JWKS has several")
        if kid not in self._keys and time.monotonic() - self._forced >= _RELOAD_SECONDS:
            self._forced = time.monotonic()
            self._refresh(force=True)  # a new key may have been published just now
        if kid not in self._keys:
            raise _Refused(f"the JWKS has no key {kid!r}")
        return self._keys[kid]

    def _refresh(self, *, force: bool) -> None:
        try:
            info = os.stat(self.path)
        except OSError as exc:
            if not self._keys:
                raise _Refused(f"cannot read {self.path}: {exc.strerror}") from exc
            _log.warning("cannot read %s (%s); keeping its keys as last read", self.path, exc)
            return
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        if stamp == self._stamp and not force:
            return
        try:
            if self.jwks:
                self._keys = {key.key_id: key for key in _read_jwks(self.path)}
            else:
                self._keys = {None: _read_pem(self.path)}
        except ValueError as exc:
            if not self._keys:
                raise _Refused(str(exc)) from exc
            _log.warning("%s; keeping the keys as last read", exc)
            return
        self._stamp = stamp


def _read_pem(path: Path) -> Any:
    """The public key in a PEM file (a public key or a certificate)."""
    data = _read(path)
    try:
        if b"-----BEGIN CERTIFICATE-----" in data:
            return x509.load_pem_x509_certificate(data).public_key()
        return serialization.load_pem_public_key(data)
    except ValueError as exc:
        raise ValueError(f"{path} holds no PEM public key or certificate ({exc})") from None


def _read_jwks(path: Path) -> list[jwt.PyJWK]:
    """The signing keys of a JWKS file."""
    try:
        keys = jwt.PyJWKSet.from_json(_read(path).decode()).keys
    except (jwt.PyJWTError, json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
        raise ValueError(f"{path} is no JSON Web Key Set ({exc})") from None
    signing = [key for key in keys if key.public_key_use in (None, "sig")]
    if not signing:
        raise ValueError(f"{path} has no signing key")
    return signing


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None

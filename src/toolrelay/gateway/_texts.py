"""The texts a gateway's clients read, per language, and how a gateway picks them.

Besides the catalog's own texts, an MCP client's model reads the descriptions of
``tool_search`` and ``call_tool`` and of their parameters, the server's instructions, and the
answer to a name it may not use. The parameters of ``tool_search`` and that answer are the
in-process tool search's (:class:`~toolrelay.toolsearch.SearchTexts`), so both speak alike. The
rest differs from the in-process texts, because a gateway's hits carry their input schema and
its tools run through ``call_tool``; :class:`GatewayTexts` holds them, with the search texts,
in one language: :data:`ENGLISH` and :data:`CHINESE`. The descriptions of the two tools are the
proxy channel's texts of :class:`~toolrelay.toolsearch.SearchTexts` (``proxy_description``,
``call_description``, ``call_parameters``): a gateway and ``ToolSearchAdvisor(channel="proxy")``
speak alike.

:class:`~toolrelay.gateway.ToolGateway` takes ``language="auto"`` by default, like the
:class:`~toolrelay.client.ToolSearchAdvisor`: the texts follow the language of the catalogs'
descriptions (``catalog_language``); ``"en"`` and ``"zh"`` fix
it, and :class:`GatewayTexts` of your own give texts in any other::

    ToolGateway(catalogs, language="zh")
    ToolGateway(catalogs, language=dataclasses.replace(CHINESE, instructions="..."))

The file's ``[search] language`` sets it for ``toolrelay serve``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast, get_args

from toolrelay.exceptions import ConfigurationError
from toolrelay.mcp._annotations import OPEN_WORLD
from toolrelay.tools._base import ToolDefinition, ToolMetadata
from toolrelay.tools._function import FunctionTool
from toolrelay.tools._schema import cached_function_schema
from toolrelay.toolsearch import _texts as search_texts
from toolrelay.toolsearch._proxy import call_tool as proxy_call_tool
from toolrelay.toolsearch._search_tool import CALL_TOOL_NAME, TOOL_SEARCH_NAME, search_tool_schema
from toolrelay.toolsearch._texts import (
    FROM_LANGUAGE,
    FromLanguage,
    SearchLanguage,
    SearchTexts,
    SearchTextSelector,
)

__all__ = [
    "CALL_TOOL_NAME",
    "CHINESE",
    "ENGLISH",
    "GATEWAY_TEXTS",
    "GatewayTextSelector",
    "GatewayTexts",
    "described_tools",
]


@dataclass(frozen=True, kw_only=True)
class GatewayTexts:
    """The texts a gateway's clients read, in one language.

    Attributes:
        search: The tool search texts of the language: ``parameters`` describe the
            parameters of ``tool_search``, ``unavailable_message`` answers a name the caller
            cannot use (the in-process ``description`` and ``system_suffix`` are not used).
        search_description: What the client reads about ``tool_search``.
        call_description: What it reads about ``call_tool``.
        call_parameters: What it reads about each parameter of ``call_tool`` (``name``,
            ``arguments``), by name.
        instructions: The server's instructions, unless the file's ``[gateway]
            instructions`` gives others.
    """

    search: SearchTexts
    search_description: str
    call_description: str
    call_parameters: Mapping[str, str]
    instructions: str

    @property
    def language(self) -> str:
        """The language the texts are written in (that of :attr:`search`)."""
        return self.search.language


ENGLISH = GatewayTexts(
    search=search_texts.ENGLISH,
    search_description=search_texts.ENGLISH.proxy_description,
    call_description=search_texts.ENGLISH.call_description,
    call_parameters=search_texts.ENGLISH.call_parameters,
    instructions=(
        "This server fronts a large tool catalog. Find tools with "
        f"{TOOL_SEARCH_NAME} (a few words for the action), then run one with "
        f"{CALL_TOOL_NAME}(name, arguments), its arguments following the input_schema the "
        "search returned."
    ),
)
"""The English texts."""

CHINESE = GatewayTexts(
    search=search_texts.CHINESE,
    search_description=search_texts.CHINESE.proxy_description,
    call_description=search_texts.CHINESE.call_description,
    call_parameters=search_texts.CHINESE.call_parameters,
    instructions=(
        f"此服务器提供一个大型工具目录。先用 {TOOL_SEARCH_NAME} 查找工具（用几个词说明要做的"
        f"动作），再用 {CALL_TOOL_NAME}(name, arguments) 运行其中一个，参数须符合搜索返回的 "
        "input_schema。"
    ),
)
"""The Chinese texts."""

GATEWAY_TEXTS: Mapping[str, GatewayTexts] = MappingProxyType({"en": ENGLISH, "zh": CHINESE})
"""The texts of each language ``language`` can name (the keys of ``SEARCH_TEXTS``)."""


class GatewayTextSelector:
    """The texts of one gateway: its language option, with an explicit unavailable answer.

    Args:
        language: ``"auto"``, ``"en"``, ``"zh"`` or texts of your own (see the module docs).
        unavailable_message: The answer to a name the caller cannot use, winning over the
            language's; :data:`~toolrelay.toolsearch.FROM_LANGUAGE` for the
            language's.

    Raises:
        ConfigurationError: ``language`` is none of those, or your texts describe parameters
            the gateway's tools do not have.
    """

    def __init__(
        self,
        language: SearchLanguage | GatewayTexts = "auto",
        unavailable_message: str | FromLanguage = FROM_LANGUAGE,
    ) -> None:
        self.language = language
        self._own = language if isinstance(language, GatewayTexts) else None
        if self._own is not None:
            unknown = sorted(set(self._own.call_parameters) - set(ENGLISH.call_parameters))
            if unknown:
                raise ConfigurationError(f"{CALL_TOOL_NAME} has no parameters {unknown}")
        # The search texts (and with them the language under "auto") are chosen as the
        # advisor chooses them.
        self._search = SearchTextSelector(
            self._own.search if self._own is not None else _search_language(language),
            unavailable_message=unavailable_message,
        )
        self._last: GatewayTexts | None = None

    def for_catalog(self, definitions: Sequence[ToolDefinition]) -> GatewayTexts:
        """The texts for a catalog with these definitions.

        Under ``"auto"`` the catalog's language decides; asking again with the same
        (identical) sequence, as every request does until the catalog changes, costs nothing.
        """
        search = self._search.for_catalog(definitions)
        last = self._last
        if last is not None and last.search is search:
            return last
        base = self._own if self._own is not None else GATEWAY_TEXTS[search.language]
        self._last = dataclasses.replace(base, search=search)
        return self._last

    def __repr__(self) -> str:
        language = self.language
        shown = language.language if isinstance(language, GatewayTexts) else language
        return f"GatewayTextSelector(language={shown!r})"


def described_tools(
    texts: GatewayTexts,
    tool_search: Callable[..., Any],
    call_tool: Callable[..., Any],
) -> list[FunctionTool]:
    """``tool_search`` and ``call_tool`` as the tools a client sees, described in ``texts``.

    The proxy channel's pair (:mod:`toolrelay.toolsearch._proxy`). The input schemas clients
    read are plain (``call_tool_schema``, and the in-process ``tool_search``'s); the
    functions' own schemas validate the calls. ``tool_search`` is read-only and stays within
    the gateway's catalog; ``call_tool`` gets metadata saying it may change anything, which
    a gateway replaces with what its tools can do.
    """
    search = FunctionTool(
        function=tool_search,
        definition=ToolDefinition(
            name=TOOL_SEARCH_NAME,
            description=texts.search_description,
            input_schema=search_tool_schema(texts.search.parameters),
        ),
        metadata=ToolMetadata(read_only=True, extra={OPEN_WORLD: False}),
        schema=cached_function_schema(tool_search, tool_name=TOOL_SEARCH_NAME),
    )
    call = proxy_call_tool(call_tool, texts.call_description, texts.call_parameters)
    return [search, call]


def _search_language(language: object) -> SearchLanguage:
    if language in get_args(SearchLanguage):
        return cast(SearchLanguage, language)
    raise ConfigurationError(
        f"unknown gateway language {language!r}; use 'auto', 'en', 'zh' or GatewayTexts of your own"
    )

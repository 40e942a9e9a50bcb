"""Every text tool search shows the model, per language, and how a front end picks them.

Under tool search the model reads texts that are not the catalog's own: the description of
``tool_search`` and of its parameters, the suffix of the system message, the answer to a call
of a tool it was not shown, and the answer to such a call whose name is close to the name of
a tool it was shown (a misspelling: the answer names those tools). In the proxy channel
(``channel="proxy"``) and the MCP gateway ``tool_search`` answers with whole definitions and
found tools run through ``call_tool(name, arguments)``: the model reads ``tool_search``'s and
the system suffix's proxy texts instead, ``call_tool``'s description and parameters, and an
MCP client the server's instructions. :class:`SearchTexts` holds them all in one language:
:data:`ENGLISH` and :data:`CHINESE`.

``SearchOptions(language="auto")``, the default, makes the texts follow the catalog's language
(Chinese when more than a fifth of the characters of its descriptions are CJK, see
``catalog_language``), decided again whenever the catalog changes. ``"en"`` and ``"zh"`` fix
the language, and a :class:`SearchTexts` of your own gives texts in any other, or changes one::

    SearchOptions(language="zh")  # Chinese texts
    SearchOptions(language=dataclasses.replace(ENGLISH, system_suffix=None))  # no suffix
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution._resolution import closest_names
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._language import catalog_language
from toolrelay.tools._names import provider_safe_name

__all__ = [
    "CALL_TOOL_NAME",
    "CHINESE",
    "ENGLISH",
    "SIMILAR_NAME_CUTOFF",
    "TOOL_SEARCH_NAME",
    "SearchLanguage",
    "SearchTextSelector",
    "SearchTexts",
    "unavailable_text",
]

TOOL_SEARCH_NAME: Final = "tool_search"
"""The name of the search tool (provider-safe as it is)."""

CALL_TOOL_NAME: Final = "call_tool"
"""The name of the tool that runs a found tool by name, in the proxy channel and the gateway."""

SearchLanguage = Literal["auto", "en", "zh"]
"""The ``language`` option: ``"auto"`` (the catalog's language), ``"en"`` or ``"zh"``."""

SIMILAR_NAME_CUTOFF = 0.7
"""How close (difflib's ratio on folded names, 0-1) a shown name must be to be suggested.

Stricter than the manager's cutoff for unknown names: under tool search the alternative to a
suggestion is a search, so only a likely misspelling is worth pointing to. ``get_wether`` is
0.95 from ``get_weather``, ``ticket.create`` 0.75 from ``ticket.create_incident``, while
``orders.cancel`` (0.58 from ``orders.status``) is left to a search.
"""

_MAX_SHOWN_NAME = 80


def unavailable_text(template: str, name: str, similar: Sequence[str] = ()) -> str:
    """``template`` filled in for a call to ``name`` (quoted, shortened when very long).

    ``similar`` fills ``{similar}``: canonical names, listed in the provider-safe form the
    model was shown them in.
    """
    shown = name if len(name) <= _MAX_SHOWN_NAME else name[:_MAX_SHOWN_NAME] + "..."
    return template.format(
        name=repr(shown),
        search_tool=TOOL_SEARCH_NAME,
        similar=", ".join(provider_safe_name(n) for n in similar),
    )


@dataclass(frozen=True, kw_only=True)
class SearchTexts:
    """The texts tool search shows the model, in one language.

    Attributes:
        language: The language they are written in (``"en"``, ``"zh"``, or your own tag).
        description: What the model reads about ``tool_search``.
        parameters: What it reads about each parameter of ``tool_search`` (``queries``,
            ``max_results``, ``category``), by name.
        system_suffix: Appended to the system message of every model call; ``None`` for none.
        unavailable_message: The answer to a call of a tool the model was not shown (the
            same for an undiscovered, a forbidden and an unknown name); ``{name}`` (the name
            as called, quoted) and ``{search_tool}`` are filled in.
        similar_names_message: The answer instead when the name is close to names of tools
            the model was shown (:data:`SIMILAR_NAME_CUTOFF`); ``{similar}`` lists those, and
            ``{name}`` and ``{search_tool}`` are filled in as above. ``None``: such a call
            gets ``unavailable_message`` too.
        proxy_description: What the model reads about ``tool_search`` where its answers carry
            the found tools' definitions (the proxy channel, the gateway).
        proxy_system_suffix: The system suffix of the proxy channel; ``None`` for none.
        call_description: What the model reads about ``call_tool``.
        call_parameters: What it reads about each parameter of ``call_tool`` (``name``,
            ``arguments``), by name.
        left_out: In an answer carrying definitions, said of a hit whose definition did not
            fit the result bound (the hit is named only).
        instructions: What an MCP gateway tells its clients about itself.
    """

    language: str
    description: str
    parameters: Mapping[str, str]
    system_suffix: str | None
    unavailable_message: str
    proxy_description: str
    proxy_system_suffix: str | None
    call_description: str
    call_parameters: Mapping[str, str]
    left_out: str
    instructions: str
    similar_names_message: str | None = None

    def __post_init__(self) -> None:
        for option, names, known in (
            ("parameters", self.parameters, ENGLISH_PARAMETERS),
            ("call_parameters", self.call_parameters, ENGLISH_CALL_PARAMETERS),
        ):
            unknown = sorted(set(names) - set(known))
            if unknown:
                tool = TOOL_SEARCH_NAME if option == "parameters" else CALL_TOOL_NAME
                raise ConfigurationError(f"{tool} has no parameters {unknown} ({option})")

    def unavailable_answer(self, name: str, shown: Sequence[str]) -> str:
        """The answer to a call of ``name``, a tool the model was not shown.

        Args:
            name: The name as the model called it.
            shown: The names of the tools the model was shown; the only names ever suggested,
                so the answer is the same whether ``name`` belongs to an undiscovered tool, a
                forbidden one or none.
        """
        if self.similar_names_message is not None:
            similar = closest_names(name, shown, cutoff=SIMILAR_NAME_CUTOFF)
            if similar:
                return unavailable_text(self.similar_names_message, name, similar)
        return unavailable_text(self.unavailable_message, name)


ENGLISH_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {
        "queries": "One per need: the action and its object, e.g. 'cancel order'.",
        "max_results": "How many tools per query (1-10).",
        "category": "Only this category, e.g. 'refund' for refund.* tools.",
    }
)
ENGLISH_CALL_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {"name": "Its exact name.", "arguments": "Following its input_schema."}
)

ENGLISH = SearchTexts(
    language="en",
    description=(
        "Find hidden tools by what they do; call them from your next step by the exact names "
        "returned. Search for every tool the task needs in one call, one query per need."
    ),
    parameters=ENGLISH_PARAMETERS,
    system_suffix=f"Most tools are hidden; find them with {TOOL_SEARCH_NAME}.",
    unavailable_message=(
        "Tool {name} is not available. Search for it with {search_tool} first, then call it by "
        "the exact name the search returns."
    ),
    similar_names_message=(
        "Tool {name} is not available; similar tools you can call: {similar}. Call one of them "
        "by its exact name, or search for another tool with {search_tool} first."
    ),
    proxy_description=(
        "Find hidden tools by what they do. Answers with their definitions, best first; run "
        f"them with {CALL_TOOL_NAME}. Search for every tool the task needs in one call, one query "
        "per need."
    ),
    proxy_system_suffix=(
        f"Most tools are hidden; find them with {TOOL_SEARCH_NAME}, run them with {CALL_TOOL_NAME}."
    ),
    call_description=f"Run a tool found with {TOOL_SEARCH_NAME}.",
    call_parameters=ENGLISH_CALL_PARAMETERS,
    left_out="Definition left out: the answer was full. Search for this tool alone.",
    instructions=(
        "This server fronts a large tool catalog. Find tools with "
        f"{TOOL_SEARCH_NAME} (a few words for each action you need, one query each), then run "
        "one with "
        f"{CALL_TOOL_NAME}(name, arguments), its arguments following the input_schema the "
        "search returned."
    ),
)
"""The English texts."""

CHINESE = SearchTexts(
    language="zh",
    description=(
        "按功能查找隐藏的工具；从你的下一步起按返回的准确名称调用它们。"
        "用一次调用查找任务所需的全部工具，每项需求一条查询。"
    ),
    parameters=MappingProxyType(
        {
            "queries": "每项需求一条：动作和对象，例如“取消订单”。",
            "max_results": "每条查询返回的工具数量（1-10）。",
            "category": "只搜索该类别的工具，例如 'refund' 表示 refund.* 工具。",
        }
    ),
    system_suffix=f"大多数工具是隐藏的，请用 {TOOL_SEARCH_NAME} 查找。",
    unavailable_message=(
        "工具 {name} 不可用。请先用 {search_tool} 搜索它，再按搜索返回的准确名称调用。"
    ),
    similar_names_message=(
        "工具 {name} 不可用；名称相近、可以调用的工具：{similar}。请按准确名称调用其中之一，"
        "或先用 {search_tool} 搜索其他工具。"
    ),
    proxy_description=(
        f"按功能查找隐藏的工具。返回它们的定义，最匹配的在前；用 {CALL_TOOL_NAME} 运行。"
        "用一次调用查找任务所需的全部工具，每项需求一条查询。"
    ),
    proxy_system_suffix=(
        f"大多数工具是隐藏的，请用 {TOOL_SEARCH_NAME} 查找，用 {CALL_TOOL_NAME} 运行。"
    ),
    call_description=f"运行用 {TOOL_SEARCH_NAME} 找到的工具。",
    call_parameters=MappingProxyType(
        {"name": "工具的准确名称。", "arguments": "须符合其 input_schema。"}
    ),
    left_out="定义未列出：本次回答已满。请单独搜索此工具。",
    instructions=(
        f"此服务器提供一个大型工具目录。先用 {TOOL_SEARCH_NAME} 查找工具（每个要做的动作一条"
        f"查询，各用几个词），再用 {CALL_TOOL_NAME}(name, arguments) 运行其中一个，"
        "参数须符合搜索返回的 input_schema。"
    ),
)
"""The Chinese texts."""

_BY_LANGUAGE: Mapping[str, SearchTexts] = MappingProxyType({"en": ENGLISH, "zh": CHINESE})


class SearchTextSelector:
    """The texts of one front end, from its ``language`` option (see the module docs).

    Args:
        language: ``"auto"``, ``"en"``, ``"zh"`` or texts of your own (checked by
            :class:`~toolrelay.toolsearch.SearchOptions`).
    """

    def __init__(self, language: SearchLanguage | SearchTexts = "auto") -> None:
        self.language = language
        fixed = _BY_LANGUAGE.get(language) if isinstance(language, str) else language
        self._fixed: SearchTexts | None = fixed
        self._seen: tuple[Sequence[ToolDefinition], SearchTexts] | None = None

    def for_catalog(self, definitions: Sequence[ToolDefinition]) -> SearchTexts:
        """The texts for a catalog with these definitions.

        With ``"auto"`` the catalog's language decides; the answer for the last sequence
        asked about is kept, so asking again with the same (identical) sequence, as every
        turn does until the catalog changes, costs nothing.
        """
        if self._fixed is not None:
            return self._fixed
        seen = self._seen
        if seen is not None and seen[0] is definitions:
            return seen[1]
        texts = _BY_LANGUAGE[catalog_language(definitions)]
        self._seen = (definitions, texts)
        return texts

    def __repr__(self) -> str:
        language = self.language
        shown = language.language if isinstance(language, SearchTexts) else language
        return f"SearchTextSelector(language={shown!r})"

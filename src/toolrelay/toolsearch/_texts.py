"""The texts tool search shows the model, per language, and how an advisor picks them.

Under tool search the model reads five texts that are not the catalog's own: the description
of ``tool_search``, the descriptions of its parameters, the suffix of the system message, the
answer to a call of a tool it was not shown, and the answer to such a call whose name is close
to the name of a tool it was shown (a misspelling: the answer names those tools). In the proxy
channel (``channel="proxy"``, and the MCP gateway's two tools) ``tool_search`` answers with
whole definitions and found tools run through ``call_tool(name, arguments)``: the model reads
``tool_search``'s and the system suffix's proxy texts instead, and ``call_tool``'s description
and parameters. :class:`SearchTexts` holds them all in one language: :data:`ENGLISH` and
:data:`CHINESE`.

:class:`~toolrelay.client.ToolSearchAdvisor` takes ``language="auto"`` by default: the texts
follow the catalog's language (Chinese when more than a fifth of the characters of its
descriptions are CJK, see ``catalog_language``), decided again
whenever the catalog changes. ``"en"`` and ``"zh"`` fix the language, and a
:class:`SearchTexts` of your own gives texts in any other; ``search_description``,
``system_suffix`` and ``unavailable_message`` given explicitly win over the language's texts::

    ToolSearchAdvisor(catalog, language="zh")  # Chinese texts
    ToolSearchAdvisor(catalog, system_suffix=None)  # no suffix, in any language
    terse = dataclasses.replace(CHINESE, system_suffix="只能调用已展示的工具。")
    ToolSearchAdvisor(catalog, language=terse)  # your own texts
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, TypeVar, get_args

from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import closest_names
from toolrelay.tools._base import ToolDefinition
from toolrelay.tools._language import catalog_language
from toolrelay.toolsearch._access import (
    DEFAULT_SIMILAR_NAMES_MESSAGE,
    DEFAULT_UNAVAILABLE_MESSAGE,
    SIMILAR_NAME_CUTOFF,
    unavailable_text,
)
from toolrelay.toolsearch._search_tool import (
    CALL_TOOL_NAME,
    DEFAULT_PARAMETER_DESCRIPTIONS,
    DEFAULT_SEARCH_DESCRIPTION,
    DEFAULT_SYSTEM_SUFFIX,
    TOOL_SEARCH_NAME,
)

__all__ = [
    "CHINESE",
    "DEFAULT_CALL_DESCRIPTION",
    "DEFAULT_CALL_PARAMETERS",
    "DEFAULT_PROXY_DESCRIPTION",
    "DEFAULT_PROXY_SYSTEM_SUFFIX",
    "ENGLISH",
    "FROM_LANGUAGE",
    "SEARCH_TEXTS",
    "FromLanguage",
    "SearchLanguage",
    "SearchTextSelector",
    "SearchTexts",
    "search_texts",
]

_T = TypeVar("_T")

SearchLanguage = Literal["auto", "en", "zh"]
"""The ``language`` option: ``"auto"`` (the catalog's language), ``"en"`` or ``"zh"``."""


class FromLanguage(enum.Enum):
    """The type of :data:`FROM_LANGUAGE`."""

    DEFAULT = "the text of the advisor's language"


FROM_LANGUAGE: Final = FromLanguage.DEFAULT
"""The default of the advisor's text options: the text of its language.

A marker rather than ``None``, because ``system_suffix=None`` means no suffix at all.
"""


DEFAULT_PROXY_DESCRIPTION = (
    "Find hidden tools by what they do. Answers with their definitions, best first; run "
    f"them with {CALL_TOOL_NAME}."
)
"""What the model reads about ``tool_search`` when its answers carry whole definitions."""

DEFAULT_CALL_DESCRIPTION = f"Run a tool found with {TOOL_SEARCH_NAME}."
"""What the model reads about ``call_tool``."""

DEFAULT_CALL_PARAMETERS: Mapping[str, str] = MappingProxyType(
    {
        "name": "Its exact name.",
        "arguments": "Following its input_schema.",
    }
)
"""What the model reads about each parameter of ``call_tool``."""

DEFAULT_PROXY_SYSTEM_SUFFIX = (
    f"Most tools are hidden; find them with {TOOL_SEARCH_NAME}, run them with {CALL_TOOL_NAME}."
)
"""The system suffix of the proxy channel."""


@dataclass(frozen=True, kw_only=True)
class SearchTexts:
    """The texts tool search shows the model, in one language.

    Attributes:
        language: The language they are written in (``"en"``, ``"zh"``, or your own tag).
        description: What the model reads about ``tool_search``.
        parameters: What it reads about each parameter of ``tool_search`` (``query``,
            ``max_results``, ``category``), by name.
        system_suffix: Appended to the system message of every model call; ``None`` for none.
        unavailable_message: The answer to a call of a tool the model was not shown;
            ``{name}`` (the name as called, quoted) and ``{search_tool}`` are filled in.
        similar_names_message: The answer instead when the name is close to names of tools
            the model was shown (:func:`~toolrelay.execution.closest_names` at
            ``SIMILAR_NAME_CUTOFF``); ``{similar}``
            lists those, and ``{name}`` and ``{search_tool}`` are filled in as above.
            ``None``: such a call gets ``unavailable_message`` too.
        proxy_description: What the model reads about ``tool_search`` in the proxy channel,
            where its answers carry the found tools' definitions.
        proxy_system_suffix: The system suffix of the proxy channel; ``None`` for none.
        call_description: What the model reads about ``call_tool``.
        call_parameters: What it reads about each parameter of ``call_tool`` (``name``,
            ``arguments``), by name.
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
    similar_names_message: str | None = None

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


ENGLISH = SearchTexts(
    language="en",
    description=DEFAULT_SEARCH_DESCRIPTION,
    parameters=DEFAULT_PARAMETER_DESCRIPTIONS,
    system_suffix=DEFAULT_SYSTEM_SUFFIX,
    unavailable_message=DEFAULT_UNAVAILABLE_MESSAGE,
    similar_names_message=DEFAULT_SIMILAR_NAMES_MESSAGE,
    proxy_description=DEFAULT_PROXY_DESCRIPTION,
    proxy_system_suffix=DEFAULT_PROXY_SYSTEM_SUFFIX,
    call_description=DEFAULT_CALL_DESCRIPTION,
    call_parameters=DEFAULT_CALL_PARAMETERS,
)
"""The English texts (the ``DEFAULT_*`` constants)."""

CHINESE = SearchTexts(
    language="zh",
    description="按功能查找隐藏的工具；从你的下一步起按返回的准确名称调用它们。",
    parameters=MappingProxyType(
        {
            "query": "动作和对象，例如“取消订单”。",
            "max_results": "返回的工具数量（1-10）。",
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
    ),
    proxy_system_suffix=(
        f"大多数工具是隐藏的，请用 {TOOL_SEARCH_NAME} 查找，用 {CALL_TOOL_NAME} 运行。"
    ),
    call_description=f"运行用 {TOOL_SEARCH_NAME} 找到的工具。",
    call_parameters=MappingProxyType(
        {
            "name": "工具的准确名称。",
            "arguments": "须符合其 input_schema。",
        }
    ),
)
"""The Chinese texts."""

SEARCH_TEXTS: Mapping[str, SearchTexts] = MappingProxyType({"en": ENGLISH, "zh": CHINESE})
"""The texts of each language ``language`` can name."""


def search_texts(language: str) -> SearchTexts:
    """The texts of ``language`` (``"en"`` or ``"zh"``).

    Raises:
        ConfigurationError: Texts in that language do not exist.
    """
    texts = SEARCH_TEXTS.get(language)
    if texts is None:
        known = ", ".join(repr(code) for code in SEARCH_TEXTS)
        raise ConfigurationError(f"no tool search texts in {language!r}; use one of {known}")
    return texts


class SearchTextSelector:
    """The texts of one advisor: its language option, with the texts it was given explicitly.

    Args:
        language: ``"auto"``, ``"en"``, ``"zh"`` or texts of your own (see the module docs).
        search_description, system_suffix, unavailable_message: Explicit texts, which win
            over the language's; :data:`FROM_LANGUAGE` for the language's.

    Raises:
        ConfigurationError: ``language`` is none of those, or your texts describe a parameter
            ``tool_search`` does not have.
    """

    def __init__(
        self,
        language: SearchLanguage | SearchTexts = "auto",
        search_description: str | FromLanguage = FROM_LANGUAGE,
        system_suffix: str | FromLanguage | None = FROM_LANGUAGE,
        unavailable_message: str | FromLanguage = FROM_LANGUAGE,
    ) -> None:
        if not isinstance(language, SearchTexts) and language not in get_args(SearchLanguage):
            raise ConfigurationError(
                f"unknown tool search language {language!r}; use 'auto', 'en', 'zh' or "
                "SearchTexts of your own"
            )
        self.language = language
        self.search_description = search_description
        self.system_suffix = system_suffix
        self.unavailable_message = unavailable_message
        self._fixed: SearchTexts | None = None
        if isinstance(language, SearchTexts):
            unknown = sorted(set(language.parameters) - set(DEFAULT_PARAMETER_DESCRIPTIONS))
            if unknown:
                raise ConfigurationError(f"{TOOL_SEARCH_NAME} has no parameters {unknown}")
            unknown = sorted(set(language.call_parameters) - set(DEFAULT_CALL_PARAMETERS))
            if unknown:
                raise ConfigurationError(f"{CALL_TOOL_NAME} has no parameters {unknown}")
            self._fixed = self._with_overrides(language)
        elif language != "auto":
            self._fixed = self._with_overrides(search_texts(language))
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
        texts = self._with_overrides(SEARCH_TEXTS[catalog_language(definitions)])
        self._seen = (definitions, texts)
        return texts

    def _with_overrides(self, texts: SearchTexts) -> SearchTexts:
        # An explicit description or suffix is the advisor's, whichever channel it runs.
        return dataclasses.replace(
            texts,
            description=_chosen(self.search_description, texts.description),
            system_suffix=_chosen(self.system_suffix, texts.system_suffix),
            unavailable_message=_chosen(self.unavailable_message, texts.unavailable_message),
            proxy_description=_chosen(self.search_description, texts.proxy_description),
            proxy_system_suffix=_chosen(self.system_suffix, texts.proxy_system_suffix),
        )

    def __repr__(self) -> str:
        language = self.language
        shown = language.language if isinstance(language, SearchTexts) else language
        return f"SearchTextSelector(language={shown!r})"


def _chosen(given: _T | FromLanguage, default: _T) -> _T:
    return default if isinstance(given, FromLanguage) else given

"""Prerequisite tools: who provides the identifier another tool requires.

Many requests need two calls: find the thing, then act on it. "Who directed Twilight?" needs
``search_movie`` to turn the title into a ``movie_id`` before ``get_movie_credits`` can run,
yet the request never says "search". The catalog's schemas tell: a tool that *requires* an
identifier parameter (``movie_id``) depends on a tool that *finds* that kind of thing (a name
with "search", "find" or "lookup" and "movie", needing no movie id itself).

:func:`prerequisite_links` derives these links once per catalog. An index can then lift a
provider just below its best-scoring consumer (:func:`lift_providers`), so a search returns
the pair a model needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from toolrelay.search._text import Tokenizer, split_words
from toolrelay.tools._base import ToolDefinition

__all__ = ["Links", "lift_providers", "prerequisite_links"]

Links = tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]
"""Parallel arrays of (consumer position, provider position)."""

_FINDER_WORDS = frozenset({"search", "find", "lookup"})
_ID_WORDS = frozenset({"id", "ids"})
_STEM = Tokenizer(stop_words=frozenset(), min_length=1)


def _required_entities(schema: Mapping[str, Any]) -> set[str]:
    """Stems of the things whose identifiers a schema requires (``movie_id`` -> ``movi``)."""
    required = schema.get("required")
    if not isinstance(required, list):
        return set()
    entities = set()
    for param in required:
        words = split_words(str(param))
        if len(words) >= 2 and words[-1] in _ID_WORDS:
            entities.update(_STEM.terms_of_words(words[:-1]))
    return entities


def prerequisite_links(definitions: Sequence[ToolDefinition]) -> Links:
    """For every tool requiring ``<thing>_id``, the tools that find a ``<thing>``.

    A provider's name has a finder word ("search", "find", "lookup") and the thing's word,
    and it does not itself require that identifier. Its name must also share its first word
    with the consumer's when both have one besides (tools of one API usually share a
    prefix), so that a pooled catalog does not link unrelated services.
    """
    name_stems = [_STEM.terms_of_words(split_words(d.name)) for d in definitions]
    needs = [_required_entities(d.input_schema) for d in definitions]
    finders: dict[str, list[int]] = {}
    for position, stems in enumerate(name_stems):
        if _FINDER_WORDS.intersection(stems):
            for stem in set(stems) - _FINDER_WORDS:
                finders.setdefault(stem, []).append(position)
    consumers: list[int] = []
    providers: list[int] = []
    for consumer, entities in enumerate(needs):
        for entity in entities:
            for provider in finders.get(entity, ()):
                if provider == consumer or entity in needs[provider]:
                    continue
                if name_stems[provider][0] != name_stems[consumer][0]:
                    continue
                consumers.append(consumer)
                providers.append(provider)
    return np.asarray(consumers, dtype=np.intp), np.asarray(providers, dtype=np.intp)


def lift_providers(
    scores: npt.NDArray[np.float32],
    links: Links,
    factor: float,
    *,
    among: npt.NDArray[np.bool_] | None = None,
) -> None:
    """Raise each provider's score to ``factor`` × its best consumer's, in place.

    With ``among`` (a mask of tools), only links whose consumer and provider are both in it
    count: a tool outside it neither lifts nor is lifted.
    """
    consumers, providers = links
    if among is not None and consumers.size:
        inside = among[consumers] & among[providers]
        consumers, providers = consumers[inside], providers[inside]
    if consumers.size:
        np.maximum.at(scores, providers, (factor * scores[consumers]).astype(scores.dtype))

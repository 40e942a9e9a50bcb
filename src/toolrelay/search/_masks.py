"""Which tools of a catalog a search ranks: its permitted subset and categories, as masks.

A search is answered from the tools its caller may see (``SearchRequest.allowed``) alone:
every index turns the permitted subset into a boolean mask over the catalog *before* it
scores, and computes every statistic it ranks by (term frequencies, score normalisation,
pattern matches) from the tools inside the mask. A tool outside it is never read, so its
presence changes no answer, not even the order or the scores of the permitted tools.

:class:`CatalogMasks` holds the masks of one catalog: a ``frozenset`` of names becomes a
mask once and is cached; a predicate is asked about every tool of the catalog on each search
(so for large catalogs, prefer sets); categories (dotted-name prefixes and explicit ones) are
kept as lists of positions and made masks when a search first asks for them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from toolrelay.search._base import AllowedTools
from toolrelay.search._documents import dotted_categories

__all__ = ["CatalogMasks", "Mask"]

Mask = npt.NDArray[np.bool_]
"""One flag per tool of a catalog, in catalog order."""

# Masks kept per distinct permitted set and per category; conversations share a few of each.
_CACHE_SIZE = 256


class CatalogMasks:
    """The permitted subsets and categories of one catalog, as masks in catalog order.

    Args:
        names: The catalog's tool names, in catalog order.
        explicit: Extra categories per tool name (besides the prefixes of dotted names).
    """

    def __init__(self, names: Sequence[str], explicit: Mapping[str, Sequence[str]]) -> None:
        self.names = tuple(names)
        self.positions: Mapping[str, int] = {name: i for i, name in enumerate(self.names)}
        self._members = _category_members(self.names, explicit)
        self._sets: dict[frozenset[str], Mask | None] = {}
        self._categories: dict[str, Mask] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.names)

    def permitted(self, allowed: AllowedTools) -> Mask | None:
        """The mask of the tools ``allowed`` permits; ``None`` when it permits every tool."""
        if allowed is None:
            return None
        if callable(allowed):
            mask = np.fromiter(
                (bool(allowed(name)) for name in self.names), dtype=np.bool_, count=len(self.names)
            )
            return None if mask.all() else mask
        with self._lock:
            if allowed in self._sets:
                return self._sets[allowed]
        found = self._mask([self.positions[n] for n in allowed if n in self.positions])
        with self._lock:
            if len(self._sets) >= _CACHE_SIZE:
                self._sets.clear()
            self._sets[allowed] = None if found.all() else found
            return self._sets[allowed]

    def category(self, category: str) -> Mask | None:
        """The tools in ``category``; ``None`` when no tool is in it."""
        members = self._members.get(category)
        if members is None:
            return None
        with self._lock:
            mask = self._categories.get(category)
        if mask is None:
            # Built when first asked for: a catalog can have tens of thousands of categories.
            mask = self._mask(members)
            with self._lock:
                if len(self._categories) >= _CACHE_SIZE:
                    self._categories.clear()
                self._categories[category] = mask
        return mask

    def _mask(self, positions: Sequence[int] | npt.NDArray[np.int32]) -> Mask:
        mask = np.zeros(len(self.names), dtype=np.bool_)
        mask[positions] = True
        mask.flags.writeable = False  # shared by every search that asks for it
        return mask


def _category_members(
    names: Sequence[str], explicit: Mapping[str, Sequence[str]]
) -> dict[str, npt.NDArray[np.int32]]:
    members: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        for category in {*dotted_categories(name), *explicit.get(name, ())}:
            members.setdefault(category, []).append(i)
    return {category: np.asarray(found, dtype=np.int32) for category, found in members.items()}

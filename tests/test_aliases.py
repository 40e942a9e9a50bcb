"""Old import paths and moved names keep working for one release, each with a warning."""

from __future__ import annotations

import importlib
import sys

import pytest

import toolrelay.client
import toolrelay.toolsearch
from toolrelay.toolsearch import ENGLISH, InMemorySessionStore
from toolrelay.toolsearch._sessions import DEFAULT_MAX_SESSIONS


def test_an_old_module_path_is_the_new_module_with_a_warning() -> None:
    sys.modules.pop("toolrelay.search.bm25", None)
    with pytest.warns(DeprecationWarning, match=r"toolrelay\.search\.bm25 is deprecated"):
        old = importlib.import_module("toolrelay.search.bm25")
    assert old is importlib.import_module("toolrelay.search._bm25")


def test_a_moved_name_is_the_same_object_with_a_warning_naming_its_home() -> None:
    with pytest.warns(DeprecationWarning, match="import it from toolrelay.toolsearch"):
        moved = toolrelay.client.InMemorySessionStore  # type: ignore[attr-defined]
    assert moved is InMemorySessionStore


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DEFAULT_SEARCH_DESCRIPTION", ENGLISH.description),
        ("DEFAULT_SYSTEM_SUFFIX", ENGLISH.system_suffix),
        ("DEFAULT_UNAVAILABLE_MESSAGE", ENGLISH.unavailable_message),
        ("DEFAULT_SIMILAR_NAMES_MESSAGE", ENGLISH.similar_names_message),
        ("DEFAULT_MAX_SESSIONS", DEFAULT_MAX_SESSIONS),
    ],
)
def test_retired_tool_search_constants_still_read_with_a_warning(name: str, value: object) -> None:
    for package in (toolrelay.toolsearch, toolrelay.client):
        with pytest.warns(DeprecationWarning, match=f"{name} is deprecated"):
            assert getattr(package, name) == value
        assert name not in package.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = toolrelay.toolsearch.no_such_name  # type: ignore[attr-defined]

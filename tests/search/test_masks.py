from __future__ import annotations

import numpy as np
import pytest

from toolrelay.search._masks import CatalogMasks

NAMES = ("refund.find", "refund.issue", "orders.get", "send_email")


@pytest.fixture
def masks() -> CatalogMasks:
    return CatalogMasks(NAMES, {"send_email": ["messaging"], "orders.get": ("messaging",)})


def test_a_set_of_names_becomes_a_mask_in_catalog_order(masks: CatalogMasks) -> None:
    mask = masks.permitted(frozenset({"send_email", "refund.find", "not-in-catalog"}))
    assert mask is not None
    assert mask.tolist() == [True, False, False, True]
    assert masks.permitted(frozenset()) is not None
    assert not np.any(masks.permitted(frozenset()))


def test_a_set_is_turned_into_a_mask_once_and_shared_read_only(masks: CatalogMasks) -> None:
    first = masks.permitted(frozenset({"orders.get"}))
    again = masks.permitted(frozenset({"orders.get"}))
    assert first is again
    assert first is not None
    with pytest.raises(ValueError, match="read-only"):
        first[0] = True


def test_a_predicate_is_asked_about_every_tool(masks: CatalogMasks) -> None:
    asked: list[str] = []

    def allowed(name: str) -> bool:
        asked.append(name)
        return name.startswith("refund.")

    mask = masks.permitted(allowed)
    assert mask is not None
    assert mask.tolist() == [True, True, False, False]
    assert asked == list(NAMES)


def test_everything_permitted_is_no_mask_at_all(masks: CatalogMasks) -> None:
    assert masks.permitted(None) is None
    assert masks.permitted(frozenset(NAMES)) is None
    assert masks.permitted(frozenset({*NAMES, "extra"})) is None
    assert masks.permitted(lambda name: True) is None


def test_categories_from_dotted_names_and_explicit_ones(masks: CatalogMasks) -> None:
    refund = masks.category("refund")
    messaging = masks.category("messaging")
    assert refund is not None
    assert messaging is not None
    assert refund.tolist() == [True, True, False, False]
    assert messaging.tolist() == [False, False, True, True]
    assert masks.category("nothing") is None
    assert len(masks) == 4

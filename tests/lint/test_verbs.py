from __future__ import annotations

import pytest

from toolrelay.lint._verbs import (
    chinese_mutating_verb,
    description_mutating_verb,
    inflections,
    name_mutating_verb,
    opening_words,
)
from toolrelay.tools._names import split_name_words


def test_inflections_cover_the_usual_forms() -> None:
    assert {"create", "creates", "created", "creating"} <= inflections("create")
    assert {"modifies", "modified"} <= inflections("modify")
    assert {"submitted", "submitting"} <= inflections("submit")


@pytest.mark.parametrize(
    ("name", "description", "verb"),
    [
        ("delete_user", "", "delete"),
        ("user_delete", "", "delete"),
        ("refund_order", "Refunds an order.", "refund"),
        ("refund_status", "Returns the status of a refund.", None),
        ("order_list", "", None),
        ("get_refund", "", None),
        ("is_registered", "", None),
        ("temp_upload_urls_for_service", "", None),
    ],
)
def test_name_verbs(name: str, description: str, verb: str | None) -> None:
    assert name_mutating_verb(split_name_words(name), description) == verb


@pytest.mark.parametrize(
    ("description", "verb"),
    [
        ("Deletes the file at a path.", "delete"),
        ("Use this tool to send an e-mail to a customer.", "send"),
        ("Permanently removes a user.", "remove"),
        ("Updates the status of a ticket.", "update"),
        ("Update history of a ticket, newest first.", None),
        ("Orders of a customer, newest first.", None),
        ("Book Cover API: Get the cover image of a book.", None),
        ("Returns the balance.", None),
        ("修改用户的手机号码", "修改"),
        ("查询退款状态，不会发起退款", None),
    ],
)
def test_description_verbs(description: str, verb: str | None) -> None:
    assert description_mutating_verb(description) == verb


def test_chinese_lead_ins_are_skipped() -> None:
    assert chinese_mutating_verb("该工具用于删除过期的订单") == "删除"
    assert chinese_mutating_verb("获取并更新缓存") is None


def test_opening_words_skip_lead_ins_and_headings() -> None:
    assert opening_words("This tool allows you to create a page.") == ["create", "a"]
    assert opening_words("Weather API (Data): Returns the weather.") == ["returns", "the"]
    assert opening_words("Deletes the file: no undo.") == ["deletes", "the"]

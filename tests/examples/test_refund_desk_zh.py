"""The refund desk in Chinese: the same tools with Chinese texts, and the seeds' task."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolrelay.tools import FunctionTool, ToolCatalog, ToolContext, ToolDefinition
from toolrelay.tools._language import catalog_language, cjk_share

# examples/ is a directory of scripts, not an installed package: import it from the repo root.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.refund_desk import (
    LANGUAGES,
    REQUIRED_TOOLS,
    TASK,
    TASKS,
    RefundDeskBackend,
    RefundDeskError,
    build_catalog,
)
from examples.refund_desk.zh import TASK_ZH, chinese_texts, in_chinese

CTX = ToolContext(tenant_id="acme", user_id="U-ZHANG")


@pytest.fixture(scope="module")
def english() -> ToolCatalog:
    return build_catalog()


@pytest.fixture(scope="module")
def chinese() -> ToolCatalog:
    return build_catalog(lang="zh")


def without_descriptions(node: Any) -> Any:
    """A schema with every ``description`` removed, at any depth."""
    if isinstance(node, dict):
        return {k: without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    return node


def parameter_texts(definition: ToolDefinition) -> dict[str, str]:
    properties = definition.input_schema.get("properties", {})
    return {name: spec.get("description", "") for name, spec in properties.items()}


def test_the_same_tools_names_schemas_and_metadata(
    english: ToolCatalog, chinese: ToolCatalog
) -> None:
    assert chinese.names() == english.names()
    assert len(chinese) == 78
    for name in english.names():
        en, zh = english.get(name), chinese.get(name)
        assert en is not None
        assert zh is not None
        assert without_descriptions(zh.definition.input_schema) == without_descriptions(
            en.definition.input_schema
        )
        assert zh.metadata == en.metadata


def test_every_description_and_parameter_is_in_chinese(
    english: ToolCatalog, chinese: ToolCatalog
) -> None:
    all_texts: list[str] = []
    for definition in chinese.definitions():
        original = english.get(definition.name)
        assert original is not None
        assert definition.description != original.definition.description
        assert cjk_share(definition.description) > 0.5, definition.name
        # The first line is one sentence: the summary a search answer shows.
        assert definition.description.splitlines()[0].endswith("。"), definition.name
        texts, english_texts = parameter_texts(definition), parameter_texts(original.definition)
        assert set(texts) == set(english_texts)
        for parameter, text in texts.items():
            # Some list English codes ('"refunds"、"payments" ...'): Chinese, if not mostly.
            assert cjk_share(text) > 0, f"{definition.name}.{parameter}: {text}"
            assert text != english_texts[parameter]
        all_texts.extend(texts.values())
    assert cjk_share(" ".join(all_texts)) > 0.5
    assert set(chinese_texts()) == set(english.names())  # no texts for tools that do not exist


def test_the_seed_style_says_what_when_what_not_and_side_effects(chinese: ToolCatalog) -> None:
    finder = chinese.get("refund.find_failed_orders")
    retry = chinese.get("refund.retry_failed_order")
    assert finder is not None
    assert retry is not None
    assert finder.definition.description.startswith("只读查询")
    assert "不会重新发起退款" in finder.definition.description
    assert "适用于" in finder.definition.description
    assert "有副作用" in retry.definition.description
    assert "仅在用户明确要求重试退款时使用" in retry.definition.description


def test_auto_language_detection_tells_the_catalogs_apart(
    english: ToolCatalog, chinese: ToolCatalog
) -> None:
    assert catalog_language(chinese.definitions()) == "zh"
    assert catalog_language(english.definitions()) == "en"


async def test_the_chinese_tools_run_the_same_code() -> None:
    backend = RefundDeskBackend.seeded()
    catalog = build_catalog(backend, lang="zh")
    finder = catalog.get("refund__find_failed_orders")  # the provider-safe name works too
    retry = catalog.get("refund.retry_failed_order")
    assert finder is not None
    assert retry is not None
    failed = json.loads(await finder.call("{}", CTX))
    assert {f["refund_id"] for f in failed} == {
        "RF-2001",
        "RF-2002",
        "RF-2004",
        "RF-2005",
        "RF-2006",
    }
    outcome = json.loads(await retry.call('{"refund_id": "RF-2001"}', CTX))
    assert outcome["succeeded"] is True
    assert backend.refund("RF-2001").status == "succeeded"  # the wrapped tool changed the desk


def test_the_task_in_both_languages() -> None:
    assert TASKS == {"en": TASK, "zh": TASK_ZH}
    assert LANGUAGES == ("en", "zh")
    assert TASK_ZH == (
        "找出昨天退款失败的订单，重试可以恢复的记录，再把仍然失败的订单创建为工单并通知负责人。"
    )
    assert len(REQUIRED_TOOLS) == 4


def test_unknown_languages_and_untranslated_tools_are_errors(english: ToolCatalog) -> None:
    with pytest.raises(RefundDeskError, match=r"no refund desk in 'fr'; choose one of en, zh"):
        build_catalog(lang="fr")

    def stray() -> str:
        return "x"

    with pytest.raises(RefundDeskError, match=r"refund\.stray has no Chinese texts"):
        in_chinese([FunctionTool.from_function(stray, name="refund.stray")])

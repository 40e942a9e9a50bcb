from __future__ import annotations

import pytest

from toolrelay.exceptions import ToolsNotSupportedError
from toolrelay.messages import UserMessage
from toolrelay.models import ChatModel
from toolrelay.models._base import ensure_tools_supported, model_name
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.testing import FunctionModel, ScriptedModel
from toolrelay.tools import FunctionTool, tool


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return key


def prompt(options: ChatOptions) -> Prompt:
    return Prompt(messages=(UserMessage(text="hi"),), options=options)


def test_the_test_models_satisfy_the_protocol() -> None:
    assert isinstance(ScriptedModel([]), ChatModel)
    assert isinstance(FunctionModel(lambda p: "x"), ChatModel)


def test_a_model_without_tool_support_refuses_tools_and_tool_names() -> None:
    model = ScriptedModel([], supports_tools=False, name="tiny")
    with pytest.raises(ToolsNotSupportedError, match=r"'tiny' cannot call tools.*lookup"):
        ensure_tools_supported(
            model, prompt(ChatOptions(tools=(FunctionTool.from_function(lookup),)))
        )
    with pytest.raises(ToolsNotSupportedError, match=r"remote\.search"):
        ensure_tools_supported(model, prompt(ChatOptions(tool_names=("remote.search",))))
    ensure_tools_supported(model, prompt(ChatOptions()))  # no tools: fine


def test_models_that_support_tools_or_do_not_say_are_accepted() -> None:
    options = ChatOptions(tool_names=("x",))
    ensure_tools_supported(ScriptedModel([]), prompt(options))
    ensure_tools_supported(object(), prompt(options))


def test_model_name() -> None:
    assert model_name(ScriptedModel([], name="m")) == "'m'"
    assert model_name(object()) == "object"

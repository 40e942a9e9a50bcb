"""Test doubles for code built on toolrelay: scripted models, response helpers, recorders.

Library code never imports this package (an import-linter contract).

Example::

    model = ScriptedModel([
        tool_call_response(("get_weather", {"city": "Paris"}), usage=(20, 5)),
        text_response("Sunny, 21 °C.", usage=(40, 8)),
    ])
    client = ChatClient.builder(model).default_tools(get_weather).build()
    assert client.prompt("Weather in Paris?").call().content() == "Sunny, 21 °C."
    assert model.tool_names_shown(0) == ["get_weather"]
"""

from toolrelay.testing._advisors import RecordingAdvisor
from toolrelay.testing._embedders import HashingEmbedder
from toolrelay.testing._idempotency import isolated_idempotency
from toolrelay.testing._messages import every_message_kind
from toolrelay.testing._models import FunctionModel, ScriptedModel
from toolrelay.testing._responses import text_response, tool_call_response

__all__ = [
    "FunctionModel",
    "HashingEmbedder",
    "RecordingAdvisor",
    "ScriptedModel",
    "every_message_kind",
    "isolated_idempotency",
    "text_response",
    "tool_call_response",
]

"""Every wrapper of a chat model declares what the model declares.

Tool search asks the client's model for its channels and its prompt cache rule; the CLI's
metered model, the task evaluation's meter and the traced model stand between them, and a
declaration lost there would leave the default channel or the cache fill silently inert.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.messages import UserMessage
from toolrelay.models._base import cache_shortfall, tool_channels
from toolrelay.prompt import Prompt
from toolrelay.testing import ScriptedModel

PROMPT = Prompt(messages=(UserMessage(text="hello"),))


def metered(model: Any) -> Any:
    from toolrelay.cli._pipeline import MeteredModel, TurnRecorder

    return MeteredModel(model, TurnRecorder([]))


def meter(model: Any) -> Any:
    from toolrelay.evaluation._runner import _Meter

    return _Meter(model)


def traced(model: Any) -> Any:
    pytest.importorskip("opentelemetry.sdk", reason=needs_extra("otel"))
    from opentelemetry.sdk.trace import TracerProvider

    from toolrelay.otel import Telemetry, TracedChatModel

    return TracedChatModel(model, Telemetry(tracer_provider=TracerProvider()))


@pytest.mark.parametrize("wrap", [metered, meter, traced], ids=["cli", "evaluation", "otel"])
def test_a_wrapper_declares_the_models_channels_and_cache_rule(
    wrap: Callable[[Any], Any],
) -> None:
    model = ScriptedModel(
        [], tool_channels=("native", "proxy", "rewrite"), cache_shortfall=lambda p: 321
    )
    wrapped = wrap(model)
    assert tool_channels(wrapped) == ("native", "proxy", "rewrite")
    assert cache_shortfall(wrapped, PROMPT) == 321

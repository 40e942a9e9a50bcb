"""Importing toolrelay.models loads no provider SDK; the adapters load on first access."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolrelay.models
from tests.extras import needs_extra

SDKS = ("openai", "anthropic", "llama_cpp", "numpy")


def test_importing_the_package_imports_no_provider_sdk() -> None:
    code = (
        "import sys, toolrelay.models, toolrelay.models._openai_wire, "
        "toolrelay.models._responses_wire, toolrelay.models._anthropic_wire;"
        f"print([m for m in {SDKS!r} if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_adapters_are_exported_lazily() -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    from toolrelay.models import OpenAIChatModel, OpenAIResponsesModel
    from toolrelay.models._openai import OpenAIChatModel as direct
    from toolrelay.models._openai_responses import OpenAIResponsesModel as direct_responses

    assert OpenAIChatModel is direct
    assert OpenAIResponsesModel is direct_responses
    assert {"OpenAIChatModel", "OpenAIResponsesModel"} <= set(toolrelay.models.__all__)


def test_unknown_attributes_still_raise() -> None:
    with pytest.raises(AttributeError):
        toolrelay.models.NoSuchModel  # noqa: B018

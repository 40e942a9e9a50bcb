"""The Responses request bodies are the committed golden file, and fit the SDK's request types.

``tests/models/golden/openai_responses.json`` holds the body
:meth:`OpenAIResponsesModel.request_body` builds for each case of
``tests/models/_responses_bodies.py`` (a plain call, a tool round with results, each tool
choice, options, strict tools, a stream), and the six bodies of tool search's two turns on the
native channel (``tests/models/_responses_channels.py``). A change to what the adapter sends
shows as a diff of that file. After a deliberate change, write it again and review the diff::

    python -m tests.models.test_openai_responses_golden --write

Each body of the file is walked against the installed SDK's
``openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming`` (or
``...Streaming``) by ``tests/models/_sdk_types.py``, down to each input item, tool and tool
choice: no key the SDK does not declare, every required key, every value of its type.
pydantic's ``TypeAdapter`` would pass unknown keys (the module says why). ``extra_body`` (the
request's ``ChatOptions.extras``) is what the user asked to send as is, so it is left out.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

from . import _responses_bodies
from ._sdk_types import type_errors

pytest.importorskip("openai", reason=needs_extra("openai"))
from openai.types.responses import response_create_params

GOLDEN = Path(__file__).resolve().parent / "golden" / "openai_responses.json"
REGENERATE = "python -m tests.models.test_openai_responses_golden --write"


def render(bodies: dict[str, dict[str, Any]]) -> str:
    return json.dumps(bodies, indent=2, ensure_ascii=False) + "\n"


def golden() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


def sdk_errors(body: dict[str, Any]) -> list[str]:
    params = (
        response_create_params.ResponseCreateParamsStreaming
        if body.get("stream")
        else response_create_params.ResponseCreateParamsNonStreaming
    )
    return type_errors({k: v for k, v in body.items() if k != "extra_body"}, params)


def test_request_bodies_match_the_golden_file() -> None:
    assert GOLDEN.exists(), f"no golden file; write it with: {REGENERATE}"
    current = render(_responses_bodies.bodies())
    assert current == GOLDEN.read_text(encoding="utf-8"), (
        f"the adapter's request bodies changed; if that is intended: {REGENERATE}"
    )


NATIVE = [f"native channel, request {n}" for n in range(1, 7)]


@pytest.mark.parametrize("case", [*_responses_bodies.CASES, *NATIVE])
def test_golden_bodies_fit_the_sdk_request_types(case: str) -> None:
    assert sdk_errors(golden()[case]) == []


def test_the_native_channel_adds_tools_in_the_input_and_never_changes_the_tool_list() -> None:
    bodies = [golden()[case] for case in NATIVE]
    assert all(body["tools"] == bodies[0]["tools"] for body in bodies)
    assert [t["name"] for t in bodies[0]["tools"]] == ["tool_search"]
    added = [
        [
            [t["name"] for t in item["tools"]]
            for item in body["input"]
            if item.get("type") == "additional_tools"
        ]
        for body in bodies
    ]
    assert added == [
        [],
        [["refund__retry", "refund__status"]],
        [["refund__retry", "refund__status"]],
        # Memory replays turn one without its tool changes: the tool the model used comes
        # back (the other hit was retired, and the API has no item that removes a tool).
        [["refund__status"]],
        [["refund__status"], ["refund__retry"]],
        [["refund__status"], ["refund__retry"]],
    ]
    # Each request extends the one before it within a turn: the cached prefix holds.
    for before, after in ((0, 1), (1, 2), (3, 4), (4, 5)):
        previous = bodies[before]["input"]
        assert bodies[after]["input"][: len(previous)] == previous


def test_the_golden_file_holds_what_each_case_is_about() -> None:
    bodies = golden()
    assert set(bodies) == {*_responses_bodies.CASES, *NATIVE}
    assert "tools" not in bodies["plain"]
    assert bodies["plain"]["store"] is False
    items = bodies["tool round with results"]["input"]
    assert [i.get("type") or i["role"] for i in items] == [
        "system",
        "user",
        "assistant",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert [i["call_id"] for i in items[3:]] == ["call_w", "call_t", "call_w", "call_t"]
    assert bodies["tool choice required"]["tool_choice"] == "required"
    named = bodies["tool choice named, one call at a time"]
    assert named["tool_choice"] == {"type": "function", "name": "weather__current"}
    assert named["parallel_tool_calls"] is False
    assert bodies["tool choice none"]["tool_choice"] == "none"
    assert bodies["options and extras"]["max_output_tokens"] == 300
    assert bodies["strict tools"]["tools"][0]["strict"] is True
    assert bodies["stream"]["stream"] is True


def test_the_checker_catches_the_chat_completions_shapes() -> None:
    # The walk is strict enough to matter: the nested tool and tool-choice shapes of Chat
    # Completions, a tool message, a misspelt field all fail against the Responses types.
    body = copy.deepcopy(golden()["tool choice named, one call at a time"])
    tool = body["tools"][0]
    body["tools"][0] = {"type": "function", "function": {k: tool[k] for k in ("name", "strict")}}
    body["tool_choice"] = {"type": "function", "function": {"name": "weather__current"}}
    body["input"].append({"role": "tool", "tool_call_id": "call_w", "content": "21"})
    body["max_tokens"] = 300
    errors = sdk_errors(body)
    assert "body: unknown key 'max_tokens' for ResponseCreateParamsNonStreaming" in errors
    assert "body.tools[0]: unknown key 'function' for FunctionToolParam" in errors
    assert "body.tool_choice: unknown key 'function' for ToolChoiceFunctionParam" in errors
    assert any(e.startswith("body.input[2]: ") for e in errors)


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(f"usage: {REGENERATE}", file=sys.stderr)
        return 2
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(render(_responses_bodies.bodies()), encoding="utf-8")
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The Anthropic request bodies of tool search on each channel are committed golden files.

``tests/models/golden/anthropic_channel_<channel>.json`` holds the six bodies of the two
turns of ``tests/models/_anthropic_channels.py`` (search, call, answer; then, after memory
replays the first turn, the same again) on the rewrite, proxy and native channels. Each body
fits the installed SDK's request types: the native channel's, whose system messages of
``tool_addition`` / ``tool_removal`` blocks only the beta endpoint takes, the beta
``MessageCreateParams``; the others the plain ones. After a deliberate change, write the
files again and review the diff::

    python -m tests.models.test_anthropic_channels_golden --write
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

from . import _anthropic_channels
from ._sdk_types import type_errors

pytest.importorskip("anthropic", reason=needs_extra("anthropic"))

GOLDEN = Path(__file__).resolve().parent / "golden"
REGENERATE = "python -m tests.models.test_anthropic_channels_golden --write"


def path(channel: str) -> Path:
    return GOLDEN / f"anthropic_channel_{channel}.json"


def render(bodies: list[dict[str, Any]]) -> str:
    return json.dumps(bodies, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("channel", _anthropic_channels.CHANNELS)
async def test_the_bodies_of_each_channel_match_the_golden_file(channel: str) -> None:
    assert path(channel).exists(), f"no golden file; write it with: {REGENERATE}"
    current = render(await _anthropic_channels.run(channel))
    assert current == path(channel).read_text(encoding="utf-8"), (
        f"the {channel} channel's request bodies changed; if that is intended: {REGENERATE}"
    )


@pytest.mark.parametrize("channel", _anthropic_channels.CHANNELS)
def test_every_golden_body_fits_the_sdk_request_types(channel: str) -> None:
    from anthropic.types import message_create_params
    from anthropic.types.beta import message_create_params as beta_params

    bodies = json.loads(path(channel).read_text(encoding="utf-8"))
    for number, body in enumerate(bodies, 1):
        params = (
            beta_params.MessageCreateParamsNonStreaming
            if "betas" in body
            else message_create_params.MessageCreateParamsNonStreaming
        )
        assert type_errors(body, params) == [], f"body {number}"


def test_the_channels_differ_where_they_should() -> None:
    tools = {c: [b["tools"] for b in _load(c)] for c in _anthropic_channels.CHANNELS}
    # The native and proxy channels send one tool list on every request; rewrite grows it.
    assert all(t == tools["native"][0] for t in tools["native"])
    assert all(t == tools["proxy"][0] for t in tools["proxy"])
    assert len({json.dumps(t) for t in tools["rewrite"]}) > 1
    native = _load("native")
    blocks = [
        block["type"]
        for body in native
        for message in body["messages"]
        if message["role"] == "system"
        for block in message["content"]
    ]
    assert "tool_addition" in blocks
    assert "tool_removal" in blocks
    assert all(body["betas"] == ["inline-tools-2026-09-15"] for body in native if "betas" in body)
    # No other channel sends a system message or a beta.
    for channel in ("rewrite", "proxy"):
        for body in _load(channel):
            assert "betas" not in body
            assert all(m["role"] != "system" for m in body["messages"])


def _load(channel: str) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = json.loads(path(channel).read_text(encoding="utf-8"))
    return bodies


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(f"usage: {REGENERATE}", file=sys.stderr)
        return 2
    GOLDEN.mkdir(exist_ok=True)
    for channel in _anthropic_channels.CHANNELS:
        bodies = asyncio.run(_anthropic_channels.run(channel))
        path(channel).write_text(render(bodies), encoding="utf-8")
        print(f"wrote {path(channel)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The Anthropic request bodies of a fixed tool loop are the committed golden file.

``tests/models/golden/anthropic_tool_loop.json`` holds the body of each of the three calls of
the loop in ``tests/models/_anthropic_loop.py`` (search, call, answer), as
``AnthropicChatModel.request_body`` builds them. A change to what the adapter sends shows as a
diff of that file. After a deliberate change, write it again and review the diff::

    python -m tests.models.test_anthropic_golden --write
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

from . import _anthropic_loop

pytest.importorskip("anthropic", reason=needs_extra("anthropic"))

GOLDEN = Path(__file__).resolve().parent / "golden" / "anthropic_tool_loop.json"
REGENERATE = "python -m tests.models.test_anthropic_golden --write"


def render(bodies: list[dict[str, Any]]) -> str:
    return json.dumps(bodies, indent=2, ensure_ascii=False) + "\n"


def test_tool_loop_bodies_match_the_golden_file() -> None:
    assert GOLDEN.exists(), f"no golden file; write it with: {REGENERATE}"
    current = render(_anthropic_loop.bodies())
    assert current == GOLDEN.read_text(encoding="utf-8"), (
        f"the adapter's request bodies changed; if that is intended: {REGENERATE}"
    )


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(f"usage: {REGENERATE}", file=sys.stderr)
        return 2
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(render(_anthropic_loop.bodies()), encoding="utf-8")
    print(f"wrote {GOLDEN}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

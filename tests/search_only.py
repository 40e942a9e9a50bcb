"""Options for tests about ``tool_search`` itself: the loop searches only when asked.

Their scripted models call ``tool_search`` first over catalogs of a few tools, so the turn's
start (the reveal of the request's best hits, the small-catalog rule that sends every tool)
is turned off; ``tests/client/test_tool_search_reveal.py`` tests that.
"""

from typing import Any, Final

SEARCH_ONLY: Final[dict[str, Any]] = {"reveal": 0, "send_all_below": None}

"""What a request shows the model of its tools, on every tool search channel.

Tool search shows a found tool in one of three places (:data:`~toolrelay.models.ToolChannel`):
the request's tool list (``"rewrite"``), a :class:`~toolrelay.messages.ToolChangeMessage` in
its history (``"native"``), or an answer of ``tool_search`` in its history that carries the
definition (``"proxy"``). Whatever watches requests from outside the loop (the command line's
live view, the task evaluation) reads all three here, so what it reports holds on each.
"""

from __future__ import annotations

from toolrelay.models._tool_changes import available_definitions
from toolrelay.prompt import Prompt
from toolrelay.tools._base import ToolDefinition
from toolrelay.toolsearch._search_tool import defined_in

__all__ = ["carried_definitions", "shown_tools"]


def carried_definitions(prompt: Prompt) -> tuple[ToolDefinition, ...]:
    """The definitions ``prompt`` carries as tools: its tool list, then its tool changes'.

    A search answer's definitions are not among them: they are text of the messages.
    """
    listed = tuple(t.definition for t in prompt.options.tools)
    names = {d.name for d in listed}
    changed = (d for d in available_definitions(prompt.messages) if d.name not in names)
    return (*listed, *changed)


def shown_tools(prompt: Prompt) -> tuple[str, ...]:
    """Canonical names of the tools ``prompt`` shows the model, in order, on any channel.

    The tool list, then the tools its tool changes make available, then those whose
    definitions ``tool_search`` answers in its history gave.
    """
    names = dict.fromkeys(d.name for d in carried_definitions(prompt))
    names.update(dict.fromkeys(defined_in(prompt.messages)))
    return tuple(names)

"""``toolrelay chat``: an interactive loop over tool search, fed from stdin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from toolrelay.cli import _chat as chat
from toolrelay.cli import app
from toolrelay.cli._chat import parse_context
from toolrelay.cli._chat_models import ModelSpec
from toolrelay.exceptions import ModelAPIError
from toolrelay.messages import ToolChangeMessage, ToolResponseMessage
from toolrelay.models._base import ChatModel
from toolrelay.prompt import Prompt
from toolrelay.testing import FunctionModel, ScriptedModel, tool_call_response

from ._helpers import WEATHER_TOOLS, write_jsonl

WEATHER_MODULE = '''
from toolrelay.tools import ToolContext, tool


@tool
def get_weather(city: str) -> dict:
    """Current weather for a city: temperature and conditions.

    Args:
        city: City name.
    """
    return {"city": city, "sky": "sunny", "celsius": 21}


@tool
def whoami(context: ToolContext) -> str:
    """Tell who is asking, from the caller's context."""
    return f"{context.user_id}@{context.tenant_id}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email message to a recipient.

    Args:
        to: Recipient address.
        body: Message text.
    """
    return "sent"


@tool
def convert_currency(amount: float, source: str, target: str) -> float:
    """Convert an amount of money from one currency to another at today's rate.

    Args:
        amount: The amount to convert.
        source: ISO code of the currency the amount is in.
        target: ISO code of the currency wanted.
    """
    return amount


@tool
def book_table(restaurant: str, guests: int) -> str:
    """Book a table at a restaurant for a number of guests.

    Args:
        restaurant: Restaurant name.
        guests: How many people.
    """
    return "booked"
'''


def chat_cli(*args: str, stdin: str) -> Result:
    return CliRunner().invoke(app, ["chat", *args], input=stdin, env={"COLUMNS": "200"})


@pytest.fixture
def weather_module(tmp_path: Path) -> Path:
    path = tmp_path / "weather_tools.py"
    path.write_text(WEATHER_MODULE, encoding="utf-8")
    return path


def use_model(monkeypatch: pytest.MonkeyPatch, model: ChatModel) -> list[ModelSpec]:
    """Make ``--model`` give ``model``; returns the specs it was asked for."""
    asked: list[ModelSpec] = []

    def make(spec: ModelSpec, **options: Any) -> ChatModel:
        asked.append(spec)
        return model

    monkeypatch.setattr(chat, "make_chat_model", make)
    return asked


def test_a_turn_shows_the_search_the_call_and_the_answer(
    monkeypatch: pytest.MonkeyPatch, weather_module: Path
) -> None:
    model = ScriptedModel(
        [
            tool_call_response(("tool_search", {"queries": ["weather in a city"]})),
            tool_call_response(("get_weather", {"city": "Paris"})),
            "It is sunny in Paris, 21 °C.",
        ]
    )
    asked = use_model(monkeypatch, model)
    result = chat_cli(
        "--model",
        "openai:gpt-test",
        "--tools",
        str(weather_module),
        "-i",
        "bm25",
        # Worded so the turn's reveal (the message's best hits) misses: the model searches.
        stdin="Is it sunny in Paris?\nexit\n",
    )
    assert result.exit_code == 0, result.output
    assert [str(spec) for spec in asked] == ["openai:gpt-test"]
    out = result.stdout
    assert "toolrelay chat: 5 tools from" in out
    assert "you> Is it sunny in Paris?" in out
    assert "revealed before the first model call" not in out
    assert 'tool_search({"queries": ["weather in a city"]})' in out
    assert "1. get_weather" in out
    assert 'get_weather({"city": "Paris"})' in out
    assert '→ {"city": "Paris", "sky": "sunny", "celsius": 21}' in out
    assert "It is sunny in Paris, 21 °C." in out
    assert "1 turn, 3 requests:" in out
    # A model that declares no channel takes the proxy channel: the tool list stays the
    # search pair, the search answer carries the definition, and the live view counts it.
    assert model.tool_names_shown(0) == model.tool_names_shown(1) == ["tool_search", "call_tool"]
    assert '"name":"get_weather"' in model.prompts[1].messages[-1].responses[0].data
    assert "Round 1 · 2 tools shown" in out
    assert "Round 2 · 3 tools shown" in out
    assert model.call_count == 3


def weather_turn(monkeypatch: pytest.MonkeyPatch, module: Path, *options: str, **model: Any):
    scripted = ScriptedModel(
        [
            tool_call_response(("tool_search", {"queries": ["weather in a city"]})),
            tool_call_response(("get_weather", {"city": "Paris"})),
            "Sunny.",
        ],
        **model,
    )
    use_model(monkeypatch, scripted)
    result = chat_cli(
        "--model",
        "openai:gpt-test",
        "--tools",
        str(module),
        "-i",
        "bm25",
        *options,
        stdin="Is it sunny in Paris?\n",  # the reveal misses: the model searches
    )
    return scripted, result


def test_the_rewrite_channel_shows_found_tools_in_the_tool_list(
    monkeypatch: pytest.MonkeyPatch, weather_module: Path
) -> None:
    model, result = weather_turn(monkeypatch, weather_module, "--channel", "rewrite")
    assert result.exit_code == 0, result.output
    assert model.tool_names_shown(0) == ["tool_search"]
    assert model.tool_names_shown(1) == ["tool_search", "get_weather"]
    assert "Round 2 · 2 tools shown" in result.stdout


def test_the_native_channel_counts_the_tools_a_change_added(
    monkeypatch: pytest.MonkeyPatch, weather_module: Path
) -> None:
    channels = ("native", "proxy", "rewrite")
    model, result = weather_turn(monkeypatch, weather_module, tool_channels=channels)
    assert result.exit_code == 0, result.output
    # auto takes the model's native channel: the tool list never changes, a tool change
    # in the history makes the found tool available, and the live view counts it.
    assert model.tool_names_shown(0) == model.tool_names_shown(1) == ["tool_search"]
    assert any(isinstance(m, ToolChangeMessage) for m in model.prompts[1].messages)
    assert "Round 2 · 2 tools shown" in result.stdout


def test_a_channel_the_model_does_not_render_is_refused_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch, weather_module: Path
) -> None:
    model, result = weather_turn(monkeypatch, weather_module, "--channel", "native")
    assert result.exit_code != 0
    assert "--channel: channel='native'" in result.output
    assert "'proxy', 'rewrite'" in result.output
    assert model.call_count == 0


def test_an_unknown_channel_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, weather_module: Path
) -> None:
    _, result = weather_turn(monkeypatch, weather_module, "--channel", "sideways")
    assert result.exit_code == 2
    assert "unknown channel 'sideways'; use auto, native, proxy or rewrite" in result.output


def test_turns_share_memory_and_context_and_end_at_end_of_input(
    monkeypatch: pytest.MonkeyPatch, weather_module: Path
) -> None:
    def reply(prompt: Prompt) -> Any:
        last = prompt.messages[-1]
        if isinstance(last, ToolResponseMessage):
            if last.responses[0].name == "tool_search":
                return tool_call_response(("whoami", {}))
            return f"You are {last.responses[0].data}."
        return tool_call_response(("tool_search", {"queries": ["who is asking"]}))

    model = FunctionModel(reply)
    use_model(monkeypatch, model)
    result = chat_cli(
        "--model",
        "anthropic:test",
        "--tools",
        str(weather_module),
        "-i",
        "bm25",
        "--context",
        "user_id=ada",
        "--context",
        "tenant_id=lab",
        "--channel",
        "rewrite",
        stdin="who am I?\n\n  \nand again?\n",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.count("You are ada@lab.") == 2
    assert "2 turns, 6 requests:" in result.stdout
    # The second turn starts with the first exchange (memory) and the tool found before.
    second = model.prompts[3]
    texts = [getattr(m, "text", None) for m in second.messages]
    assert "who am I?" in texts
    assert "You are ada@lab." in texts
    assert "whoami" in model.tool_names_shown(3)


def test_a_failing_turn_prints_one_line_and_the_chat_goes_on(
    monkeypatch: pytest.MonkeyPatch, weather_module: Path
) -> None:
    calls = {"n": 0}

    def reply(prompt: Prompt) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ModelAPIError("openai", 503, "the provider answered 503\nretry later")
        return "Back again."

    use_model(monkeypatch, FunctionModel(reply))
    result = chat_cli(
        "--model",
        "openai:x",
        "--tools",
        str(weather_module),
        "-i",
        "bm25",
        stdin="first\nsecond\nquit\nnever read\n",
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.strip().splitlines() == ["error: the provider answered 503; retry later"]
    assert "Back again." in result.stdout
    assert "never read" not in result.stdout


def test_the_replay_chat_runs_the_triage_and_shows_feedback() -> None:
    result = chat_cli(
        "--model",
        "replay",
        "-i",
        "bm25",
        stdin="Triage yesterday's refunds\nAgain, please\nexit\n",
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "a replay of the refund-triage decisions" in out
    assert "The owner was notified (MSG-" in out
    # The second triage finds the incidents already open: the tool's error is fed back.
    assert "✗ error: refund RF-2002 already has open incident" in out
    assert "Stopped: ticket.create_incident answered with an error" in out
    assert "2 turns," in out
    assert result.stderr == ""  # the tool's exception is shown once, not logged


def test_the_replay_chat_searches_a_file_of_your_own_tools(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    module = folder / "my_tools.py"
    module.write_text(WEATHER_MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # neither the checkout nor the module's folder
    result = chat_cli(
        "--model",
        "replay",
        "--tools",
        str(module),
        "-i",
        "bm25",
        stdin="What is the weather in Paris?\nfly me to the moon\n",
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())  # long lines wrap
    assert f"5 tools from {module}" in out
    assert "it searches your tools for each message and calls none of them" in out
    # The turn's reveal searched with the first message: the replay takes its hits, no search.
    assert (
        "revealed before the first model call: get_weather (pinned: the conversation's tool "
        "list from now on)"
    ) in out
    assert 'tool_search({"queries": ["What is the weather in Paris?"]})' not in out
    assert "The search for 'What is the weather in Paris?' returned 1 tool: get_weather." in out
    assert 'tool_search({"queries": ["fly me to the moon"]})' in out  # the reveal found nothing
    assert "The search for 'fly me to the moon' returned no tools." in out
    assert "get_weather(" not in out  # nothing is called
    assert "2 turns," in out
    assert result.stderr == ""


def test_the_replay_chat_takes_a_package_of_tools_that_is_not_a_demo_catalog(
    tmp_path: Path,
) -> None:
    package = tmp_path / "weather_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(WEATHER_MODULE, encoding="utf-8")
    result = chat_cli(
        "--model", "replay", "--tools", str(package), "-i", "bm25", stdin="send an email\n"
    )
    assert result.exit_code == 0, result.output
    assert "returned 1 tool: send_email." in result.stdout


def test_bad_input(tmp_path: Path) -> None:
    missing = chat_cli(stdin="")
    assert missing.exit_code == 2
    assert "Missing option '--model'" in missing.stderr
    catalog = write_jsonl(tmp_path / "tools.jsonl", WEATHER_TOOLS)
    json_file = chat_cli("--model", "replay", "--tools", str(catalog), stdin="")
    assert json_file.exit_code == 1
    assert json_file.stderr.strip().splitlines() == [
        f"error: {catalog}: chat needs tools that can run: a Python module with @tool "
        "functions, a ToolCatalog or build_catalog(); JSON tool definitions have no code"
    ]
    bad_context = chat_cli("--model", "replay", "--context", "nokey", stdin="")
    assert bad_context.exit_code == 2
    assert "expected KEY=VALUE, got 'nokey'" in bad_context.stderr


def test_json_definitions_cannot_chat(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_model(monkeypatch, ScriptedModel([]))
    catalog = write_jsonl(tmp_path / "tools.jsonl", WEATHER_TOOLS)
    result = chat_cli("--model", "openai:x", "--tools", str(catalog), stdin="")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"error: {catalog}: chat needs tools that can run: a Python module with @tool "
        "functions, a ToolCatalog or build_catalog(); JSON tool definitions have no code"
    ]


def test_parse_context() -> None:
    assert parse_context(["a=1", " b =x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    assert parse_context(None) == {}


def test_help_lists_every_model_it_accepts() -> None:
    from toolrelay.cli._chat_models import Provider

    shown = CliRunner().invoke(app, ["chat", "--help"], env={"COLUMNS": "80"}).stdout
    demo = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "80"}).stdout
    for provider in Provider:
        named = provider in (Provider.OPENAI, Provider.ANTHROPIC)
        form = f"{provider.value}:NAME" if named else provider.value
        assert form in shown, form
        assert form in demo, form


def test_a_call_needing_approval_is_denied_with_a_reason_and_never_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = ScriptedModel(
        [
            tool_call_response(("tool_search", {"queries": ["delete one database row"]})),
            tool_call_response(("db__delete_row", {"table": "refunds", "key": "RF-2001"})),
            "I could not delete it: it needs approval.",
        ]
    )
    use_model(monkeypatch, model)
    result = chat_cli("--model", "openai:gpt-test", "-i", "bm25", stdin="delete RF-2001\n")
    assert result.exit_code == 0, result.output
    [denied] = model.prompts[2].messages[-1].responses  # type: ignore[union-attr]
    assert denied.is_error
    assert denied.data.startswith("The tool 'db.delete_row' requires a person's approval")
    assert "nobody approves calls in this session" in result.stdout
    assert "I could not delete it: it needs approval." in result.stdout


def test_a_small_catalog_is_sent_whole_and_the_chat_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    module = tmp_path / "one_tool.py"
    module.write_text(WEATHER_MODULE.split("\n\n@tool\ndef whoami")[0], encoding="utf-8")
    model = ScriptedModel([tool_call_response(("get_weather", {"city": "Paris"})), "Sunny."])
    use_model(monkeypatch, model)
    result = chat_cli("--model", "openai:x", "--tools", str(module), stdin="Weather in Paris?\n")
    assert result.exit_code == 0, result.output
    assert model.tool_names_shown(0) == ["get_weather"]  # no search: every tool is sent
    out = " ".join(result.stdout.split())
    assert "every tool sent: the permitted catalog's definitions total" in out
    assert "revealed before the first model call" not in out


def test_the_chat_says_what_the_reveal_showed(
    monkeypatch: pytest.MonkeyPatch, weather_module: Path
) -> None:
    model = ScriptedModel(
        [
            tool_call_response(
                ("call_tool", {"name": "get_weather", "arguments": {"city": "Paris"}})
            ),
            "Sunny.",
        ]
    )
    use_model(monkeypatch, model)
    result = chat_cli(
        "--model",
        "openai:x",
        "--tools",
        str(weather_module),
        "-i",
        "bm25",
        stdin="What's the weather in Paris?\n",
    )
    assert result.exit_code == 0, result.output
    assert "revealed before the first model call: get_weather" in result.stdout
    assert model.call_count == 2  # no search round

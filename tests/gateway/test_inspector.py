"""The refund desk's gateway as the official MCP Inspector sees it, over stdio and HTTP.

``toolrelay serve examples/refund_desk_mcp/gateway.toml``, driven by the Inspector's command
line (``mcp-inspector --cli``): it lists the two tools, searches, calls a read-only tool and
the guarded refund retry, with arguments given the way its users give them (``--tool-arg
key=value``, whose values it converts by the published schema; ``--tool-args-json``, passed
as they are). The assertions are on the JSON the Inspector prints. The same gateway with an
``[auth]`` table of API tokens lets the Inspector in with its bearer token (``--header``)
only, and runs its calls as the token's user, whatever its ``--tool-metadata`` claims.

Needs the Inspector: ``TOOLRELAY_TEST_MCP_INSPECTOR`` names its ``mcp-inspector`` binary
(``bash .ci/services.sh inspector`` installs the pinned version and prints the export).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from toolrelay.mcp._auth import ApiToken

from ._helpers import PYTHON, ROOT, toml_string

INSPECTOR = os.environ.get("TOOLRELAY_TEST_MCP_INSPECTOR", "")
if not INSPECTOR:
    pytest.skip(
        "needs the MCP Inspector: set TOOLRELAY_TEST_MCP_INSPECTOR to its mcp-inspector binary "
        "(bash .ci/services.sh inspector installs it and prints the export)",
        allow_module_level=True,
    )

EXAMPLE = ROOT / "examples" / "refund_desk_mcp" / "gateway.toml"
RETRY = "refund.retry_failed_order"
# Starting the gateway starts its two upstream servers; a loaded machine needs a while.
STARTUP = 120.0
CALL_TOOL_ANNOTATIONS = {
    "readOnlyHint": False,
    "destructiveHint": True,  # it runs refunds, and its servers' tools may change
    "idempotentHint": False,
    "openWorldHint": True,
}


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The Inspector's and the gateway's environment."""
    home = tmp_path_factory.mktemp("inspector")
    return {
        **os.environ,
        # The example's servers run as `python`, as in an activated virtual environment.
        "PATH": str(Path(PYTHON).parent) + os.pathsep + os.environ["PATH"],
        # The Inspector's own files, away from the user's.
        "MCP_CATALOG_PATH": str(home / "mcp.json"),
        "MCP_CLIENT_CONFIG_PATH": str(home / "client.json"),
    }


def inspect(env: Mapping[str, str], target: list[str], *arguments: str) -> tuple[int, Any]:
    """Run the Inspector's command line once; its exit status and the JSON it printed."""
    done = subprocess.run(
        [
            *(INSPECTOR, "--cli", "--format", "json", "--quiet"),
            *("--connect-timeout", str(int(STARTUP * 1000)), *target, *arguments),
        ],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=STARTUP + 60,
        check=False,
    )
    assert done.stdout, f"the Inspector printed nothing (status {done.returncode}): {done.stderr}"
    return done.returncode, json.loads(done.stdout)


def call(env: Mapping[str, str], target: list[str], *arguments: str) -> tuple[bool, str]:
    """``tools/call`` through the Inspector: whether the result is an error, and its text."""
    status, printed = inspect(env, target, "--method", "tools/call", *arguments)
    result = printed["result"]
    assert (status == 0) == (not result["isError"]), printed
    (block,) = result["content"]
    return result["isError"], block["text"]


def test_over_stdio_a_call_with_tool_args_runs(environment: dict[str, str]) -> None:
    # The way a desktop client runs it: the Inspector starts the gateway itself.
    stdio = [PYTHON, "-m", "toolrelay", "serve", str(EXAMPLE)]
    failed, text = call(
        environment,
        stdio,
        "--tool-name",
        "call_tool",
        "--tool-arg",
        "name=refund.find_failed_orders",
        'arguments={"retryable_only": true}',
    )
    assert not failed, text
    refunds = json.loads(text)
    assert refunds
    assert all(refund["retryable"] for refund in refunds)


@pytest.fixture(scope="module")
def http(
    environment: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    """``toolrelay serve ... -t http --port 0``, and the Inspector's target for it."""
    with _serving(EXAMPLE, environment, tmp_path_factory.mktemp("gateway")) as (url, _):
        yield [url]


@contextlib.contextmanager
def _serving(config: Path, env: Mapping[str, str], folder: Path) -> Iterator[tuple[str, str]]:
    """``toolrelay serve CONFIG -t http --port 0``: its URL and who may call, as announced."""
    log = folder / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [PYTHON, "-m", "toolrelay", "serve", str(config), "-t", "http", "--port", "0"],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        yield _announced(log, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _announced(log: Path, process: subprocess.Popen[Any]) -> tuple[str, str]:
    """The URL ``toolrelay serve`` prints once it listens, and who may call it."""
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        found = re.search(r"listens at (http://\S+/mcp) \((.*)\);", log.read_text())
        if found:
            return found.group(1), found.group(2)
        if process.poll() is not None:
            raise RuntimeError(f"the gateway exited with {process.returncode}: {log.read_text()}")
        time.sleep(0.2)
    raise RuntimeError(f"the gateway did not start listening: {log.read_text()}")


def test_the_inspector_lists_call_tool_as_destructive(
    environment: dict[str, str], http: list[str]
) -> None:
    status, printed = inspect(environment, http, "--method", "tools/list")
    assert status == 0, printed
    tools = {tool["name"]: tool for tool in printed["result"]["tools"]}
    assert list(tools) == ["tool_search", "call_tool"]
    assert tools["call_tool"]["annotations"] == CALL_TOOL_ANNOTATIONS
    assert tools["tool_search"]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    arguments = tools["call_tool"]["inputSchema"]["properties"]["arguments"]
    assert (arguments["type"], arguments["default"]) == ("object", {})


def test_search_finds_each_tool_with_what_the_gateway_does_to_it(
    environment: dict[str, str], http: list[str]
) -> None:
    failed, text = call(
        environment,
        http,
        "--tool-name",
        "tool_search",
        "--tool-arg",
        "queries=retry failed refunds",
        "max_results=5",
    )
    assert not failed, text
    hits = {hit["name"]: hit for hit in json.loads(text)}
    assert hits[RETRY]["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,  # the gateway records its results, by refund_id
        "openWorldHint": True,
    }
    assert hits[RETRY]["requires_approval"] is True  # [approval] destructive = true
    failed, text = call(
        environment, http, "--tool-name", "tool_search", "--tool-arg", "queries=find failed refunds"
    )
    assert not failed, text
    reading = json.loads(text)[0]
    assert reading["name"] == "refund.find_failed_orders"
    assert reading["annotations"] == {"readOnlyHint": True, "openWorldHint": True}
    assert "requires_approval" not in reading


def test_a_guarded_retry_runs_once_approved_and_once_only(
    environment: dict[str, str], http: list[str]
) -> None:
    # --tool-args-json passes the values as given; a JSON text for `arguments` is decoded
    # by the Inspector, since the schema says object, or else by the gateway.
    listing = {"name": "refund.find_failed_orders", "arguments": '{"retryable_only": true}'}
    failed, found = call(
        environment, http, "--tool-name", "call_tool", "--tool-args-json", json.dumps(listing)
    )
    assert not failed, found
    refund = json.loads(found)[-1]

    def retry(*more: str) -> tuple[bool, str]:
        return call(
            environment,
            http,
            "--tool-name",
            "call_tool",
            "--tool-arg",
            f"name={RETRY}",
            f'arguments={{"refund_id": "{refund["refund_id"]}"}}',
            *more,
        )

    # The example's approval handler refuses a call that names no support agent.
    refused, text = retry()
    assert refused
    assert text == f"{RETRY} needs a signed-in support agent; the request names no user."
    approved, result = retry("--tool-metadata", "user_id=U-ZHANG")
    assert not approved, result
    assert json.loads(result)["succeeded"] is True
    # Repeated by the same agent: the recorded result answers, saying it did not run again.
    replayed, text = retry("--tool-metadata", "user_id=U-ZHANG")
    assert not replayed
    assert text.startswith("[not run again: this exact call already ran at ")
    assert text.endswith("\n" + result)
    # Repeated without the agent: another user's record never answers it; the handler refuses.
    assert retry()[0]

    _, attempts = call(
        environment,
        http,
        "--tool-name",
        "call_tool",
        "--tool-arg",
        "name=refund.list_attempts",
        f'arguments={{"refund_id": "{refund["refund_id"]}"}}',
    )
    assert len(json.loads(attempts)) == refund["attempts"] + 1  # the channel saw one retry


def test_arguments_that_are_no_json_object_are_an_error_naming_the_fix(
    environment: dict[str, str], http: list[str]
) -> None:
    # Not JSON, so the Inspector sends the text as it is (it used to get "Input should be a
    # valid dictionary", which names no fix).
    failed, text = call(
        environment,
        http,
        "--tool-name",
        "call_tool",
        "--tool-arg",
        "name=refund.list_attempts",
        "arguments={refund_id: RF-2001}",
    )
    assert failed
    # Read as the named tool's arguments, on the path of every call: what is wrong, and the fix.
    assert text.startswith(
        "Invalid arguments for tool 'refund.list_attempts':\n- Arguments are not valid JSON: "
    )
    assert text.endswith("\nFix the arguments and call the tool again.")


TOKEN = "trl_inspector-test-token"  # the agent's API token; the file keeps its digest only


@pytest.fixture(scope="module")
def authenticated(
    environment: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    """The example's gateway with an ``[auth]`` table: one API token, the agent U-ZHANG's."""
    folder = tmp_path_factory.mktemp("authenticated")
    text = EXAMPLE.read_text(encoding="utf-8")
    # The same file elsewhere: its relative paths made absolute.
    for relative, absolute in (
        ('cwd = "../.."', f"cwd = {toml_string(str(ROOT))}"),
        ('handler = "approvals.py:decide"',
         f"handler = {toml_string(str(EXAMPLE.parent / 'approvals.py') + ':decide')}"),
    ):  # fmt: skip
        assert relative in text
        text = text.replace(relative, absolute)
    text += f"""
[auth]
[[auth.tokens]]
sha256 = "{ApiToken.digest(TOKEN)}"
user_id = "U-ZHANG"
"""
    config = folder / "gateway.toml"
    config.write_text(text, encoding="utf-8")
    with _serving(config, environment, folder) as (url, callers):
        assert callers == "bearer token required: 1 API token"
        yield [url]


def test_without_its_bearer_token_the_inspector_is_refused(
    environment: dict[str, str], authenticated: list[str]
) -> None:
    done = subprocess.run(
        [
            INSPECTOR,
            "--cli",
            "--format",
            "json",
            "--quiet",
            *authenticated,
            "--method",
            "tools/list",
        ],
        env=environment,
        capture_output=True,
        text=True,
        timeout=STARTUP,
        check=False,
    )
    assert done.returncode != 0
    assert json.loads(done.stderr)["error"]["code"] == "auth_required"
    assert not done.stdout


def test_with_its_bearer_token_the_inspector_calls_as_the_tokens_user(
    environment: dict[str, str], authenticated: list[str]
) -> None:
    target = [*authenticated, "--header", f"Authorization: Bearer {TOKEN}"]
    status, printed = inspect(environment, target, "--method", "tools/list")
    assert status == 0, printed
    assert [tool["name"] for tool in printed["result"]["tools"]] == ["tool_search", "call_tool"]

    failed, found = call(
        environment,
        target,
        "--tool-name",
        "call_tool",
        "--tool-args-json",
        json.dumps({"name": "refund.find_failed_orders", "arguments": {"retryable_only": True}}),
    )
    assert not failed, found
    refund = json.loads(found)[-1]["refund_id"]

    def retry(user: str) -> tuple[bool, str]:
        return call(
            environment,
            target,
            "--tool-name",
            "call_tool",
            "--tool-arg",
            f"name={RETRY}",
            f'arguments={{"refund_id": "{refund}"}}',
            "--tool-metadata",
            f"user_id={user}",
            "tenant_id=victim-corp",
        )

    # No agent named in _meta would be refused (see the unauthenticated test): the token's
    # user is the caller, approved as an agent, whatever the metadata says.
    first_failed, first = retry("U-FORGED")
    assert not first_failed, first
    assert json.loads(first)["succeeded"] is True
    # Another user claimed: still the token's, so the recorded result answers.
    again_failed, again = retry("U-SOMEONE-ELSE")
    assert not again_failed
    assert again.startswith("[not run again: this exact call already ran at ")
    assert again.endswith("\n" + first)

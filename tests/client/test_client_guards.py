"""The client's guards: declared approval, idempotency and context needs hold, with or without
tool search, configured once on the client."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import pytest

from tests.search_only import SEARCH_ONLY
from toolrelay.client import ChatClient, ChatClientResponse, ToolSearchAdvisor
from toolrelay.exceptions import ConfigurationError, ToolContextError
from toolrelay.execution import (
    Approve,
    AuditRecord,
    Deny,
    InMemoryIdempotencyStore,
    Proceed,
    ToolCallingManager,
    ToolCallOutcome,
    ToolCallStatus,
    ToolInvocation,
)
from toolrelay.messages import ToolResponseMessage
from toolrelay.search._bm25 import BM25ToolIndex
from toolrelay.testing import ScriptedModel, tool_call_response
from toolrelay.tools import Tool, ToolContext, tool, tools_from
from toolrelay.toolsearch import TOOL_SEARCH_NAME, InMemorySessionStore

CONTEXT = {"tenant_id": "acme", "user_id": "u-1"}


class Files:
    """File tools that record what they did."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.listed = 0

    @tool(name="files.delete", destructive=True, requires_approval=True)
    def delete(self, path: str) -> str:
        """Delete a file for good.

        Args:
            path: The file's path.
        """
        self.deleted.append(path)
        return f"deleted {path}"

    @tool(name="files.list", read_only=True)
    def list_files(self) -> str:
        """List the files."""
        self.listed += 1
        return "a.txt b.txt"


class Billing:
    """A charge that must happen once per invoice."""

    def __init__(self) -> None:
        self.charged: list[str] = []

    @tool(name="billing.charge", idempotency_key="invoice_id")
    def charge(self, invoice_id: str, cents: int) -> str:
        """Charge a customer's card for an invoice.

        Args:
            invoice_id: The invoice.
            cents: The amount.
        """
        self.charged.append(invoice_id)
        return f"charged {cents} for {invoice_id}, payment #{len(self.charged)}"


class Approver:
    """An approval handler answering ``verdict`` and noting what it was asked."""

    def __init__(self, verdict: Approve | Deny) -> None:
        self.verdict = verdict
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, invocation: ToolInvocation, /) -> Approve | Deny:
        self.asked.append((invocation.tool_name, dict(invocation.arguments)))
        return self.verdict


def searching(query: str) -> Any:
    return tool_call_response((TOOL_SEARCH_NAME, {"queries": [query]}))


def client_over(model: ScriptedModel, tools: list[Tool], mode: str, **settings: Any) -> ChatClient:
    """A client showing ``tools`` whole (``plain``) or through tool search (``search``, or
    ``proxy`` for its proxy channel)."""
    if mode == "plain":
        return ChatClient(model, tools=tools, **settings)
    channel = "proxy" if mode == "proxy" else "rewrite"
    search = ToolSearchAdvisor(tools, index=BM25ToolIndex(), channel=channel, **SEARCH_ONLY)
    return ChatClient(model, advisors=[search], **settings)


def script(mode: str, query: str, *steps: Any) -> list[Any]:
    """``steps``, after a search for ``query`` when the tools are found through search."""
    return [searching(query), *steps] if mode == "search" else list(steps)


def responses(model: ScriptedModel, request: int) -> list[Any]:
    message = model.prompts[request].messages[-1]
    assert isinstance(message, ToolResponseMessage)
    return list(message.responses)


def outcomes(response: ChatClientResponse) -> list[ToolCallOutcome]:
    loop = response.tool_loop
    assert loop is not None
    return [o for r in loop.rounds for o in r.outcomes if o.tool_name != TOOL_SEARCH_NAME]


MODES = ["plain", "search"]
DELETE = ("files__delete", {"path": "a.txt"})


# --- a tool that requires approval needs approval= to build ---------------------------------------


def test_a_client_over_a_tool_requiring_approval_without_approval_is_refused_at_build() -> None:
    model = ScriptedModel([])
    with pytest.raises(ConfigurationError, match=r"'files\.delete' requires approval.*approval="):
        ChatClient(model, tools=tools_from(Files()))
    with pytest.raises(ConfigurationError, match=r"'files\.delete' requires approval.*approval="):
        ChatClient.builder(model).default_tools(*tools_from(Files())).build()
    # A tool search's catalog is known at build too.
    search = ToolSearchAdvisor(tools_from(Files()), index=BM25ToolIndex())
    with pytest.raises(ConfigurationError, match=r"'files\.delete' requires approval.*approval="):
        ChatClient(model, advisors=[search])
    assert model.call_count == 0


# --- the handler is asked, and a denied call never runs -------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_the_approval_handler_is_asked_and_a_denied_call_never_runs(mode: str) -> None:
    files, approver = Files(), Approver(Deny("deleting files needs a ticket"))
    model = ScriptedModel(script(mode, "delete a file", tool_call_response(DELETE), "Not deleted."))
    client = client_over(model, tools_from(files), mode, approval=approver)
    response = await client.prompt("delete a.txt").conversation("c1").acall()
    assert response.content() == "Not deleted."
    assert approver.asked == [("files.delete", {"path": "a.txt"})]
    assert files.deleted == []
    [outcome] = outcomes(response)
    assert outcome.status is ToolCallStatus.DENIED
    [answer] = responses(model, model.call_count - 1)
    assert "deleting files needs a ticket" in answer.data
    assert answer.is_error


@pytest.mark.parametrize("mode", MODES)
async def test_an_approved_call_runs_and_other_tools_are_not_asked_about(mode: str) -> None:
    files, approver = Files(), Approver(Approve())
    model = ScriptedModel(
        script(
            mode,
            "delete or list files",
            tool_call_response(DELETE, ("files__list", {})),
            "Deleted.",
        )
    )
    client = client_over(model, tools_from(files), mode, approval=approver)
    await client.prompt("delete a.txt").conversation("c1").acall()
    assert approver.asked == [("files.delete", {"path": "a.txt"})]
    assert (files.deleted, files.listed) == (["a.txt"], 1)


# --- idempotency holds by default across turns ----------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_an_idempotent_tool_called_in_two_turns_of_one_client_runs_once(mode: str) -> None:
    billing = Billing()
    charge = ("billing__charge", {"invoice_id": "inv-7", "cents": 1200})
    turn = script(mode, "charge a card for an invoice", tool_call_response(charge), "Charged.")
    model = ScriptedModel([*turn, *turn])
    client = client_over(model, tools_from(billing), mode)  # no idempotency= given
    first = await client.prompt("charge inv-7").conversation("c1").tool_context(CONTEXT).acall()
    again = await client.prompt("charge inv-7").conversation("c1").tool_context(CONTEXT).acall()
    assert billing.charged == ["inv-7"]
    [paid] = outcomes(first)
    [replayed] = outcomes(again)
    assert (paid.replayed, replayed.replayed) == (False, True)
    assert paid.response.data == "charged 1200 for inv-7, payment #1"
    assert replayed.recorded_result == paid.response.data
    assert replayed.response.data.startswith("[not run again: this exact call already ran at ")


# --- what a tool needs of its context is checked before the model is called -----------------------


@tool(name="reports.weekly", read_only=True)
def weekly_report(week: int, context: ToolContext) -> str:
    """The weekly report of the current tenant.

    Args:
        week: The week's number.
    """
    return f"report {week} of {context.tenant_id}"


@tool(name="reports.monthly", read_only=True, context_keys=["tenant_id"])
def monthly_report(month: int) -> str:
    """The monthly report of the current tenant.

    Args:
        month: The month's number.
    """
    return f"report {month}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("needy", "context", "key"),
    [
        (weekly_report, {}, None),
        (monthly_report, {}, "tenant_id"),
        (monthly_report, {"user_id": "u-1"}, "tenant_id"),
    ],
)
async def test_a_request_lacking_the_context_a_tool_needs_fails_before_the_model_is_called(
    mode: str, needy: Any, context: Mapping[str, Any], key: str | None
) -> None:
    model = ScriptedModel(["never asked"])
    client = client_over(model, [needy], mode)
    with pytest.raises(ToolContextError) as raised:
        await client.prompt("report").conversation("c1").tool_context(context).acall()
    assert raised.value.key == key
    assert model.call_count == 0
    # With the context it needs, the same client answers.
    await client.prompt("report").conversation("c1").tool_context(CONTEXT).acall()
    assert model.call_count == 1


async def test_a_request_tool_lacking_its_context_fails_before_the_model_is_called() -> None:
    model = ScriptedModel(["never asked"])
    client = ChatClient(model)
    with pytest.raises(ToolContextError, match=r"reports\.monthly"):
        await client.prompt("report").tools(monthly_report).acall()
    assert model.call_count == 0


@pytest.mark.parametrize("mode", [*MODES, "proxy"])
async def test_a_request_naming_no_caller_with_a_keyed_tool_fails_before_the_model_is_called(
    mode: str,
) -> None:
    # The charge keeps its keys per caller: without one, callers would share its records.
    model = ScriptedModel(["one", "two", "three"])
    client = client_over(model, tools_from(Billing()), mode)
    for nobody in ({}, {"role": "clerk"}, {"user_id": "", "tenant_id": None}):
        with pytest.raises(ToolContextError, match="names no caller") as raised:
            await client.prompt("charge").conversation("c1").tool_context(nobody).acall()
        assert (raised.value.tool, raised.value.key, raised.value.caller) == (
            "billing.charge",
            "user_id",
            True,
        )
    assert model.call_count == 0
    for caller in ({"user_id": "u-1"}, {"tenant_id": "acme"}, {"session_id": "s-1"}):
        await client.prompt("charge").conversation("c1").tool_context(caller).acall()
    assert model.call_count == 3


@tool(name="billing.refund", idempotency_key="refund_id", idempotency_scope="global")
def global_refund(refund_id: str) -> str:
    """Refund a payment, once whoever asks.

    Args:
        refund_id: The refund.
    """
    return f"refunded {refund_id}"


@tool(name="billing.void", idempotency_key=lambda arguments, context: f"void:{arguments['n']}")
def void_invoice(n: int) -> str:
    """Void an invoice.

    Args:
        n: The invoice number.
    """
    return f"voided {n}"


@pytest.mark.parametrize("mode", [*MODES, "proxy"])
async def test_global_keys_and_key_functions_need_no_caller(mode: str) -> None:
    model = ScriptedModel(["Nothing to do."])
    client = client_over(model, [global_refund, void_invoice], mode)
    answer = await client.prompt("refund").conversation("c1").acall()
    assert answer.content() == "Nothing to do."


# --- one manager: the client's or the advisor's ---------------------------------------------------


def test_a_search_advisor_with_its_own_manager_next_to_client_guards_is_refused() -> None:
    search = ToolSearchAdvisor(
        tools_from(Billing()),
        index=BM25ToolIndex(),
        tool_calling_manager=ToolCallingManager(),
    )
    own = r"approval= configure the client's tool rounds.*manager of its own"
    with pytest.raises(ConfigurationError, match=own):
        ChatClient(ScriptedModel([]), advisors=[search], approval=Approver(Approve()))
    with pytest.raises(ConfigurationError, match="give the advisor no manager"):
        ChatClient.builder(ScriptedModel([])).default_advisors(search).guards(
            idempotency=InMemoryIdempotencyStore()
        ).build()


# --- the guard options reach the manager, and nothing else passes for one ------------------------


class Sink:
    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def write(self, record: AuditRecord) -> None:
        self.records.append(record)


async def test_the_builder_guards_reach_the_manager() -> None:
    files, billing = Files(), Billing()
    approver, sink, store = Approver(Approve()), Sink(), InMemoryIdempotencyStore()
    authorized: list[str] = []
    stepped: list[str] = []

    def authorize(context: ToolContext, tool: Tool, arguments: Mapping[str, Any]) -> bool:
        authorized.append(tool.definition.name)
        return True

    async def step(invocation: ToolInvocation, proceed: Proceed, /) -> ToolCallOutcome:
        stepped.append(invocation.tool_name)
        return await proceed(invocation)

    charge = ("billing__charge", {"invoice_id": "inv-1", "cents": 5})
    model = ScriptedModel([tool_call_response(DELETE, charge), "Done."])
    client = (
        ChatClient.builder(model)
        .default_tools(*tools_from(files), *tools_from(billing))
        .guards(approval=approver, idempotency=store)
        .guards(audit=sink, authorize=authorize, interceptors=[step])  # adds to the first
        .single_tenant()
        .build()
    )
    guards = client.tool_calling_manager.guards
    assert guards.approval is not None
    assert guards.approval.handler is approver
    assert guards.idempotency.store is store
    assert guards.audit is not None
    assert guards.audit.sink is sink
    assert guards.authorization is not None
    assert guards.authorization.authorize is authorize
    assert guards.interceptors == (step,)
    assert client._defaults.single_tenant

    await client.prompt("delete a.txt and charge inv-1").tool_context(CONTEXT).acall()
    assert approver.asked == [("files.delete", {"path": "a.txt"})]
    assert sorted(authorized) == sorted(stepped) == ["billing.charge", "files.delete"]
    assert sorted(r.tool for r in sink.records) == ["billing.charge", "files.delete"]
    assert (files.deleted, billing.charged) == (["a.txt"], ["inv-1"])
    # The charge is on record in the store given: another client over it does not pay again.
    model = ScriptedModel([tool_call_response(charge), "Done."])
    other = ChatClient(model, tools=tools_from(billing), idempotency=store)
    await other.prompt("charge inv-1").tool_context(CONTEXT).acall()
    assert billing.charged == ["inv-1"]


def test_a_misspelt_guard_option_is_refused_naming_the_real_one() -> None:
    model = ScriptedModel([])
    with pytest.raises(
        ConfigurationError, match=r"unknown keyword argument aproval=; did you mean approval=\?"
    ):
        ChatClient(model, aproval=Approver(Approve()))  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match=r"audit_sink=; did you mean audit=\?"):
        ChatClient.builder(model).guards(audit_sink=Sink())  # type: ignore[call-arg]
    with pytest.raises(
        ConfigurationError, match=r"idempotency_store=; did you mean idempotency=\?"
    ):
        ChatClient(model, idempotency_store=InMemoryIdempotencyStore())  # type: ignore[call-arg]
    # A guard option of the wrong kind is refused too, saying what it takes.
    with pytest.raises(ConfigurationError, match="authorize= takes a function"):
        ChatClient(model, authorize="admins")  # type: ignore[arg-type]


# --- stores shared between processes need a tenant ------------------------------------------------


class SharedSessions(InMemorySessionStore):
    """A session store standing in for one shared between processes (Redis)."""

    shared = True


class SharedIdempotency(InMemoryIdempotencyStore):
    """An idempotency store standing in for one shared between processes."""

    shared = True


def shared_search() -> ToolSearchAdvisor:
    return ToolSearchAdvisor(
        tools_from(Billing()), index=BM25ToolIndex(), session_store=SharedSessions()
    )


PER_PROCESS = r"SharedSessions, shared between processes.*InMemoryIdempotencyStore"


def test_a_shared_session_store_with_an_in_process_idempotency_store_warns() -> None:
    with pytest.warns(UserWarning, match=rf"{PER_PROCESS}.*idempotency="):
        ChatClient(ScriptedModel([]), advisors=[shared_search()])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ChatClient(ScriptedModel([]), advisors=[shared_search()], idempotency=SharedIdempotency())


async def test_with_a_shared_store_a_tenantless_request_is_refused_unless_single_tenant() -> None:
    model = ScriptedModel(["Hello.", "Hello again."])
    with pytest.warns(UserWarning, match=PER_PROCESS):
        client = ChatClient(model, advisors=[shared_search()])
    for context in ({}, {"user_id": "u-1"}, {"tenant_id": ""}):
        with pytest.raises(ConfigurationError, match=r"no tenant_id.*single_tenant=True"):
            await client.prompt("hi").conversation("c1").tool_context(context).acall()
    assert model.call_count == 0
    answer = await client.prompt("hi").conversation("c1").tool_context(CONTEXT).acall()
    assert answer.content() == "Hello."

    with pytest.warns(UserWarning, match=PER_PROCESS):
        single = ChatClient(model, advisors=[shared_search()], single_tenant=True)
    # No tenant needed; the keyed charge still needs a caller (its keys are kept per user).
    request = single.prompt("hi").conversation("c1")
    with pytest.raises(ToolContextError, match="names no caller"):
        await request.acall()
    assert model.call_count == 1
    answer = await request.tool_context({"user_id": "u-1"}).acall()
    assert answer.content() == "Hello again."
    with pytest.warns(UserWarning, match=PER_PROCESS):
        built = ChatClient.builder(model).default_advisors(shared_search()).single_tenant().build()
    assert built._defaults.single_tenant


async def test_a_request_s_own_loop_advisor_with_a_shared_store_needs_a_tenant_too() -> None:
    model = ScriptedModel(["Hello."])
    client = ChatClient(model)
    with pytest.raises(ConfigurationError, match=r"SharedSessions is shared.*no tenant_id"):
        await client.prompt("hi").conversation("c1").advisors(shared_search()).acall()
    assert model.call_count == 0
    answer = await (
        client.prompt("hi").conversation("c1").advisors(shared_search()).tool_context(CONTEXT)
    ).acall()
    assert answer.content() == "Hello."

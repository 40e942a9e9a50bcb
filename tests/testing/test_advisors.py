from __future__ import annotations

from toolrelay.client import AdvisorChain, ChatClientRequest
from toolrelay.messages import UserMessage
from toolrelay.prompt import Prompt
from toolrelay.testing import RecordingAdvisor, ScriptedModel


async def test_recording_advisor_records_and_passes_on() -> None:
    log: list[str] = []
    recorder = RecordingAdvisor("r", 3, log)
    chain = AdvisorChain.for_model(ScriptedModel(["answer", "streamed"]), [recorder])
    request = ChatClientRequest(prompt=Prompt(messages=(UserMessage(text="q"),)))
    response = await chain.next_call(request)
    chunks = [c async for c in chain.next_stream(request)]
    assert recorder.requests == [request, request]
    assert recorder.responses == [response, *chunks]
    assert log == ["r", "r"]
    assert repr(recorder) == "RecordingAdvisor(name='r', order=3)"

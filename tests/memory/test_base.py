"""A message as the SQLite and Redis repositories store it: its JSON text."""

from toolrelay.memory._base import message_from_json, message_to_json
from toolrelay.messages import UserMessage
from toolrelay.testing import every_message_kind


def test_every_message_kind_round_trips_through_its_json_text() -> None:
    for message in every_message_kind():
        assert message_from_json(message_to_json(message)) == message


def test_the_json_text_keeps_non_ascii_as_it_is() -> None:
    assert message_to_json(UserMessage(text="日本語")) == '{"role": "user", "text": "日本語"}'

"""Malformed tool calls as models send them, generated from a seed.

:func:`generate` yields :class:`GeneratedCall` values for the tools of
``test_malformed_calls.py`` (``weather``, ``refund``, ``score``, ``ping``, ``order.lines``) and
for ``admin.wipe``, a tool the manager's resolver knows but no request offers. Each call
mixes one fault of its name, of its arguments and of its id, or none:

- names: exact, a case or separator variant of a real name, a typo, an unknown name, a huge
  one (up to 10 MB), Unicode (accents, CJK, full-width, right-to-left and zero-width marks,
  lone surrogates), control characters, empty;
- arguments: valid, coercible spellings of the same value (``5``, ``"5"``, ``5.0``, ``"05"``),
  invalid JSON, JSON that is not an object, ``NaN``/``Infinity``/``1e999``, deep nesting,
  huge texts and numbers, wrong types, extra and missing keys, lone surrogates;
- ids: unique, repeated (the previous call's) or empty;
- values that are not text, as some providers deliver them and hand-built calls hold: on a
  fixed schedule that leaves the other faults' draws alone, arguments that are ``None``, a
  mapping already decoded (valid, or holding ``NaN``), a list or a number, and names that are
  ``None`` or a number.

Each carries what it may be answered with (``statuses``) and a ``recipe``: the Python
expression that builds it, shown in a failure's reproduction (a 10 MB name is shown as
``"weather" * 1_500_000``, not as itself).
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from toolrelay.execution import ToolCallStatus
from toolrelay.messages import ToolCall

OK = frozenset({ToolCallStatus.OK})
OK_OR_DENIED = frozenset({ToolCallStatus.OK, ToolCallStatus.DENIED})
# A refund id reused for another amount is refused, never answered with the earlier refund.
REFUND_ANSWERS = OK_OR_DENIED | {ToolCallStatus.IDEMPOTENCY_CONFLICT}
UNKNOWN = frozenset({ToolCallStatus.UNKNOWN_TOOL})
INVALID = frozenset({ToolCallStatus.INVALID_ARGUMENTS})

REFUND_IDS = 240  # refund ids are drawn from a small pool, so spellings of one id repeat
APPROVAL_LIMIT = 10_000  # the refund policy's bound, as the docs write it


@dataclass(frozen=True, kw_only=True)
class GeneratedCall:
    """One generated call.

    Attributes:
        call: The call.
        kind: Its faults, e.g. ``"name: typo; arguments: NaN"``.
        recipe: A Python expression that builds ``call``.
        statuses: The statuses it may be answered with.
    """

    call: ToolCall
    kind: str
    recipe: str
    statuses: frozenset[ToolCallStatus]


@dataclass(frozen=True, kw_only=True)
class _Value:
    """A generated name or argument text, with the expression that builds it."""

    text: str
    recipe: str


@dataclass(frozen=True, kw_only=True)
class _Raw:
    """A generated name or arguments that are not text, with the expression that builds it."""

    value: object
    recipe: str


def _plain(text: str) -> _Value:
    return _Value(text=text, recipe=repr(text))


def _json(value: object) -> _Value:
    return _plain(json.dumps(value, ensure_ascii=False))


# --- valid arguments, per tool -----------------------------------------------------------------

CITIES = ["Paris", "Zürich", "北京", "São Paulo", "Reykjavík", "🌧 town", "a" * 60]


def _weather(rng: random.Random) -> dict[str, object]:
    values: dict[str, object] = {"city": rng.choice(CITIES)}
    if rng.random() < 0.5:
        values["unit"] = rng.choice(["c", "f"])
    return values


def _refund(rng: random.Random) -> dict[str, object]:
    amount = rng.choice([0, 1, 99.5, 2_500, 9_999.99, 10_000, 10_000.01, 25_000, 1e9])
    values: dict[str, object] = {"refund_id": rng.randrange(REFUND_IDS), "amount": amount}
    if rng.random() < 0.3:
        values["reason"] = rng.choice(["duplicate", "damaged", "退款", ""])
    return values


def _score(rng: random.Random) -> dict[str, object]:
    return {"x": rng.randint(11, 100)}


def _lines(rng: random.Random) -> dict[str, object]:
    return {
        "items": [
            {"sku": f"SKU-{rng.randrange(100)}", "qty": rng.randint(1, 5)}
            for _ in range(rng.randint(0, 3))
        ]
    }


def _ping(rng: random.Random) -> dict[str, object]:
    return {}


@dataclass(frozen=True, kw_only=True)
class _Target:
    name: str
    valid: Callable[[random.Random], dict[str, object]]
    integer: str | None = None  # an int field, for coercible spellings and wrong types
    text: str | None = None  # a str field, for huge texts and wrong types
    number: str | None = None  # a float field, for NaN and friends
    offered: bool = True


TARGETS = (
    _Target(name="weather", valid=_weather, text="city"),
    _Target(name="refund", valid=_refund, integer="refund_id", number="amount"),
    _Target(name="score", valid=_score, integer="x"),
    _Target(name="order.lines", valid=_lines),
    _Target(name="ping", valid=_ping),
    _Target(name="admin.wipe", valid=_ping, offered=False),
)
WEIGHTS = (3, 4, 2, 1, 1, 1)


# --- names -------------------------------------------------------------------------------------


def _name(rng: random.Random, target: _Target) -> tuple[str, _Value, bool]:
    """(fault, name, whether the name may resolve to the target)."""
    name = target.name
    roll = rng.random()
    if roll < 0.55:
        return "exact", _plain(name), True
    if roll < 0.65:
        safe = name.replace(".", "__")
        variant = rng.choice(
            [
                safe,
                name.upper(),
                name.title(),
                name.replace(".", "-"),
                name.replace(".", "_"),
                "".join(part.title() for part in name.split(".")),
            ]
        )
        return "case or separator variant", _plain(variant), True
    if roll < 0.72:
        # A letter dropped or added; never a separator, whose loss is a variant above.
        at = rng.choice([i for i, c in enumerate(name) if c.isalpha()])
        typo = name[:at] + name[at + 1 :] if rng.random() < 0.5 else name[:at] + "x" + name[at:]
        return "typo", _plain(typo), False
    if roll < 0.78:
        return "unknown", _plain(rng.choice(UNKNOWN_NAMES)), False
    if roll < 0.80:
        size = rng.choice([300, 5_000, 100_000])
        return "huge", _Value(text="w" * size, recipe=f'"w" * {size:_}'), False
    if roll < 0.90:
        decorated = rng.choice(UNICODE_DECORATIONS)(name)
        return "unicode", _plain(decorated), True
    if roll < 0.96:
        return "control characters", _plain(rng.choice(CONTROL)(name)), True
    return "empty", _plain(rng.choice(["", " ", "\n"])), False


UNKNOWN_NAMES = [
    "get_wether_report",
    "delete_everything",
    "tool_search",
    "functions.weather",
    "weather.weather",
    "refund.issue",
    "admin",
    "wipe",
    "None",
    "null",
    "__init__",
    "../../etc/passwd",
    "'; DROP TABLE tools; --",
    "${jndi:ldap://x}",
    "{{name}}",
]
UNICODE_DECORATIONS: list[Callable[[str], str]] = [
    lambda n: n.replace("e", "é"),
    lambda n: "天气" if n == "weather" else n + "查询",
    lambda n: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in n),  # full width
    lambda n: "\u202e" + n,  # right-to-left override
    lambda n: n[:2] + "\u200b" + n[2:],  # zero-width space
    lambda n: n + "\ud83d",  # a lone high surrogate
    lambda n: "\udc00" + n,  # a lone low surrogate
    lambda n: n + "\U0001f600",
    lambda n: n[0] + "\u0301" + n[1:],  # a combining accent
    lambda n: n + "\ufeff",  # a byte order mark
]
CONTROL: list[Callable[[str], str]] = [
    lambda n: n + "\x00",
    lambda n: "\n" + n,
    lambda n: n + "\t",
    lambda n: n[:3] + "\x1b[31m" + n[3:],
    lambda n: n + "\r\n",
    lambda n: "\x7f" + n,
]


# --- arguments ---------------------------------------------------------------------------------


def _arguments(
    rng: random.Random, target: _Target
) -> tuple[str, _Value, frozenset[ToolCallStatus]]:
    """(fault, argument text, the statuses a call of the resolved target may get)."""
    values = target.valid(rng)
    fine = REFUND_ANSWERS if target.name == "refund" else OK
    roll = rng.random()
    if roll < 0.40:
        if not values and rng.random() < 0.5:
            return "blank", _plain(rng.choice(["", "  ", "\n"])), fine
        if rng.random() < 0.1:  # some models encode the object a second time
            return "valid, encoded twice", _plain(json.dumps(json.dumps(values))), fine
        return "valid", _json(values), fine
    if roll < 0.52 and target.integer is not None:
        return "coercible", _coercible(rng, values, target.integer), fine
    if roll < 0.56 and target.text is not None:
        values[target.text] = rng.choice(["\ud83d", "a\udc00b", "\ud800\udbff"])
        return "lone surrogates", _plain(json.dumps(values)), fine
    if roll < 0.62:
        return "invalid JSON", _invalid_json(rng, values), INVALID
    if roll < 0.68:
        return "not an object", _plain(rng.choice(NOT_OBJECTS)), INVALID
    if roll < 0.76:
        field = target.number or target.integer or target.text or "value"
        special = rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
        text = json.dumps({**values, field: 0}).replace(f'"{field}": 0', f'"{field}": {special}', 1)
        return "NaN and infinities", _plain(text), INVALID
    if roll < 0.79:
        return "deep nesting", _deep(rng), INVALID
    if roll < 0.82:
        return "huge", _huge(rng, target), INVALID
    if roll < 0.90:
        wrong = _wrong_type(rng, target)
        if wrong is not None:
            return "wrong type", _plain(json.dumps({**values, **wrong})), INVALID
    if roll < 0.95:
        extra = rng.choice([{"admin": True}, {"__proto__": {}}, {"": 1}, {"tenant_id": "globex"}])
        return "extra keys", _plain(json.dumps({**values, **extra})), INVALID
    required = [k for k in ("city", "refund_id", "amount", "x", "items") if k in values]
    if required:
        del values[rng.choice(required)]
        return "missing key", _json(values), INVALID
    return "valid", _json(values), fine


def _coercible(rng: random.Random, values: dict[str, object], field: str) -> _Value:
    number = values[field]
    assert isinstance(number, int)
    spelled = rng.choice(
        [f"{number}", f"{number}.0", f'"{number}"', f'"0{number}"', f'"{number:03d}"']
    )
    text = json.dumps({**values, field: 0}).replace(f'"{field}": 0', f'"{field}": {spelled}', 1)
    return _plain(text)


NOT_OBJECTS = ["[]", "[1, 2]", '"weather"', "5", "-0.5", "null", "true", '"[1]"', '"\\"{}\\""']


def _invalid_json(rng: random.Random, values: dict[str, object]) -> _Value:
    good = json.dumps(values)
    broken = rng.choice(
        [
            good[:-1],
            good.replace('"', "'"),
            good[:-1] + ", }" if len(good) > 2 else "{,}",
            "{city: Paris}",
            good + "}",
            good + " trailing",
            "{" * 1_000,
            "\x00",
            '{"city": "a\x01b"}',
            '{"city": "\\x41"}',
            "\ufeff" + good,
            good.replace(":", "=", 1) if ":" in good else "{=}",
        ]
    )
    try:
        json.loads(broken)
    except ValueError:
        return _plain(broken)
    return _plain("{'a': 1}")  # the mangling left it valid (an empty object, say)


def _deep(rng: random.Random) -> _Value:
    depth = rng.choice([2_000, 100_000])
    if rng.random() < 0.5:
        text = '{"items": ' + "[" * depth + "]" * depth + "}"
        return _Value(
            text=text, recipe=f"'{{\"items\": ' + '[' * {depth:_} + ']' * {depth:_} + '}}'"
        )
    text = '{"a": ' * depth + "1" + "}" * depth
    return _Value(text=text, recipe=f"'{{\"a\": ' * {depth:_} + '1' + '}}' * {depth:_}")


def _huge(rng: random.Random, target: _Target) -> _Value:
    return _huge_value(rng.choice(["text", "digits", "keys"]), target.text or "reason")


@functools.cache  # built once per kind: the same megabytes every time, generated in no time
def _huge_value(kind: str, field: str) -> _Value:
    if kind == "text":
        size = 2_500_000
        text = json.dumps({field: "x" * size})
        return _Value(text=text, recipe=f"json.dumps({{{field!r}: 'x' * {size:_}}})")
    if kind == "digits":
        text = '{"x": ' + "9" * 5_000 + "}"
        return _Value(text=text, recipe="'{\"x\": ' + '9' * 5_000 + '}'")
    keys = 200_000
    text = json.dumps({f"k{i}": i for i in range(keys)})
    return _Value(text=text, recipe=f"json.dumps({{f'k{{i}}': i for i in range({keys:_})}})")


def _wrong_type(rng: random.Random, target: _Target) -> dict[str, object] | None:
    options: list[dict[str, object]] = []
    if target.text is not None:
        options += [{target.text: 5}, {target.text: ["x"]}, {target.text: {"a": 1}}]
    if target.integer is not None:
        options += [{target.integer: 5.5}, {target.integer: []}, {target.integer: "five"}]
    if target.number is not None:
        options += [{target.number: "lots"}, {target.number: [1]}]
    if target.name == "weather":
        options.append({"unit": "kelvin"})
    if target.name == "score":
        options += [{"x": 5}, {"x": 1_000}, {"x": 10}]
    if target.name == "order.lines":
        options += [{"items": {}}, {"items": [{"sku": "a", "qty": 0}]}, {"items": [1]}]
    return rng.choice(options) if options else None


# --- calls -------------------------------------------------------------------------------------


TEN_MEGABYTES_EVERY = 2_500
"""Every 2,500th call has a 10 MB name: enough to show a name that is looked up, folded or
compared before its length is checked, few enough to keep a campaign quick."""


def _ten_megabytes(target: _Target) -> tuple[str, _Value, bool]:
    times = 10_000_000 // len(target.name)
    value = _Value(text=target.name * times, recipe=f"{target.name!r} * {times:_}")
    return "huge (10 MB)", value, False


NOT_TEXT_EVERY = 25
"""Every 25th call's arguments are not text, and every 200th call's name (``_not_text``)."""
NAME_NOT_TEXT_EVERY = 200


def _arguments_not_text(
    rng: random.Random, target: _Target
) -> tuple[str, _Raw, frozenset[ToolCallStatus]]:
    """(fault, arguments that are not text, the statuses a call of the target may get)."""
    values = target.valid(rng)
    fine = REFUND_ANSWERS if target.name == "refund" else OK
    roll = rng.random()
    if roll < 0.3:  # a provider's "no arguments"
        return "None", _Raw(value=None, recipe="None"), fine if not values else INVALID
    if roll < 0.6:
        return "a mapping", _Raw(value=values, recipe=repr(values)), fine
    if roll < 0.7 and target.number is not None:
        values[target.number] = float("nan")
        recipe = repr(values).replace("nan", 'float("nan")')
        return "a mapping with NaN", _Raw(value=values, recipe=recipe), INVALID
    if roll < 0.85:
        return "a list", _Raw(value=[values], recipe=repr([values])), INVALID
    number = rng.choice([3, -1.5, True])
    return "a number", _Raw(value=number, recipe=repr(number)), INVALID


def _name_not_text(rng: random.Random) -> _Raw:
    value = rng.choice([None, 7, ["ping"]])
    return _Raw(value=value, recipe=repr(value))


def generate(seed: int, count: int) -> Iterator[GeneratedCall]:
    """``count`` calls from ``seed``; the same seed always gives the same calls."""
    rng = random.Random(seed)
    # The values that are not text come from a generator of their own, so the other faults
    # draw the same cases with and without them.
    shapes = random.Random(seed + 2)
    previous_id = "c0"
    for n in range(count):
        target = rng.choices(TARGETS, WEIGHTS)[0]
        name_fault, name, may_resolve = _name(rng, target)
        written: _Value | _Raw = name
        if n % TEN_MEGABYTES_EVERY == TEN_MEGABYTES_EVERY - 1:
            name_fault, name, may_resolve = _ten_megabytes(target)
            written = name
        arguments_fault, arguments, statuses = _arguments(rng, target)
        given: _Value | _Raw = arguments
        if n % NOT_TEXT_EVERY == NOT_TEXT_EVERY - 1:
            arguments_fault, given, statuses = _arguments_not_text(shapes, target)
        if n % NAME_NOT_TEXT_EVERY == NAME_NOT_TEXT_EVERY // 2:
            name_fault, written, may_resolve = "not text", _name_not_text(shapes), False
        if not target.offered:
            statuses = UNKNOWN  # offered nowhere: never run, whatever it is called
        elif not may_resolve:
            statuses = UNKNOWN
        elif name_fault != "exact":
            statuses = statuses | UNKNOWN  # a variant resolves only when it is unambiguous
        id_roll = rng.random()
        call_id = previous_id if id_roll < 0.1 else "" if id_roll < 0.2 else f"c{n}"
        previous_id = call_id or previous_id
        yield GeneratedCall(
            call=ToolCall(id=call_id, name=_given(written), arguments=_given(given)),
            kind=f"{target.name}: name {name_fault}; arguments {arguments_fault}",
            recipe=f"ToolCall(id={call_id!r}, name={written.recipe}, arguments={given.recipe})",
            statuses=statuses,
        )


def _given(value: _Value | _Raw) -> Any:
    """What the call holds: the text, or the value that is not text (typed ``Any``)."""
    return value.text if isinstance(value, _Value) else value.value

"""JSON as Kafka's tools read it: Jackson's `readTree` (with its exact error messages) and the
`DecodeJson` accessors of Kafka's `Json` helper (reference: kafka-reassign-and-log-dirs.md §1.4).

Kafka's tools fail on a malformed file with Jackson's message and location; the accessors fail
with DecodeJson's messages. Both print as `Error: <message>` (kafka_error).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from kjbod.common.java import INT32_MAX, INT32_MIN, java_double, kafka_error
from kjbod.errors import UserError

T = TypeVar("T")


class _Missing:
    """Jackson's MissingNode (what readTree gives for blank input); it prints as nothing."""


MISSING = _Missing()
_WHITESPACE = " \t\n\r"
_LOCATION = " at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {line}, column: {column}]"
_VALUE_EXPECTED = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"


class _NonStandardToken(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _reject_constant(token: str) -> Any:
    raise _NonStandardToken(token)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def jackson_text(value: Any) -> str:
    """`JsonNode.toString()`: compact JSON, doubles as Java prints them."""
    if value is MISSING:
        return ""
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jackson_text(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(jackson_text(v) for v in value) + "]"
    if isinstance(value, float):
        return java_double(value)
    return json.dumps(value, ensure_ascii=False)


def _container_at(text: str, position: int) -> str | None:
    """The innermost JSON container open at `position` ("Object" or "Array")."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text[:position]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("Object" if char == "{" else "Array")
        elif char in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _char_text(char: str) -> str:
    if ord(char) < 32:
        return f"(CTRL-CHAR, code {ord(char)})"
    return f"('{char}' (code {ord(char)}))"


def _syntax_error(text: str, exc: json.JSONDecodeError) -> UserError:
    """Jackson's message for the common syntax errors (the first line and its location)."""
    position, message = exc.pos, exc.msg
    if message.startswith("Unterminated string") or position >= len(text):
        container = _container_at(text, len(text))
        if message.startswith("Unterminated string"):
            detail = "Unexpected end-of-input: was expecting closing quote for a string value"
        elif container:
            detail = f"Unexpected end-of-input: expected close marker for {container}"
        else:
            detail = "Unexpected end-of-input"
        lines = text.split("\n")
        return kafka_error(detail + _LOCATION.format(line=len(lines), column=len(lines[-1]) + 1))
    char = text[position]
    column = exc.colno + 1
    if message.startswith("Expecting property name"):
        detail = f"Unexpected character {_char_text(char)}: was expecting double-quote to start field name"
    elif message.startswith("Expecting ':'"):
        detail = f"Unexpected character {_char_text(char)}: was expecting a colon to separate field name and value"
    elif message.startswith("Expecting ','"):
        detail = f"Unexpected character {_char_text(char)}: was expecting comma to separate {_container_at(text, position) or 'Object'} entries"
    elif message.startswith("Invalid control character"):
        detail = f"Illegal unquoted character {_char_text(char)}: has to be escaped using backslash to be included in string value"
    elif message.startswith(("Invalid \\escape", "Invalid \\uXXXX")):
        escape = text[position + 1 : position + 2] or "\\"
        detail = f"Unrecognized character escape {_char_text(escape)[1:-1]}"
        column += 1
    elif char.isalpha():
        token = re.match(r"[^\s,:\[\]{}\"]+", text[position:]).group(0)  # type: ignore[union-attr]
        detail = f"Unrecognized token '{token}': was expecting {_VALUE_EXPECTED}"
        column = exc.colno + len(token)
    else:
        detail = f"Unexpected character {_char_text(char)}: expected a valid value {_VALUE_EXPECTED}"
    return kafka_error(detail + _LOCATION.format(line=exc.lineno, column=column))


def read_json_tree(text: str) -> Any:
    """`Json.tryParseFull`: Jackson's readTree. Empty input fails; blank input is a
    MissingNode; anything after the first value is ignored (FAIL_ON_TRAILING_TOKENS is off)."""
    if text == "":
        raise kafka_error("The input string shouldn't be empty")
    start = 0
    while start < len(text) and text[start] in _WHITESPACE:
        start += 1
    if start == len(text):
        return MISSING
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except _NonStandardToken as exc:
        raise kafka_error(f"Non-standard token '{exc.token}': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow") from None
    except json.JSONDecodeError as exc:
        raise _syntax_error(text, exc) from None
    return value


def read_json_fast(text: str) -> Any | None:
    """The tree of a well-formed document, read several times faster than read_json_tree, or
    None when orjson refuses it (trailing text, NaN, lone surrogates...). It is the tree
    read_json_tree gives except for integers beyond 64 bits, which become floats: a caller
    that finds anything but the types it expects must read the text again with read_json_tree,
    for Jackson's messages."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def as_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise kafka_error(f"Expected JSON object, received {jackson_text(value)}")
    return value


def as_array(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise kafka_error(f"Expected JSON array, received {jackson_text(value)}")
    return value


def field(obj: dict[str, Any], name: str) -> Any:
    if name not in obj:
        raise kafka_error(f"No such field exists: `{name}`")
    return obj[name]


def decode_int(value: Any) -> int:
    """DecodeJson.DecodeInteger: Jackson's isInt (a JSON integer within int32)."""
    if type(value) is not int or not INT32_MIN <= value <= INT32_MAX:
        raise kafka_error(f"Expected `Integer` value, received {jackson_text(value)}")
    return value


def decode_string(value: Any) -> str:
    if not isinstance(value, str):
        raise kafka_error(f"Expected `String` value, received {jackson_text(value)}")
    return value


def decode_list(value: Any, decode: Callable[[Any], T]) -> list[T]:
    if not isinstance(value, list):
        raise kafka_error(f"Expected `JSON array` value, received {jackson_text(value)}")
    return [decode(item) for item in value]

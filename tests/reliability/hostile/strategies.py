"""Hypothesis strategies for hostile input shared by the targets."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

#: any JSON value, a few levels deep
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)

#: text that likes to break things: control characters, surrogate-free unicode, separators
nasty_text = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "../../etc/passwd",
            "..",
            "/",
            "\\..\\..\\",
            "a" * 5000,
            "ｆｕｌｌｗｉｄｔｈ",
            "\u202eevil",
            "'; DROP TABLE x; --",
            "$(rm -rf /)",
            "%s%n%x",
            "null",
            "NaN",
        ]
    ),
)


class Blob(bytes):
    """Bytes whose repr stays short (hypothesis prints failing examples)."""

    def __repr__(self) -> str:
        head = bytes(self[:60])
        return f"Blob({len(self)} bytes: {head!r}{'...' if len(self) > 60 else ''})"


def deep(depth: int, kind: str = "list") -> str:
    """A JSON text nested ``depth`` levels deep."""
    if kind == "list":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


@st.composite
def mutated(draw: st.DrawFn, original: bytes) -> bytes:
    """``original`` truncated, with bytes flipped, inserted or deleted."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        op = draw(st.sampled_from(["truncate", "flip", "insert", "delete"]))
        at = draw(st.integers(0, len(data) - 1))
        if op == "truncate":
            del data[at:]
        elif op == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[at : at + draw(st.integers(1, 16))]
    return bytes(data)

"""Text spaces for sdgym: a charset that covers real text, and correct shared-memory vector envs.

Gymnasium's :class:`~gymnasium.spaces.Text` defaults to an alphanumeric charset, far too narrow for
the prose, punctuation and product names that sdgym environments emit. :class:`UnicodeText` uses
every printable character of the Unicode Basic Multilingual Plane plus newline and tab, and
:func:`to_text` maps any string into that charset (NFC-normalised, unsupported characters replaced
by U+FFFD, truncated to ``max_length``), so observations always lie in the space.

Gymnasium's default shared-memory path for ``Text`` (used by ``gym.make_vec(...,
vectorization_mode="async")``) decodes the buffer once, when the vector env is built, so every
later step returns stale strings. ``UnicodeText`` registers its own shared-memory functions that
store code points with a length prefix and decode on every read.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import shared_memory as gym_shared_memory

REPLACEMENT_CHARACTER = "\ufffd"


@lru_cache(maxsize=1)
def text_charset() -> frozenset[str]:
    """Printable characters of the Basic Multilingual Plane, plus ``\\n`` and ``\\t``."""
    chars = {"\n", "\t"}
    for code in range(0x20, 0x10000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        if char.isprintable():
            chars.add(char)
    return frozenset(chars)


@lru_cache(maxsize=1)
def _charset_tables() -> dict[str, Any]:
    """Gymnasium ``Text``'s character tables for :func:`text_charset`, built once."""
    prototype = Text(1, charset=text_charset())
    return {name: getattr(prototype, name) for name in ("_char_set", "_char_list", "_char_index", "_char_str")}


class UnicodeText(Text):
    """A :class:`~gymnasium.spaces.Text` space over :func:`text_charset` (printable BMP text).

    Example:
        >>> space = UnicodeText(max_length=64)
        >>> space.contains("Café — 3 × 4 = 12\\n")
        True
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        # Text builds sorted lists and an index dict over the ~60k characters per instance
        # (0.2 s); build them once per process and share them (they are never mutated).
        super().__init__(max_length, min_length=min_length, charset="a", seed=seed)
        self.__dict__.update(_charset_tables())

    def __repr__(self) -> str:
        return f"UnicodeText(min_length={self.min_length}, max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and other.min_length == self.min_length
            and other.max_length == self.max_length
        )

    def __hash__(self) -> int:
        return hash(("UnicodeText", self.min_length, self.max_length))

    def __deepcopy__(self, memo: dict[int, Any]) -> UnicodeText:
        """Share the (never mutated) charset tables; copy only the RNG state.

        A plain deepcopy copies ~60k characters' tables (0.2 s), and vector envs deepcopy the
        single space once per sub-env, so 64 sub-envs cost 15 s before this.
        """
        import copy

        clone = object.__new__(UnicodeText)
        clone.__dict__.update(self.__dict__)
        clone._np_random = copy.deepcopy(self._np_random, memo)
        memo[id(self)] = clone
        return clone


def to_text(value: Any, max_length: int) -> str:
    """Map ``value`` into :class:`UnicodeText`'s charset: NFC, U+FFFD for the rest, truncated."""
    text = unicodedata.normalize("NFC", str(value))
    charset = text_charset()
    if not all(char in charset for char in text):
        text = "".join(char if char in charset else REPLACEMENT_CHARACTER for char in text)
    return text[:max_length]


class SharedTextBatch(Sequence[str]):
    """Live view of ``n`` strings in a shared int32 buffer (length prefix + code points).

    ``deepcopy`` (what ``AsyncVectorEnv`` applies when ``copy=True``) returns a plain tuple.
    """

    def __init__(self, buffer: Any, n: int, max_length: int) -> None:
        self._buffer = buffer
        self._n = n
        self._max_length = max_length

    def _rows(self) -> np.ndarray:
        data = np.frombuffer(self._buffer.get_obj(), dtype=np.int32)
        return data.reshape((self._n, self._max_length + 1))

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        row = self._rows()[index]
        length = int(row[0])
        return "".join(map(chr, row[1 : 1 + length].tolist()))

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(self._n))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"

    def __deepcopy__(self, memo: dict) -> tuple[str, ...]:
        return tuple(self)


@gym_shared_memory.create_shared_memory.register(UnicodeText)
def _create_unicode_text_memory(space: UnicodeText, n: int = 1, ctx: Any = None) -> Any:
    import multiprocessing as mp

    ctx = ctx or mp
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1))


@gym_shared_memory.read_from_shared_memory.register(UnicodeText)
def _read_unicode_text_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedTextBatch:
    return SharedTextBatch(shared_memory, n, space.max_length)


@gym_shared_memory.write_to_shared_memory.register(UnicodeText)
def _write_unicode_text_memory(
    space: UnicodeText, index: int, values: str, shared_memory: Any
) -> None:
    text = to_text(values, space.max_length)
    width = space.max_length + 1
    row = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * width : (index + 1) * width]
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.int32) if text else np.zeros(0, np.int32)
    row[0] = len(codes)
    row[1 : 1 + len(codes)] = codes


"""UnicodeText: charset coverage and the shared-memory path of async vector envs."""

from __future__ import annotations

import copy

from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

from sdgym.spaces import REPLACEMENT_CHARACTER, UnicodeText, text_charset, to_text


def test_charset_covers_real_text() -> None:
    space = UnicodeText(max_length=200)
    for text in ("Café au lait — 3 × 4 ≤ 12\n\tok", "Ünïcödé ниже 中文 ¥€£", "<b>[SEP]</b> & 'q'"):
        assert space.contains(text)
    assert not space.contains("\x00")
    assert not space.contains("x" * 201)


def test_to_text_maps_into_the_space() -> None:
    space = UnicodeText(max_length=10)
    mapped = to_text("a\x00b🦄cdefghijklmnop", 10)
    assert space.contains(mapped)
    assert mapped.startswith(f"a{REPLACEMENT_CHARACTER}b{REPLACEMENT_CHARACTER}")
    assert len(mapped) == 10


def test_shared_memory_reads_are_live_not_stale() -> None:
    space = UnicodeText(max_length=32)
    memory = create_shared_memory(space, n=2)
    batch = read_from_shared_memory(space, memory, n=2)
    write_to_shared_memory(space, 0, "first ünï", memory)
    write_to_shared_memory(space, 1, "", memory)
    assert tuple(batch) == ("first ünï", "")
    write_to_shared_memory(space, 0, "second", memory)
    assert batch[0] == "second"
    snapshot = copy.deepcopy(batch)
    write_to_shared_memory(space, 0, "third", memory)
    assert snapshot == ("second", "") and isinstance(snapshot, tuple)
    assert batch[0] == "third"


def test_spaces_compare_by_bounds() -> None:
    assert UnicodeText(max_length=5) == UnicodeText(max_length=5)
    assert UnicodeText(max_length=5) != UnicodeText(max_length=6)
    assert "UnicodeText" in repr(UnicodeText(max_length=5))


def test_deepcopy_shares_charset_but_not_rng() -> None:
    import copy

    space = UnicodeText(max_length=16, seed=3)
    clone = copy.deepcopy(space)
    assert clone == space and clone is not space
    assert clone.character_set is space.character_set  # immutable, shared
    assert clone.contains("Café — 3 × 4") and not clone.contains("x" * 17)
    assert clone.sample() == space.sample()  # same RNG state copied ...
    clone.sample()
    assert clone.sample() != space.sample()  # ... but advanced independently


def test_instances_share_one_set_of_charset_tables() -> None:
    a, b = UnicodeText(max_length=8), UnicodeText(max_length=32, min_length=2)
    assert a.character_set is b.character_set and a.character_set == text_charset()
    assert b.contains("ab — ü") and not b.contains("a") and not a.contains(chr(0xD800) + "x")

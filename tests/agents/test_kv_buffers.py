"""KVBuffers: decode caches laid into memory reused across calls, rows reordered between two
buffers."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from agents.backends.kv_buffers import KVBuffers  # noqa: E402

SHAPE = (4, 2, 6, 3)


def _filled(cache) -> list[torch.Tensor]:
    for index, layer in enumerate(cache.layers):
        layer.keys.copy_(torch.arange(layer.keys.numel()).view_as(layer.keys) + 1000 * index)
        layer.values.copy_(-layer.keys)
    return [t.clone() for layer in cache.layers for t in (layer.keys, layer.values)]


def test_a_released_cache_s_memory_is_the_next_call_s() -> None:
    buffers = KVBuffers()
    first = buffers.cache(3, SHAPE, torch.float32, torch.device("cpu"))
    pointer = first.layers[0].keys.data_ptr()
    held = buffers.cache(3, SHAPE, torch.float32, torch.device("cpu"))  # first still holds them
    assert held.layers[0].keys.data_ptr() != pointer
    first.release()
    first.release()  # twice is harmless
    again = buffers.cache(3, (2, 2, 5, 3), torch.float32, torch.device("cpu"))  # smaller: fits
    assert again.layers[0].keys.data_ptr() == pointer
    assert [tuple(layer.keys.shape) for layer in again.layers] == [(2, 2, 5, 3)] * 3
    pointers = {t.data_ptr() for layer in again.layers for t in (layer.keys, layer.values)}
    assert len(pointers) == 6  # every layer's keys and values their own memory
    again.release()
    grown = buffers.cache(3, (8, 2, 6, 3), torch.float32, torch.device("cpu"))
    assert grown.layers[0].keys.shape == (8, 2, 6, 3)
    assert grown.layers[0].keys.is_contiguous()


def test_reordering_keeps_the_rows_asked_for_in_the_other_buffer() -> None:
    buffers = KVBuffers()
    cache = buffers.cache(2, SHAPE, torch.float32, torch.device("cpu"))
    before = _filled(cache)
    pointer = cache.layers[0].keys.data_ptr()
    index = torch.tensor([3, 3, 0, 1, 1, 1])  # repeats (a prompt's rows) and drops (row 2)
    cache.reorder_cache(index)
    after = [t for layer in cache.layers for t in (layer.keys, layer.values)]
    assert all(torch.equal(a, b[index]) for a, b in zip(after, before))
    assert cache.layers[0].keys.data_ptr() != pointer
    cache.reorder_cache(torch.tensor([5, 0]))  # back into the first buffer
    assert cache.layers[0].keys.data_ptr() == pointer
    assert torch.equal(cache.layers[1].values, before[3][torch.tensor([1, 3])])


def test_a_reorder_copies_the_written_columns_and_the_shared_prefix_into_row_0_only() -> None:
    buffers = KVBuffers()
    cache = buffers.cache(2, SHAPE, torch.float32, torch.device("cpu"))
    before = _filled(cache)  # every entry differs, so a copy from a wrong place shows
    cache.written, cache.shared = 5, 2  # column 5 not yet written; columns 0-1 a common prefix
    index = torch.tensor([2, 0, 2])
    cache.reorder_cache(index)
    after = [t for layer in cache.layers for t in (layer.keys, layer.values)]
    for got, was in zip(after, before):
        assert torch.equal(got[:, :, 2:5], was[index, :, 2:5])
        assert torch.equal(got[0, :, :2], was[0, :, :2])  # row 0's prefix, not row 2's
    cache.reorder_cache(torch.tensor([1, 1]))  # back into the first buffer: row 0 keeps it
    assert torch.equal(cache.layers[1].values[:, :, 2:5], before[3][torch.tensor([0, 0]), :, 2:5])
    assert torch.equal(cache.layers[1].values[0, :, :2], before[3][0, :, :2])


def test_a_cache_that_cannot_be_built_gives_the_buffers_back() -> None:
    buffers = KVBuffers()
    with pytest.raises(RuntimeError):
        buffers.cache(2, (2, 2, -1, 3), torch.float32, torch.device("cpu"))  # a bad shape
    cache = buffers.cache(2, SHAPE, torch.float32, torch.device("cpu"))
    assert cache._buffers is buffers  # the reused memory, not a fresh one
    cache.release()


def test_keeping_rows_moves_only_the_rows_beyond_the_live_count_into_the_dropped_slots() -> None:
    buffers = KVBuffers()
    cache = buffers.cache(2, (6, 2, 6, 3), torch.float32, torch.device("cpu"))
    before = _filled(cache)  # every entry differs, so a copy from a wrong place shows
    cache.written, cache.shared = 5, 2  # column 5 not yet written; columns 0-1 a common prefix
    pointer = cache.layers[0].keys.data_ptr()
    order = cache.keep_rows([1, 2, 4, 5])  # rows 0 and 3 finished
    assert order == [4, 1, 2, 5]  # rows 4 and 5 fill slots 0 and 3; rows 1 and 2 stay put
    after = [t for layer in cache.layers for t in (layer.keys, layer.values)]
    assert cache.layers[0].keys.data_ptr() == pointer  # in place: no other buffer
    for got, was in zip(after, before):
        assert got.shape[0] == 4
        assert torch.equal(got[:, :, 2:5], was[torch.tensor(order), :, 2:5])
        assert torch.equal(got[0, :, :2], was[0, :, :2])  # row 0's prefix, not row 4's
        assert torch.equal(got[1:3], was[1:3])  # rows that stay are not touched at all
    assert cache.keep_rows([0, 1, 2, 3]) == [0, 1, 2, 3]  # nothing finished: nothing moves
    assert cache.keep_rows([3]) == [3]
    assert torch.equal(cache.layers[1].values[0, :, 2:5], before[3][5, :, 2:5])


@pytest.mark.parametrize("live", [[], [2, 1], [0, 0], [0, 9], [-1, 2]])
def test_keeping_rows_refuses_what_is_not_ascending_rows_of_the_cache(live) -> None:
    cache = KVBuffers().cache(1, SHAPE, torch.float32, torch.device("cpu"))
    with pytest.raises(ValueError, match="keep_rows needs ascending row indices"):
        cache.keep_rows(live)

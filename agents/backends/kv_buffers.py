"""A decode KV cache in memory that is reused from one generate call to the next.

A fresh key/value cache for a batch of 64 prompts of ~250 tokens is ~37 MB for the shipped
4-layer model. glibc gives blocks that large fresh pages on every allocation (it returns them
to the system when they are freed), so zero-filling a new transformers ``StaticCache`` cost
about 50 ms of page faults per call on this machine, ~8% of a 64-prompt generation.
:class:`KVBuffers` keeps two flat buffers alive across calls and lays every call's cache into
them: one holds the cache, the other receives it when rows are reordered (a prompt's cache
copied to the rows that repeat it), so a call allocates no cache memory once the buffers have
grown to its size. Finished rows are dropped in place (:meth:`ReusedKVCache.keep_rows`).

:class:`ReusedKVCache` is the cache :class:`~agents.backends.lean_decode.LeanDecoder` prefills
and steps on: per layer ``keys``/``values`` ``[B, Hkv, L, D]`` and ``reorder_cache(index)``, the
part of transformers' cache interface the backend uses. One call at a time owns the buffers
(:meth:`KVBuffers.cache` hands out fresh memory while another cache holds them).

A reorder copies only what a decode still reads: the columns written so far
(:attr:`ReusedKVCache.written`, kept by the decoder) and, of the leading columns every row
shares (:attr:`ReusedKVCache.shared`, a prompt prefix that attention reads from row 0 alone),
row 0's copy only. On the 64-prompt Search-QA test panel (a 119-token shared prefix, at most 43
tokens after it) a reorder midway through 32 new tokens copies ~30% of the rows' memory; the call
measured 1.02x (0.93-1.20) against full copies, within noise: four reorders cost ~3 ms of a
~290 ms call (10 A/B rounds in one process, 2026-12-03; identical tokens).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import torch


@dataclass
class KVLayer:
    """One layer's ``keys`` and ``values``, ``[B, Hkv, L, D]`` each."""

    keys: torch.Tensor
    values: torch.Tensor


class KVBuffers:
    """Two flat buffers that :class:`ReusedKVCache` objects are laid into (see the module)."""

    def __init__(self) -> None:
        self._flat: list[torch.Tensor | None] = [None, None]
        self._lock = threading.Lock()

    def cache(self, layers: int, shape: tuple[int, int, int, int], dtype: torch.dtype,
              device: torch.device) -> ReusedKVCache:
        """A cache of ``layers`` layers of keys and values shaped ``shape`` (``[B, Hkv, L, D]``;
        contents undefined), in the reused buffers unless another cache holds them."""
        owned = self._lock.acquire(blocking=False)
        try:
            return ReusedKVCache(self if owned else None, layers, shape, dtype, device)
        except BaseException:
            if owned:
                self._lock.release()
            raise

    def _take(self, side: int, numel: int, dtype: torch.dtype,
              device: torch.device) -> torch.Tensor:
        """The first ``numel`` entries of buffer ``side``, grown (reallocated) when too small
        or of another dtype or device."""
        flat = self._flat[side]
        if flat is None or flat.numel() < numel or flat.dtype != dtype or flat.device != device:
            flat = self._flat[side] = torch.empty(numel, dtype=dtype, device=device)
        return flat[:numel]

    def _release(self) -> None:
        self._lock.release()


class ReusedKVCache:
    """Per-layer keys and values for a decode (see the module); :meth:`release` when done."""

    def __init__(self, buffers: KVBuffers | None, layers: int,
                 shape: tuple[int, int, int, int], dtype: torch.dtype,
                 device: torch.device) -> None:
        self._buffers, self._side = buffers, 0
        self._dtype, self._device = dtype, device
        self.layers = self._lay_out(0, layers, shape)
        self.written = shape[2]
        """Columns ``[0, written)`` hold keys and values (the rest is never read before it is
        written); a reorder copies only these."""
        self.shared = 0
        """Columns ``[0, shared)`` are the same in every row and read from row 0 only: a
        reorder keeps them in row 0 alone (the other rows' copies are then undefined)."""

    def _lay_out(self, side: int, layers: int, shape: tuple[int, ...]) -> list[KVLayer]:
        size = shape[0] * shape[1] * shape[2] * shape[3]
        if self._buffers is None:
            flat = torch.empty(2 * layers * size, dtype=self._dtype, device=self._device)
        else:
            flat = self._buffers._take(side, 2 * layers * size, self._dtype, self._device)
        views = flat.view(2 * layers, *shape).unbind(0)
        return [KVLayer(views[2 * i], views[2 * i + 1]) for i in range(layers)]

    def reorder_cache(self, index: torch.Tensor) -> None:
        """Keep rows ``index`` of every layer, in that order (repeats allowed): of the columns
        :attr:`written`, and of the :attr:`shared` ones row 0's only."""
        side = 1 - self._side
        shape = (len(index), *self.layers[0].keys.shape[1:])
        target = self._lay_out(side, len(self.layers), shape)
        shared, written = self.shared, self.written
        for old, new in zip(self.layers, target):
            for source, copy in ((old.keys, new.keys), (old.values, new.values)):
                if shared:
                    copy[0, :, :shared] = source[0, :, :shared]
                torch.index_select(source[:, :, shared:written], 0, index,
                                   out=copy[:, :, shared:written])
        self.layers, self._side = target, side

    def keep_rows(self, live: Sequence[int]) -> list[int]:
        """Drop every row not in ``live`` (ascending row indices) in place, copying as little as
        possible: the rows that stay in the first ``len(live)`` slots stay where they are, and
        each one beyond moves into a dropped row's slot below (its :attr:`written` columns past
        the :attr:`shared` prefix only; row 0's prefix stays). Returns, for each row of the
        smaller cache, the row it was (the order the caller's per-row state must follow).

        A cut then costs a copy of the rows that move (at most as many as were dropped), where
        :meth:`reorder_cache` copies every row kept."""
        size = len(live)
        if (size == 0 or list(live) != sorted(set(live)) or live[0] < 0
                or live[-1] >= self.layers[0].keys.shape[0]):
            raise ValueError(f"keep_rows needs ascending row indices of this cache, got {live}")
        kept = set(live)
        holes = [row for row in range(size) if row not in kept]
        movers = [row for row in live if row >= size]
        order = list(range(size))
        for hole, mover in zip(holes, movers):
            order[hole] = mover
        if holes:
            device = self.layers[0].keys.device
            into = torch.tensor(holes, device=device)
            source = torch.tensor(movers, device=device)
            columns = slice(self.shared, self.written)
            for layer in self.layers:
                for tensor in (layer.keys, layer.values):
                    tensor[:, :, columns].index_copy_(0, into, tensor[source, :, columns])
        self.layers = [KVLayer(layer.keys[:size], layer.values[:size]) for layer in self.layers]
        return order

    def release(self) -> None:
        """Give the buffers back for the next call (this cache's contents may then change)."""
        if self._buffers is not None:
            buffers, self._buffers = self._buffers, None
            buffers._release()

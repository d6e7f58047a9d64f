"""Let a process reuse the memory it frees instead of taking fresh pages for every big tensor.

glibc's allocator returns freed memory to the system once more than a few MB lie free at the
top of its heap (the trim threshold follows the largest block freed, at most 64 MB) and maps
every block over its mmap threshold afresh. A CPU torch process that allocates and frees
activations of a few MB per op then zero-fills new pages all the time: measured on this 2-core
machine, a 64-prompt generation with the shipped model took ~25,000-40,000 page faults per call
(100-160 MB of fresh pages) and ran about 10% slower than with none.

:func:`keep_freed_memory` fixes both thresholds (``mallopt``): blocks up to
:data:`MMAP_THRESHOLD` come from the heap, and up to :data:`TRIM_THRESHOLD` of free heap stays
with the process. The process's resident memory then stays near its peak instead of shrinking
after it. sdgym's own processes call it at start (the ``sdgym`` command and the benchmark's
worker processes); a library user of the backends can call it too. Setting the environment
variable ``SDGYM_KEEP_FREED_MEMORY=0`` turns it off. It does nothing on other C libraries or
systems.
"""

from __future__ import annotations

import ctypes
import os
import sys

MMAP_THRESHOLD = 32 << 20
"""Blocks up to this size come from the heap (glibc's largest allowed value)."""
TRIM_THRESHOLD = 512 << 20
"""Free memory at the top of the heap that is kept for later allocations."""
ENVIRONMENT_SWITCH = "SDGYM_KEEP_FREED_MEMORY"

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
_applied = False


def keep_freed_memory() -> bool:
    """Set glibc's thresholds as the module describes (once per process); whether they are
    set (False where switched off, on another C library or system)."""
    global _applied
    if _applied:
        return True
    if os.environ.get(ENVIRONMENT_SWITCH, "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it (musl's mallopt does nothing)
    except (OSError, AttributeError):
        return False
    _applied = (libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
    return _applied

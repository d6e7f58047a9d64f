"""keep_freed_memory: freed blocks stay with the process instead of being trimmed and faulted in
again (counted as minor page faults in a fresh child process)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's allocator only")

CHILD = r"""
import json, resource
from sdgym.process_memory import keep_freed_memory
applied = keep_freed_memory()
faults = []
for _ in range(4):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    blocks = [bytearray(10 << 20) for _ in range(4)]  # 40 MB held, then freed together
    del blocks
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps({"applied": applied, "faults": faults}))
"""


def _child(switch: str) -> dict:
    env = {key: value for key, value in os.environ.items()  # the allocator's own settings
           if not key.startswith("MALLOC_") and key != "GLIBC_TUNABLES"}
    env["SDGYM_KEEP_FREED_MEMORY"] = switch
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_freed_memory_is_reused_without_page_faults() -> None:
    kept, default = _child("1"), _child("0")
    assert kept["applied"] and not default["applied"]
    pages = (40 << 20) // 4096
    # switched off, glibc trims the 40 MB and faults it in again every round
    assert min(default["faults"][1:]) > pages // 2, default
    assert max(kept["faults"][1:]) < pages // 20, kept  # kept: the second round on reuses it

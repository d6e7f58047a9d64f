"""Benchmark processes start the way sdgym's own processes do (``sdgym`` command, benchmark
workers): with freed memory kept for reuse (:mod:`sdgym.process_memory`). Both sides of every
A/B comparison run in this process, so they share the setting."""

from sdgym.process_memory import keep_freed_memory

keep_freed_memory()

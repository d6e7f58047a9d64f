"""The top layer: the evaluation protocol and its report (:mod:`benchmarks.protocol`), beside the
pytest-benchmark speed suites (``benchmarks/test_*_bench.py``)."""

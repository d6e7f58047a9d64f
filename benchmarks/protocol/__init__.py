"""The benchmark protocol: the run matrix of (kind, env, method, seed) cells (:mod:`.matrix`), run
here, in worker processes or on Ray (:mod:`.process_dispatch`, :mod:`.ray_dispatch`), its cost
projection (:mod:`.projection`), statistics and report (:mod:`.statistics`, :mod:`.report`), and the
``sdgym benchmark`` / ``sdgym baseline`` commands (:mod:`.cli`, :mod:`.baseline_cli`). Presets:
``presets/<name>-bench.toml``."""

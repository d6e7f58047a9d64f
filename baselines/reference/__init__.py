"""Reference baselines: random and expert policies, MaskablePPO over admissible slots.

``policies`` (random, expert), ``maskable_ppo`` and ``slot_policy`` (sb3-contrib, the ``sb3``
extra), ``run`` (build one and evaluate it: :func:`~baselines.reference.run.run_baseline`).
"""

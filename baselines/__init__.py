"""Training and reference baselines: GRPO core, teacher heads, trainer, reference policies."""

"""The reference-baseline table of ``sdgym baseline --table``: one row per env, one column per
policy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from baselines.reference.run import ALGOS


def baseline_table(records: Sequence[dict[str, Any]], missing: Sequence[str] = ()) -> str:
    """Markdown: one row per env, one ``success mean ± std`` column per policy (and the split)."""
    algos = [a for a in ALGOS if any(r["method"] == a for r in records)]
    by_env: dict[str, dict[str, dict[str, Any]]] = {}
    for record in records:
        by_env.setdefault(record["env_id"], {})[record["method"]] = record
    lines = ["| env | split | " + " | ".join(algos) + " |",
             "|---|---|" + "---|" * len(algos)]
    for env_id, row in by_env.items():
        split = next(iter(row.values()))["split"]
        cells = [f"{row[a]['success_mean']:.3f} ± {row[a]['success_std']:.3f}" if a in row else "–"
                 for a in algos]
        lines.append(f"| {env_id} | {split} | " + " | ".join(cells) + " |")
    lines += ["", "Success rate, mean ± std over rollout seeds; privileged info hidden except for "
              "the expert. MaskablePPO trains on the easy training split first."]
    lines += [f"- missing: {m}" for m in missing]
    return "\n".join(lines) + "\n"

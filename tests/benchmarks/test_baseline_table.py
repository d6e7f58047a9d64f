"""``sdgym baseline --table``: a benchmark preset's baseline cells, report and table."""

from __future__ import annotations

import json

from sdgym.cli import main


def test_baseline_table_command_runs_a_preset(tmp_path) -> None:
    preset = tmp_path / "tiny-table.toml"
    preset.write_text("\n".join([
        'train_preset = "cpu-smoke"', "envs = []", "methods = []", "seeds = [0]",
        'baseline_envs = ["sdgym/SearchQA-v0", "sdgym/WebShop-v0"]',
        'baseline_algos = ["random", "expert"]', "baseline_episodes = 3", "baseline_seeds = 2",
        'ppo_envs = ["sdgym/WebShop-v0"]', "ppo_timesteps = 5000",
        '[ppo_timesteps_per_env]', '"sdgym/WebShop-v0" = 128',
        '[env_kwargs."sdgym/SearchQA-v0"]', 'size = "tiny"',
        '[env_kwargs."sdgym/WebShop-v0"]', 'size = "tiny"', ""]))
    out = tmp_path / "table"
    assert main(["baseline", "--table", "--preset", str(preset), "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["env_id"].split("/")[1], r["method"]) for r in records] == [
        ("SearchQA-v0", "random"), ("SearchQA-v0", "expert"), ("WebShop-v0", "random"),
        ("WebShop-v0", "expert"), ("WebShop-v0", "maskable_ppo")]
    assert {r["split"] for r in records} == {"easy_val"}
    assert all(r["kind"] == "baseline" for r in records)
    assert records[-1]["train_seconds"] > 0
    table = (out / "table.md").read_text().splitlines()
    assert table[0] == "| env | split | random | expert | maskable_ppo |"
    assert table[2].startswith("| sdgym/SearchQA-v0 | easy_val |") and table[2].endswith("| – |")
    assert "1.000 ± 0.000" in table[3]
    assert "## sdgym/WebShop-v0" in (out / "report.md").read_text()

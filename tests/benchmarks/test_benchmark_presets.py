"""Benchmark presets: one name per file across kinds, old names kept, types checked on load."""

from __future__ import annotations

import pytest

from baselines.config import PRESET_DIR, load_preset
from benchmarks.protocol.matrix import PRESET_DIR as BENCHMARK_DIR
from benchmarks.protocol.matrix import load_benchmark_preset


def test_every_preset_file_name_is_unique_across_kinds() -> None:
    train = {p.stem for p in PRESET_DIR.glob("*.toml")}
    benchmark = {p.stem for p in BENCHMARK_DIR.glob("*.toml")}
    assert train and benchmark and not train & benchmark
    assert all(name.endswith("-bench") for name in benchmark)


def test_old_benchmark_names_still_work_and_keep_the_report_name() -> None:
    old, new = load_benchmark_preset("cpu-mini"), load_benchmark_preset("cpu-mini-bench")
    assert old == new and new.name == "cpu-mini" and new.train_preset == "cpu-mini"


@pytest.mark.parametrize(("text", "message"), [
    ('train_preset = "cpu-smoke"\nenvs = []\nmethods = []\nseeds = "0"\n',
     r"^seeds must be a list of integers, got '0'$"),
    ('train_preset = "cpu-smoke"\nenvs = []\nmethods = []\nseeds = [0]\nretries = "1"\n',
     r"^retries must be an integer, got '1'$"),
    ('train_preset = "cpu-smoke"\nenvs = []\nmethods = []\nseeds = [0]\ncolour = 1\n',
     r"unknown benchmark options \['colour'\]"),
])
def test_benchmark_preset_types_are_checked_on_load(tmp_path, text, message) -> None:
    path = tmp_path / "bad-bench.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_benchmark_preset(str(path))


def test_filing_anchor_plans_the_matrix_of_its_day(tmp_path) -> None:
    """The anchor matrix (cpu-mini when the throughput issue was filed) plans that day's 24 cells
    with that day's panels, and cpu-power plans cpu-mini's cells plus the same ones on WebShop."""
    from pathlib import Path

    from benchmarks.protocol.matrix import cell_config, plan

    anchor_file = Path(__file__).parents[2] / "benchmarks/anchors/cpu-mini-2026-11-30-bench.toml"
    anchor = load_benchmark_preset(str(anchor_file))
    cells, _ = plan(anchor)
    assert len(cells) == 24 and "opsd_sdar" not in anchor.methods and anchor.seeds == [0]
    train = next(c for c in cells if c.kind == "train")
    evaluation = cell_config(train, anchor, tmp_path).evaluation
    assert (evaluation.val_episodes, evaluation.test_episodes, evaluation.test_seeds,
            evaluation.val_teacher) == (16, 16, 8, False)
    mini, power = plan(load_benchmark_preset("cpu-mini"))[0], plan(load_benchmark_preset("cpu-power"))[0]
    webshop = [c for c in power if c.env_id == "sdgym/WebShop-v0" and c.kind != "baseline"]
    assert set(mini) <= set(power) and len(power) == len(mini) + len(webshop) == len(mini) + 3 * 13


def test_cpu_power_tests_webshop_on_hundreds_of_distinct_easy_goals(tmp_path) -> None:
    """The WebShop cells' test panel is ≥ 200 distinct ``easy_test`` goals (the held-out test
    instructions make the split big enough) × 2 rollout seeds, the panel shape of Search-QA's."""
    import gymnasium as gym

    import sdgym  # noqa: F401  (registers the environments)
    from agents.panel import task_panel
    from benchmarks.protocol.matrix import cell_config, plan

    preset = load_benchmark_preset("cpu-power")
    cells, _ = plan(preset)
    configs = {env_id: cell_config(next(c for c in cells if c.kind == "train" and c.env_id == env_id),
                                   preset, tmp_path)
               for env_id in ("sdgym/WebShop-v0", "sdgym/SearchQA-v0")}
    webshop = configs["sdgym/WebShop-v0"]
    env = gym.make("sdgym/WebShop-v0", **webshop.env_kwargs)
    try:
        split_size = env.unwrapped.task_count(webshop.evaluation.test_split)
    finally:
        env.close()
    panel = task_panel(split_size, webshop.evaluation.test_episodes)
    assert webshop.evaluation.test_split == "easy_test" and split_size >= 400
    assert len(panel) == webshop.evaluation.test_episodes >= 200  # the split is not the limit
    shapes = {(c.evaluation.test_episodes, c.evaluation.test_seeds) for c in configs.values()}
    assert shapes == {(400, 2)}


def test_methods_all_is_every_shipped_head_in_table_order_and_keeps_the_fingerprint(
        tmp_path) -> None:
    """``methods = "all"`` expands to GRPO and every head module of ``baselines.heads`` (a new
    head there joins by its ``row``), and a preset that spells the list out has the same
    fingerprint, so switching between the two re-runs no cell."""
    import pkgutil

    import baselines.heads as heads
    from baselines.heads import HEADS, shipped_heads
    from benchmarks.protocol.matrix import load_benchmark_preset, preset_fingerprint

    names = shipped_heads()
    modules = {m.name for m in pkgutil.iter_modules(heads.__path__)} - {"base"}
    assert {HEADS[name].__module__.rsplit(".", 1)[-1] for name in names} == modules
    assert names[0] == "grpo" and [HEADS[n].row for n in names] == sorted(HEADS[n].row
                                                                          for n in names)
    base = 'train_preset = "cpu-smoke"\nenvs = ["sdgym/SearchQA-v0"]\nseeds = [0]\n'
    for folder, methods in (("all", '"all"'), ("listed", repr(names).replace("'", '"'))):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m-bench.toml").write_text(base + f"methods = {methods}\n")
    everything = load_benchmark_preset(str(tmp_path / "all" / "m-bench.toml"))
    listed = load_benchmark_preset(str(tmp_path / "listed" / "m-bench.toml"))
    assert everything.methods == names
    assert preset_fingerprint(everything) == preset_fingerprint(listed)


SIZED_SETTINGS = {"tiny-s": {"sdgym/SearchQA-v0": ["cpu-mini-tiny-s"],
                             "sdgym/WebShop-v0": ["cpu-webshop-tiny-s"]},
                  "tiny-l": {"sdgym/SearchQA-v0": ["cpu-mini-tiny-l"],
                             "sdgym/WebShop-v0": ["cpu-webshop-tiny-l", "cpu-webshop-tiny-l-2",
                                                  "cpu-webshop-tiny-l-3"]}}
"""#41: each setting (env × model size) of the model-scale axis, and the presets that run it."""


@pytest.mark.parametrize("size", sorted(SIZED_SETTINGS))
def test_each_sized_setting_runs_every_method_on_three_seeds_under_cpu_powers_protocol(
        size: str, tmp_path) -> None:
    """A sized setting's presets (the tiny-l WebShop one in three parts) train GRPO and the eleven
    heads on three seeds, each method once, with cpu-power's training config for that env but for
    the model (and the lr where the sized training preset lowers it: test_model_size_presets),
    and no reference baselines (cpu-mini's and cpu-power's serve every size)."""
    from baselines.heads import shipped_heads
    from benchmarks.protocol.matrix import Cell, cell_config, model_sizes

    power = load_benchmark_preset("cpu-power")
    for env_id, names in SIZED_SETTINGS[size].items():
        presets = [load_benchmark_preset(name) for name in names]
        methods = [m for preset in presets for m in preset.methods]
        assert sorted(methods) == sorted(shipped_heads())
        for preset in presets:
            assert preset.envs == [env_id] and preset.seeds == [0, 1, 2] and not preset.premise
            assert preset.baseline_envs == [] and model_sizes(preset) == {env_id: size}
            cell = Cell("train", env_id, "grpo", 1)
            sized, base = cell_config(cell, preset, tmp_path), cell_config(cell, power, tmp_path)
            assert sized.model.name.endswith(f"-{size}")
            sized.model.name = base.model.name
            assert sized.grpo.lr == load_preset(preset.train_preset).grpo.lr
            sized.grpo.lr = base.grpo.lr
            assert sized == base


@pytest.mark.parametrize("size", sorted(SIZED_SETTINGS))
def test_each_size_measures_its_warm_starts_premise_like_cpu_premise(size: str, tmp_path) -> None:
    from benchmarks.protocol.matrix import Cell, cell_config, model_sizes, plan

    sized, base = load_benchmark_preset(f"cpu-premise-{size}"), load_benchmark_preset("cpu-premise")
    assert [c.key for c in plan(sized)[0]] == [c.key for c in plan(base)[0]]  # premise cells only
    assert (sized.premise_episodes, sized.premise_pool_seeds) == (base.premise_episodes,
                                                                  base.premise_pool_seeds)
    assert model_sizes(sized) == {env_id: size for env_id in base.envs}
    for env_id in base.envs:
        cell = Cell("premise", env_id, "premise", 0)
        config, base_config = cell_config(cell, sized, tmp_path), cell_config(cell, base, tmp_path)
        config.model.name = base_config.model.name
        config.grpo.lr = base_config.grpo.lr  # a premise cell trains nothing
        assert config == base_config


def test_the_model_size_suite_covers_both_sizes_of_both_envs(capsys, tmp_path) -> None:
    from benchmarks.protocol.suite import load_suite
    from sdgym.cli import main

    suite = load_suite("cpu-model-sizes")
    assert sorted(suite.parts) == sorted(
        [f"cpu-premise-{size}" for size in SIZED_SETTINGS]
        + [name for envs in SIZED_SETTINGS.values() for names in envs.values() for name in names])
    # a dry run plans and prints the memory plan before any sized warm start is built
    assert main(["benchmark", "--preset", "cpu-webshop-tiny-l", "--dry-run",
                 "--out", str(tmp_path / "o")]) == 0
    printed = capsys.readouterr().out
    assert "memory plan: webshop-easy-sft-tiny-l" in printed and "(fits)" in printed

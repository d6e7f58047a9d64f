"""Tests for agents.tiny_model: build, offline reload, vocab check, cache, determinism."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from agent_fixtures import shared_tiny_model_dir  # noqa: E402

from agents.corpus import TAG_TOKENS  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.tiny_model import (  # noqa: E402
    MARKER_FILE,
    SPECIAL_TOKENS,
    build_tiny_model,
)


@pytest.fixture
def tiny_model_dir() -> Path:
    return shared_tiny_model_dir()


def test_build_and_reload_offline(tiny_model_dir: Path) -> None:
    from transformers import AutoConfig, AutoTokenizer

    for name in ("config.json", "model.safetensors", "tokenizer.json", MARKER_FILE):
        assert (tiny_model_dir / name).is_file(), name
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    assert len(tok) == 2048
    assert AutoConfig.from_pretrained(tiny_model_dir).vocab_size == 2048
    model, tok2 = load_model(tiny_model_dir)
    n_params = sum(p.numel() for p in model.parameters())
    assert 300_000 < n_params < 800_000
    assert model.config.model_type == "qwen3"
    assert model.config.tie_word_embeddings
    assert tok2.padding_side == "left"
    for token in (*SPECIAL_TOKENS, *TAG_TOKENS):
        assert len(tok.encode(token, add_special_tokens=False)) == 1, token


def test_chat_template_and_roundtrip(tiny_model_dir: Path) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    text = tok.apply_chat_template(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    sample = "<think>I should search.</think><action>search[running shoes]</action>"
    assert tok.decode(tok.encode(sample, add_special_tokens=False)) == sample
    assert tok.eos_token == "<|im_end|>"
    assert tok.pad_token == "<|endoftext|>"


def test_cache_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path))
    first = build_tiny_model(hidden_size=32, num_layers=1)
    assert first.parent == tmp_path
    stamps = {p.name: p.stat().st_mtime_ns for p in first.iterdir()}
    start = time.perf_counter()
    second = build_tiny_model(hidden_size=32, num_layers=1)
    assert time.perf_counter() - start < 0.5
    assert second == first
    assert {p.name: p.stat().st_mtime_ns for p in second.iterdir()} == stamps
    other = build_tiny_model(hidden_size=32, num_layers=1, seed=1)
    assert other != first
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, other.name])


def test_deterministic_given_seed(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    kwargs = {"hidden_size": 32, "num_layers": 1, "seed": 3}
    a = build_tiny_model(tmp_path / "a", **kwargs)
    b = build_tiny_model(tmp_path / "b", **kwargs)
    assert (a / "tokenizer.json").read_bytes() == (b / "tokenizer.json").read_bytes()
    wa, wb = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    assert wa.keys() == wb.keys()
    assert all((wa[k] == wb[k]).all() for k in wa)


def test_custom_corpus_small_vocab(tmp_path: Path) -> None:
    from transformers import AutoConfig, AutoTokenizer

    path = build_tiny_model(
        tmp_path / "m", corpus=["hello world", "go to cabinet 1"], vocab_size=300, hidden_size=32
    )
    tok = AutoTokenizer.from_pretrained(path)
    assert len(tok) <= 300
    assert AutoConfig.from_pretrained(path).vocab_size == len(tok)


def test_rejects_foreign_folder_and_bad_args(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        build_tiny_model(tmp_path / "x", hidden_size=32, num_layers=1)
    with pytest.raises(ValueError):
        build_tiny_model(tmp_path / "y", corpus=[])
    with pytest.raises(ValueError):
        build_tiny_model(tmp_path / "z", hidden_size=30)

"""Build and cache a tiny Qwen3-architecture causal LM for offline tests.

The model is randomly initialised (about 0.5M parameters with the defaults; the named sizes the
shipped warm starts use are in :mod:`agents.model_sizes`) and comes
with a byte-level BPE tokenizer trained locally with the ``tokenizers`` library, ChatML
special tokens and a ChatML chat template. Everything is saved with ``save_pretrained`` so
that ``AutoTokenizer.from_pretrained(path)`` and ``AutoModelForCausalLM.from_pretrained(path)``
reload it without network access.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.corpus import TAG_TOKENS, default_corpus
from sdgym.cache import atomic_directory, cache_root

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

FORMAT_VERSION = 2
"""Bump when the build recipe changes, so old cache entries are not reused."""

SPECIAL_TOKENS: tuple[str, ...] = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
"""ChatML special tokens; they receive ids 0, 1 and 2."""

CHATML_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
"""ChatML chat template (the Qwen format without tool support)."""

MARKER_FILE = "sdgym_tiny_model.json"
"""Written last into a finished build; its presence marks a complete cache entry."""


def default_cache_dir() -> Path:
    """The sdgym cache root (:func:`sdgym.cache.cache_root`)."""
    return cache_root()


def _build_spec(
    corpus: list[str], vocab_size: int, hidden_size: int, num_layers: int, seed: int,
    initializer_range: float,
) -> dict[str, Any]:
    import transformers

    corpus_hash = hashlib.sha256("\x00".join(corpus).encode("utf-8")).hexdigest()
    return {
        "format_version": FORMAT_VERSION,
        # saved tokenizer files differ across transformers major versions
        "transformers_major": transformers.__version__.split(".")[0],
        "vocab_size": vocab_size,
        "hidden_size": hidden_size,
        "num_layers": num_layers,
        "seed": seed,
        "initializer_range": initializer_range,
        "corpus_sha256": corpus_hash,
    }


def _spec_key(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def _is_complete(path: Path, spec: dict[str, Any]) -> bool:
    marker = path / MARKER_FILE
    if not marker.is_file():
        return False
    try:
        return json.loads(marker.read_text())["spec"] == spec
    except (OSError, ValueError, KeyError):
        return False


def _train_tokenizer(corpus: list[str], vocab_size: int) -> PreTrainedTokenizerBase:
    """Train a byte-level BPE tokenizer and wrap it as a transformers fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(TAG_TOKENS),  # the tags are added after training
        min_frequency=1,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer=trainer, length=len(corpus))
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
        padding_side="left",
        clean_up_tokenization_spaces=False,
        model_max_length=2048,
    )
    hf_tok.add_tokens(list(TAG_TOKENS))
    hf_tok.chat_template = CHATML_TEMPLATE
    return hf_tok


def tiny_model_config(
    vocab_size: int = 2048, hidden_size: int = 96, num_layers: int = 3,
    initializer_range: float = 0.1, **token_ids: Any,
) -> Any:
    """The ``Qwen3Config`` of a tiny model of this shape (``token_ids``: eos/pad ids)."""
    from transformers import Qwen3Config

    num_heads = 4
    return Qwen3Config(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 3,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=2,
        head_dim=hidden_size // num_heads,
        max_position_embeddings=2048,
        initializer_range=initializer_range,
        tie_word_embeddings=True,
        bos_token_id=None,
        **token_ids,
    )


def _make_model(
    vocab_size: int, hidden_size: int, num_layers: int, seed: int, tokenizer: Any,
    initializer_range: float,
) -> PreTrainedModel:
    import torch
    from transformers import GenerationConfig, Qwen3ForCausalLM

    eos_ids = [tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")]
    config = tiny_model_config(vocab_size, hidden_size, num_layers, initializer_range,
                               eos_token_id=eos_ids, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(
        eos_token_id=eos_ids, pad_token_id=tokenizer.pad_token_id, bos_token_id=None
    )
    return model


def _verify(path: Path, expected_vocab: int) -> None:
    """Reload from disk and check the tokenizer really is the one we trained."""
    from transformers import AutoConfig, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    if len(tok) != expected_vocab:
        raise RuntimeError(
            f"tokenizer reloaded from {path} has {len(tok)} tokens, expected {expected_vocab}"
        )
    for t in SPECIAL_TOKENS:
        if len(tok.encode(t, add_special_tokens=False)) != 1:
            raise RuntimeError(f"special token {t!r} is not a single token after reload")
    config = AutoConfig.from_pretrained(path)
    if config.vocab_size != expected_vocab:
        raise RuntimeError(f"model vocab {config.vocab_size} != tokenizer vocab {expected_vocab}")


def build_tiny_model(
    path: str | Path | None = None,
    *,
    corpus: Iterable[str] | None = None,
    vocab_size: int = 2048,
    hidden_size: int = 96,
    num_layers: int = 3,
    seed: int = 0,
    initializer_range: float = 0.1,
) -> Path:
    """Build (or reuse) a tiny Qwen3 causal LM with a locally trained BPE tokenizer.

    Args:
        path: Output folder. ``None`` uses ``default_cache_dir()/tiny-qwen3-<hash>``, where
            the hash covers the configuration and corpus. A folder that already holds a
            complete build of the same configuration is reused as is.
        corpus: Texts to train the tokenizer on; defaults to :func:`default_corpus`.
        vocab_size: Target BPE vocabulary (including special tokens). A small corpus may
            yield fewer tokens; the model's vocabulary always equals the tokenizer's.
        hidden_size: Model width (must be divisible by 4 attention heads).
        num_layers: Number of decoder layers.
        seed: Seed for weight initialisation; builds are deterministic given the seed.
        initializer_range: Std of the initial weights. The default 0.1 is larger than usual so
            that an untrained model's greedy text varies; 0.02 (the usual value) trains faster.

    Returns:
        The folder holding ``config.json``, the weights and the tokenizer files.
    """
    docs = list(corpus) if corpus is not None else default_corpus()
    if not docs:
        raise ValueError("corpus must contain at least one text")
    if vocab_size <= len(SPECIAL_TOKENS) + len(TAG_TOKENS) + 256:
        raise ValueError("vocab_size must exceed the 256 byte tokens plus special/tag tokens")
    if hidden_size % 4:
        raise ValueError("hidden_size must be divisible by 4 (number of attention heads)")
    spec = _build_spec(docs, vocab_size, hidden_size, num_layers, seed, initializer_range)
    out = Path(path) if path is not None else default_cache_dir() / f"tiny-qwen3-{_spec_key(spec)}"
    if _is_complete(out, spec):
        return out
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} exists and is not a tiny-model build of this configuration")

    if out.exists():
        out.rmdir()  # empty (checked above)
    # a concurrent builder that finishes first wins; its build is the same (deterministic)
    with atomic_directory(out, replace=False) as tmp:
        tokenizer = _train_tokenizer(docs, vocab_size)
        n_vocab = len(tokenizer)
        model = _make_model(n_vocab, hidden_size, num_layers, seed, tokenizer, initializer_range)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        _verify(tmp, n_vocab)
        n_params = sum(p.numel() for p in model.parameters())
        marker = {"spec": spec, "vocab": n_vocab, "num_parameters": n_params}
        (tmp / MARKER_FILE).write_text(json.dumps(marker, indent=2, sort_keys=True))
    if not _is_complete(out, spec):
        raise FileExistsError(f"{out} appeared during the build and is not a tiny-model build "
                              "of this configuration")
    return out


def load_tiny_model(
    path: str | Path, *, dtype: Any = None
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Deprecated alias of :func:`agents.model_loading.load_model` (float32 unless ``dtype``);
    it loads any model folder, not only tiny ones."""
    from agents.model_loading import load_model

    return load_model(path, dtype=dtype or "float32")

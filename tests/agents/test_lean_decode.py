"""LeanDecoder: the same decode steps as transformers' Qwen3 forward, on the same cache."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agent_fixtures import rendered_prompts, shared_hf_backend  # noqa: E402

from agents.backends.base import SamplingParams  # noqa: E402
from agents.backends.hf import HFBackend  # noqa: E402
from agents.backends.lean_decode import LeanDecoder, can_lean_decode  # noqa: E402


@pytest.fixture
def hf_backend() -> HFBackend:
    return shared_hf_backend()


def test_lean_steps_give_the_model_forward_logits(hf_backend: HFBackend) -> None:
    """Prefill a left-padded batch into a static cache, then decode 6 steps twice: through the
    model's forward and through LeanDecoder on a copy of the cache."""
    from transformers import StaticCache

    from agents.backends.padding import left_pad, position_ids_from_mask

    model = hf_backend.model.eval()
    ids, mask = left_pad(hf_backend.encode(rendered_prompts(hf_backend.tokenizer)), 0)
    positions = position_ids_from_mask(mask)
    cache = StaticCache(config=model.config, max_cache_len=ids.shape[1] + 8)
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions,
                    past_key_values=cache, use_cache=True, logits_to_keep=1)
    lean_cache = copy.deepcopy(cache)
    lean = LeanDecoder(model)
    lean.bind()
    tokens, next_pos = out.logits[:, -1].argmax(-1), positions[:, -1:] + 1
    for _ in range(6):
        mask = torch.cat([mask, mask.new_ones(len(mask), 1)], 1)
        with torch.no_grad():
            expected = model(input_ids=tokens[:, None], attention_mask=mask, position_ids=next_pos,
                             past_key_values=cache, use_cache=True).logits[:, -1]
        got = lean.step(tokens, next_pos, lean_cache, mask)
        assert torch.allclose(got, expected, atol=2e-5), (got - expected).abs().max()
        tokens, next_pos = expected.argmax(-1), next_pos + 1


@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_lean_decoding_gives_the_generations_of_the_model_forward(hf_backend: HFBackend,
                                                                 temperature: float) -> None:
    prompts = rendered_prompts(hf_backend.tokenizer)
    params = SamplingParams(max_new_tokens=16, temperature=temperature, seed=3)
    model = copy.deepcopy(hf_backend.model)
    lean = HFBackend(model, hf_backend.tokenizer)
    plain = HFBackend(model, hf_backend.tokenizer, lean_decode=False)
    for _ in range(2):  # the second time after a weight change: the decoder reads the new weights
        a, b = lean.generate(prompts, params), plain.generate(prompts, params)
        assert [g.response_ids for g in a] == [g.response_ids for g in b]
        for x, y in zip(a, b):
            assert x.logprobs == pytest.approx(y.logprobs, abs=1e-4)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(0.05 * torch.randn_like(parameter))


def test_only_plain_qwen3_models_are_lean_decoded(hf_backend: HFBackend) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    assert can_lean_decode(hf_backend.model)
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=2,
                                         num_key_value_heads=1))
    assert not can_lean_decode(llama)
    with pytest.raises(ValueError, match="plain Qwen3 models, not LlamaForCausalLM"):
        LeanDecoder(llama)
    sliding = copy.deepcopy(hf_backend.model)
    sliding.config.use_sliding_window = True
    assert not can_lean_decode(sliding)


def test_a_shared_prefix_is_attended_once_with_the_same_result() -> None:
    from agents.backends.lean_decode import _attend, _mask_bias

    generator = torch.Generator().manual_seed(0)
    batch, heads, kv_heads, dim, prefix, length = 5, 4, 2, 8, 7, 12
    q = torch.randn(batch, heads, dim, generator=generator)
    keys = torch.randn(batch, kv_heads, length, dim, generator=generator)
    values = torch.randn(batch, kv_heads, length, dim, generator=generator)
    keys[:, :, :prefix], values[:, :, :prefix] = keys[:1, :, :prefix], values[:1, :, :prefix]
    allowed = torch.ones(batch, 1, 1, length, dtype=torch.bool)
    allowed[1:, :, :, prefix:prefix + 3] = False  # padding between the prefix and a row's rest
    bias = _mask_bias(allowed[:, 0, 0], torch.float32)
    expected = torch.nn.functional.scaled_dot_product_attention(
        q[:, :, None], keys, values, attn_mask=allowed, enable_gqa=True)[:, :, 0]
    once, per_row = _attend(q, keys, values, bias, prefix), _attend(q, keys, values, bias, 0)
    assert torch.allclose(per_row, expected, atol=1e-6)
    assert torch.allclose(once, per_row, atol=1e-6)
    keys[2, :, 0] += 1.0  # a prefix that differs would be read from row 0 only: not the same
    assert not torch.allclose(_attend(q, keys, values, bias, prefix),
                              _attend(q, keys, values, bias, 0), atol=1e-3)


def test_the_fused_norm_is_qwen3_s_rmsnorm_bit_for_bit(hf_backend: HFBackend) -> None:
    """The float32 ``F.rms_norm`` path equals transformers' Qwen3RMSNorm exactly, at the shapes
    a decode step norms (hidden states, per-head queries and keys)."""
    model = hf_backend.model.eval()
    lean = LeanDecoder(model)
    lean.bind()
    norms = {"hidden": (model.model.layers[0].input_layernorm, (16, model.config.hidden_size)),
             "heads": (model.model.layers[0].self_attn.q_norm, (16, 4, lean.head_dim))}
    generator = torch.Generator().manual_seed(0)
    for name, (module, shape) in norms.items():
        x = torch.randn(shape, generator=generator) * 7
        with torch.no_grad():
            assert torch.equal(lean._norm(x, module.weight), module(x)), name


@pytest.mark.parametrize("prefix_length", [0, 5])
@pytest.mark.parametrize("chunk_tokens", [1, 30, 40, 10_000])
def test_lean_prefill_gives_the_model_forward_logits_and_cache(
        hf_backend: HFBackend, prefix_length: int, chunk_tokens: int) -> None:
    """Packed prefill (every chunking: one prompt per chunk, a few ([9] [23, 1] [17] at 30),
    all at once; at 40, prompts of equal length: no padding at all), with and
    without a shared prefix: the last-token logits and every real cache column equal those of
    transformers' forward on the plain left-padded batch of the whole prompts."""
    from agents.backends.padding import left_pad, position_ids_from_mask

    model = hf_backend.model.eval()
    generator = torch.Generator().manual_seed(prefix_length + chunk_tokens)
    prefix = torch.randint(3, 500, (prefix_length,), generator=generator).tolist()
    sizes = (9, 23, 1, 17) if chunk_tokens != 40 else (11, 11, 11)  # (no padding at all)
    rests = [torch.randint(3, 500, (n,), generator=generator).tolist() for n in sizes]
    whole = [prefix + rest for rest in rests]
    ids, mask = left_pad(whole, 0)
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, position_ids=position_ids_from_mask(mask),
                    use_cache=True)
    lean = LeanDecoder(model)
    lean.bind()
    width = max(len(r) for r in rests)
    cache = lean.new_cache(len(rests), prefix_length + width + 4)
    for layer in cache.layers:  # what an earlier call left in the reused buffers
        layer.keys.fill_(float("nan"))
        layer.values.fill_(float("nan"))
    logits = lean.prefill(rests, cache, prefix, chunk_tokens=chunk_tokens)
    cache.release()
    assert torch.allclose(logits, out.logits[:, -1], atol=2e-5), (logits - out.logits[:, -1]).abs().max()
    for layer, expected in zip(cache.layers, out.past_key_values.layers):
        assert layer.keys.shape[2] == prefix_length + width + 4
        for row, rest in enumerate(rests):
            real = list(range(prefix_length)) + list(
                range(prefix_length + width - len(rest), prefix_length + width))
            for got, want in ((layer.keys, expected.keys), (layer.values, expected.values)):
                assert torch.allclose(got[row, :, real], want[row, :, -len(whole[row]):],
                                      atol=2e-5)
                assert not got[row, :, prefix_length:prefix_length + width - len(rest)].any()


def test_prefill_chunks_are_runs_of_whole_prompts() -> None:
    from agents.backends.lean_decode import _chunk_ends

    assert _chunk_ends([3, 4, 5, 9, 1], 8) == [2, 3, 4, 5]  # 3+4 | 5 | 9 (alone, too long) | 1
    assert _chunk_ends([3, 4, 5], 100) == [3]
    assert _chunk_ends([3, 4, 5], 1) == [1, 2, 3]
    with pytest.raises(ValueError, match="at least one token"):
        LeanDecoder.prefill(object.__new__(LeanDecoder), [[1], []], None)


def test_half_precision_and_wrapped_projections_run_through_the_model_forward(
        hf_backend: HFBackend) -> None:
    """bf16 weights (the lean attention keeps scores in the weights' dtype) and a projection
    replaced in place by a Linear subclass (an injected adapter, whose ``.weight`` is only the
    base weight) do not qualify."""
    half = copy.deepcopy(hf_backend.model).to(torch.bfloat16)
    assert not can_lean_decode(half)

    class Adapted(torch.nn.Linear):
        pass

    adapted = copy.deepcopy(hf_backend.model)
    original = adapted.model.layers[0].self_attn.q_proj
    adapted.model.layers[0].self_attn.q_proj = Adapted(original.in_features,
                                                       original.out_features, bias=False)
    assert not can_lean_decode(adapted)
    assert can_lean_decode(copy.deepcopy(hf_backend.model))

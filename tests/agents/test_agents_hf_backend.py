"""Tests for agents.backends.hf (left-padded sampling, stops, LoRA) and agents.backends.scoring
(the training-time forward: its log-probs agree with sampling's; shared prompts, prefixes and
length buckets change float rounding only)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agent_fixtures import (  # noqa: E402
    rendered_prompts,
    shared_hf_backend,
    shared_tiny_model_dir,
)

from agents.backends.base import Generation, SamplingParams, render_chat  # noqa: E402
from agents.backends.hf import HFBackend, find_stop  # noqa: E402
from agents.backends.padding import left_pad, position_ids_from_mask, right_pad  # noqa: E402
from agents.backends.scoring import ResponseScores, response_logprobs  # noqa: E402

GREEDY = SamplingParams(max_new_tokens=12, temperature=0)


@pytest.fixture
def tiny_model_dir():
    return shared_tiny_model_dir()


@pytest.fixture
def hf_backend() -> HFBackend:
    return shared_hf_backend()


@pytest.fixture
def chat_prompts(hf_backend: HFBackend) -> list[str]:
    return rendered_prompts(hf_backend.tokenizer)


def _recompute(backend: HFBackend, gens: list[Generation]) -> ResponseScores:
    with torch.no_grad():
        return response_logprobs(
            backend.model,
            [g.prompt_ids for g in gens],
            [g.response_ids for g in gens],
            pad_token_id=backend.pad_token_id,
        )


def _assert_logprobs_match(backend: HFBackend, gens: list[Generation]) -> None:
    lps, _, mask = _recompute(backend, gens)
    for row, gen in enumerate(gens):
        assert len(gen.logprobs) == len(gen.response_ids) == int(mask[row].sum())
        recomputed = lps[row][mask[row]]
        assert torch.allclose(recomputed, torch.tensor(gen.logprobs), atol=1e-4, rtol=0)
    scored = backend.score([g.prompt_ids for g in gens], [g.response_ids for g in gens])
    for gen, row in zip(gens, scored):
        assert row == pytest.approx(gen.logprobs, abs=1e-4)


def test_padding_helpers() -> None:
    ids, mask = left_pad([[5, 6, 7], [8]], pad_token_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert position_ids_from_mask(mask).tolist() == [[0, 1, 2], [0, 0, 0]]
    assert find_stop("ab</action>cd]", ["]", "</action>"]) == (2, "</action>")


def test_sampled_logprobs_match_recomputation(hf_backend: HFBackend, chat_prompts) -> None:
    params = SamplingParams(max_new_tokens=16, temperature=1.0, seed=0)
    gens = hf_backend.generate(chat_prompts, params)
    assert len({len(g.prompt_ids) for g in gens}) == len(chat_prompts)  # left padding used
    _assert_logprobs_match(hf_backend, gens)


def test_logprobs_are_raw_model_at_any_temperature(hf_backend: HFBackend, chat_prompts) -> None:
    params = SamplingParams(max_new_tokens=10, temperature=0.6, top_p=0.8, seed=1)
    _assert_logprobs_match(hf_backend, hf_backend.generate(chat_prompts, params))
    _assert_logprobs_match(hf_backend, hf_backend.generate(chat_prompts, GREEDY))


def test_greedy_deterministic_and_batch_invariant(hf_backend: HFBackend, chat_prompts) -> None:
    batched = hf_backend.generate(chat_prompts, GREEDY)
    again = hf_backend.generate(chat_prompts, GREEDY)
    assert [g.response_ids for g in batched] == [g.response_ids for g in again]
    for prompt, gen in zip(chat_prompts, batched):
        alone = hf_backend.generate([prompt], GREEDY)[0]
        assert alone.response_ids == gen.response_ids
        assert alone.logprobs == pytest.approx(gen.logprobs, abs=1e-4)
    assert all(g.finish_reason == "length" and len(g.response_ids) == 12 for g in batched)


def test_seeded_sampling_reproducible(hf_backend: HFBackend, chat_prompts) -> None:
    def run(seed: int) -> list[list[int]]:
        params = SamplingParams(max_new_tokens=8, temperature=1.0, top_p=0.95, seed=seed)
        return [g.response_ids for g in hf_backend.generate(chat_prompts, params)]

    assert run(7) == run(7)
    assert run(7) != run(8)


@pytest.mark.parametrize("top_p", [1.0, 0.9])
def test_row_streams_make_each_row_independent_of_its_batch(hf_backend: HFBackend, chat_prompts,
                                                           top_p: float) -> None:
    """With ``row_seeds`` a row's tokens depend on its prompt and seed only: the same alone, in
    a batch, in another order, in micro-batches, beside a repeat of its prompt."""
    import dataclasses

    seeds = [101, 202, 303, 404]
    params = SamplingParams(max_new_tokens=12, temperature=1.0, top_p=top_p, row_seeds=seeds)
    together = [g.response_ids for g in hf_backend.generate(chat_prompts, params)]
    alone = [hf_backend.generate([p], dataclasses.replace(params, row_seeds=[s]))[0].response_ids
             for p, s in zip(chat_prompts, seeds)]
    assert alone == together
    flipped = hf_backend.generate(chat_prompts[::-1], dataclasses.replace(
        params, row_seeds=seeds[::-1]))
    assert [g.response_ids for g in flipped][::-1] == together
    small = HFBackend(hf_backend.model, hf_backend.tokenizer, max_batch_size=3)
    assert [g.response_ids for g in small.generate(chat_prompts, params)] == together
    twins = hf_backend.generate([chat_prompts[1]] * 2, dataclasses.replace(params,
                                                                          row_seeds=[7, 8]))
    assert twins[0].response_ids != twins[1].response_ids  # one prompt, two seeds: two samples
    with pytest.raises(ValueError, match="row_seeds holds 4 seeds for 2 prompts"):
        hf_backend.generate(chat_prompts[:2], params)


@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_shared_prefix_prefill_gives_the_same_generations(hf_backend: HFBackend,
                                                          temperature: float) -> None:
    """Prompts that start with one long system prompt: running it once and the rest of each
    prompt on its cache (length-bucketed, repeats shared) gives the plain path's tokens."""
    system = ("You answer questions using a search engine. Search with <search> query </search>"
              " and answer with <answer> text </answer>. ") * 3
    contents = ["hi", "capital of France?", "who wrote the novel about the white whale and the "
                "captain who hunted it across the seas", "capital of France?"]
    prompts = [render_chat(hf_backend.tokenizer, [{"role": "system", "content": system},
                                                  {"role": "user", "content": c}])
               for c in contents]
    distinct = [list(p) for p in dict.fromkeys(tuple(i) for i in hf_backend.encode(prompts))]
    assert hf_backend._shared_prefix_length(distinct) > 40  # the system prompt runs once
    plain = HFBackend(hf_backend.model, hf_backend.tokenizer, shared_prefix=False)
    params = SamplingParams(max_new_tokens=12, temperature=temperature, seed=5)
    shared, alone = hf_backend.generate(prompts, params), plain.generate(prompts, params)
    assert [g.response_ids for g in shared] == [g.response_ids for g in alone]
    for a, b in zip(shared, alone):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    unbucketed = HFBackend(hf_backend.model, hf_backend.tokenizer, length_buckets=False,
                           static_cache=False)
    assert [g.response_ids for g in unbucketed.generate(prompts, params)] == [
        g.response_ids for g in alone]


def test_a_shared_prefix_with_repeats_and_finished_rows_gives_the_plain_generations(
        hf_backend: HFBackend) -> None:
    """The lean decode's reorders (a prompt's cache copied to its G rows, finished rows dropped)
    keep a shared prefix in row 0 only: tokens, log-probs and finish reasons stay the plain
    path's (no shared prefix, no repeats, whole batch to the end)."""
    system = ("You answer questions using a search engine. Search with <search> query </search>"
              " and answer with <answer> text </answer>. ") * 3
    contents = ["hi", "capital of France?", "who wrote the novel about the white whale?"]
    prompts = [render_chat(hf_backend.tokenizer, [{"role": "system", "content": system},
                                                  {"role": "user", "content": c}])
               for c in contents for _ in range(4)]  # G = 4 rows per prompt
    vocab = hf_backend.model.config.vocab_size
    params = SamplingParams(max_new_tokens=16, temperature=1.0, seed=11,
                            stop_token_ids=tuple(range(0, vocab, 9)))
    plain = HFBackend(hf_backend.model, hf_backend.tokenizer, shared_prefix=False,
                      drop_finished_rows=False, lean_decode=False)
    got, want = hf_backend.generate(prompts, params), plain.generate(prompts, params)
    assert len({len(g.response_ids) for g in got}) >= 3  # rows really finished apart
    assert [g.response_ids for g in got] == [g.response_ids for g in want]
    assert [g.finish_reason for g in got] == [g.finish_reason for g in want]
    for a, b in zip(got, want):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)


def test_micro_batches_match(tiny_model_dir, chat_prompts, hf_backend: HFBackend) -> None:
    small = HFBackend(hf_backend.model, hf_backend.tokenizer, max_batch_size=2)
    assert [g.response_ids for g in small.generate(chat_prompts, GREEDY)] == [
        g.response_ids for g in hf_backend.generate(chat_prompts, GREEDY)
    ]


def test_stop_token_ids(hf_backend: HFBackend, chat_prompts) -> None:
    full = hf_backend.generate(chat_prompts[:1], GREEDY)[0]
    stop_id = full.response_ids[2]
    cut = full.response_ids.index(stop_id)  # first occurrence (may be before index 2)
    params = SamplingParams(max_new_tokens=12, temperature=0, stop_token_ids=(stop_id,))
    gen = hf_backend.generate(chat_prompts[:1], params)[0]
    assert gen.response_ids == full.response_ids[: cut + 1]
    assert gen.finish_reason == "stop"
    assert len(gen.logprobs) == cut + 1


def test_eos_from_backend_config(hf_backend: HFBackend, chat_prompts) -> None:
    full = hf_backend.generate(chat_prompts[1:2], GREEDY)[0]
    eos = full.response_ids[3]
    backend = HFBackend(hf_backend.model, hf_backend.tokenizer, eos_token_ids=[eos])
    gen = backend.generate(chat_prompts[1:2], GREEDY)[0]
    assert gen.finish_reason == "stop"
    assert gen.response_ids[-1] == eos


def test_default_eos_ids(hf_backend: HFBackend) -> None:
    tok = hf_backend.tokenizer
    expected = {tok.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")}
    assert hf_backend.eos_token_ids == expected


def test_eager_attention_agrees(tiny_model_dir, chat_prompts, hf_backend: HFBackend) -> None:
    eager = HFBackend(tiny_model_dir, attn_implementation="eager")
    params = SamplingParams(max_new_tokens=8, temperature=1.0, seed=5)
    gens = eager.generate(chat_prompts, params)
    assert [g.response_ids for g in gens] == [
        g.response_ids for g in hf_backend.generate(chat_prompts, params)
    ]
    _assert_logprobs_match(eager, gens)


def test_stop_strings(hf_backend: HFBackend, chat_prompts) -> None:
    full = hf_backend.generate(chat_prompts[2:3], GREEDY)[0]
    text = full.text
    start = next(k for k in range(2, len(text) - 3) if text.find(text[k : k + 3]) == k)
    stop = text[start : start + 3]
    params = SamplingParams(max_new_tokens=12, temperature=0, stop=(stop,))
    gen = hf_backend.generate(chat_prompts[2:3], params)[0]
    assert gen.text == text[: start + 3]
    assert gen.finish_reason == "stop"
    assert gen.response_ids == full.response_ids[: len(gen.response_ids)]
    params = SamplingParams(
        max_new_tokens=12, temperature=0, stop=(stop,), include_stop_str_in_output=False
    )
    assert hf_backend.generate(chat_prompts[2:3], params)[0].text == text[:start]


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_response_logprobs_outputs_agree_and_have_grad(tiny_model_dir, chat_prompts,
                                                       temperature: float) -> None:
    """The one scoring function's three outputs agree: the log-probs are ``log_softmax`` of the
    (tempered) logits at the response ids, 0 at padding, and carry gradients."""
    from agents.model_loading import load_model

    model, tok = load_model(tiny_model_dir)
    prompt_ids = [tok.encode(p, add_special_tokens=False) for p in chat_prompts[:3]]
    response_ids = [[10, 11, 12], [13], []]
    scores = response_logprobs(model, prompt_ids, response_ids, pad_token_id=0,
                               temperature=temperature)
    lps, logits, mask = scores
    assert scores.logprobs is lps and scores.logits is logits and scores.mask is mask
    assert lps.shape == mask.shape == (3, 3) and mask.dtype == torch.bool
    assert logits.shape == (3, 3, model.config.vocab_size) and lps.dtype == torch.float32
    assert mask.sum(dim=1).tolist() == [3, 1, 0]
    assert (lps[~mask] == 0).all() and (lps[mask] < 0).all()
    ids = right_pad(response_ids, 0)[0]
    expected = torch.log_softmax(logits, -1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(lps[mask], expected[mask], atol=1e-5)
    with torch.no_grad():
        raw = response_logprobs(model, prompt_ids, response_ids, pad_token_id=0)
    assert torch.allclose(logits.detach()[mask], raw.logits[mask] / temperature, atol=1e-5)
    (-(lps * mask).sum()).backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and any(g.abs().sum() > 0 for g in grads)


def test_response_logprobs_rejects_bad_input(hf_backend: HFBackend) -> None:
    with pytest.raises(ValueError, match="same length"):
        response_logprobs(hf_backend.model, [[1, 2]], [[3], [4]])
    with pytest.raises(ValueError, match="at least one token"):
        response_logprobs(hf_backend.model, [[1, 2], []], [[3], [4]])


def test_render_chat(hf_backend: HFBackend) -> None:
    text = render_chat(hf_backend.tokenizer, [{"role": "user", "content": "x"}])
    assert text.endswith("<|im_start|>assistant\n")
    text = render_chat(
        hf_backend.tokenizer, [{"role": "user", "content": "x"}], add_generation_prompt=False
    )
    assert text == "<|im_start|>user\nx<|im_end|>\n"


def test_lora_adapter(tiny_model_dir, chat_prompts, hf_backend: HFBackend) -> None:
    peft = pytest.importorskip("peft")
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"])
    backend = HFBackend(tiny_model_dir, lora=config)
    trainable = [n for n, p in backend.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    # a fresh adapter is the identity (lora_B = 0): same greedy output as the base model
    gens = backend.generate(chat_prompts, GREEDY)
    assert [g.response_ids for g in gens] == [
        g.response_ids for g in hf_backend.generate(chat_prompts, GREEDY)
    ]
    _assert_logprobs_match(backend, gens)


def test_rejects_bad_input(hf_backend: HFBackend) -> None:
    with pytest.raises(ValueError):
        hf_backend.generate_from_ids([[]], GREEDY)
    with pytest.raises(ValueError):
        hf_backend.score([[1]], [])
    with pytest.raises(ValueError):
        SamplingParams(top_p=0)


@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_shared_prompt_prefill_gives_the_same_generations(hf_backend: HFBackend, chat_prompts,
                                                          temperature: float) -> None:
    """A group's repeated prompt is prefilled once; samples, log-probs and finish reasons are
    those of prefilling every row (repeats interleaved with distinct prompts)."""
    prompts = [chat_prompts[0]] * 3 + [chat_prompts[1]] + [chat_prompts[0], chat_prompts[1]]
    params = SamplingParams(max_new_tokens=10, temperature=temperature, seed=5)
    shared = HFBackend(hf_backend.model, hf_backend.tokenizer, share_prompt_prefill=True)
    plain = HFBackend(hf_backend.model, hf_backend.tokenizer, share_prompt_prefill=False)
    a, b = shared.generate(prompts, params), plain.generate(prompts, params)
    assert [g.response_ids for g in a] == [g.response_ids for g in b]
    assert [g.finish_reason for g in a] == [g.finish_reason for g in b]
    for x, y in zip(a, b):
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-5)
    if temperature > 0:  # the repeats still sample independently
        assert len({tuple(g.response_ids) for g in a[:3]}) > 1
    _assert_logprobs_match(shared, a)


@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_dropping_finished_rows_gives_the_same_generations(hf_backend: HFBackend, chat_prompts,
                                                          temperature: float,
                                                          monkeypatch) -> None:
    """Rows that stop early leave the forward; every row's tokens, log-probs and finish reason
    are those of running the whole batch to the end (rows stop at many different steps here,
    and the lean decoder's cache moves rows into the finished rows' slots at each of them)."""
    from agents.backends.kv_buffers import ReusedKVCache

    cuts: list[list[int]] = []
    keep_rows = ReusedKVCache.keep_rows

    def recorded(cache, live):
        order = keep_rows(cache, live)
        cuts.append(order)
        return order

    monkeypatch.setattr(ReusedKVCache, "keep_rows", recorded)
    prompts = [chat_prompts[i % len(chat_prompts)] for i in range(24)]
    vocab = hf_backend.model.config.vocab_size
    params = SamplingParams(max_new_tokens=16, temperature=temperature, seed=3,
                            stop_token_ids=tuple(range(0, vocab, 9)))
    cut = HFBackend(hf_backend.model, hf_backend.tokenizer, drop_finished_rows=True)
    whole = HFBackend(hf_backend.model, hf_backend.tokenizer, drop_finished_rows=False)
    a, b = cut.generate(prompts, params), whole.generate(prompts, params)
    lengths = {len(g.response_ids) for g in a}
    assert len(lengths) >= 3 or temperature == 0, lengths  # rows really finished apart
    assert len(cuts) == len(lengths) - 1, cuts  # a cut at every step rows finished but the last
    assert any(order != sorted(order) for order in cuts)  # some rows moved into freed slots
    assert [g.response_ids for g in a] == [g.response_ids for g in b]
    assert [g.finish_reason for g in a] == [g.finish_reason for g in b]
    for x, y in zip(a, b):
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-5)
    _assert_logprobs_match(cut, a)


def assert_sharing_keeps_logprobs_and_gradients(model, prompts, responses, **options) -> None:
    """``response_logprobs(share_prompts=True)`` gives the plain pass's log-probs and parameter
    gradients on these rows (``options``: more ``response_logprobs`` arguments, shared pass only;
    the plain pass is one plain forward)."""

    def run(share: bool) -> tuple[torch.Tensor, list[torch.Tensor]]:
        model.zero_grad()
        logprobs, _, mask = response_logprobs(model, prompts, responses, share_prompts=share,
                                              **(options if share else {}))
        ((logprobs * mask).sum() / mask.sum()).backward()
        return logprobs.detach(), [p.grad.clone() for p in model.parameters()]

    (shared, shared_grads), (plain, plain_grads) = run(True), run(False)
    assert torch.allclose(shared, plain, atol=1e-4)
    for a, b in zip(shared_grads, plain_grads):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)


def test_shared_prompt_forward_gives_the_same_logprobs_and_gradients(hf_backend: HFBackend) -> None:
    """response_logprobs(share_prompts=True): one forward per distinct prompt, then the responses
    on its copied KV cache; log-probs and parameter gradients equal the plain pass's."""
    import copy
    import random


    rng = random.Random(0)
    prompts, responses = [], []
    for _ in range(3):
        prompt = [rng.randrange(5, 200) for _ in range(rng.randint(8, 20))]
        for _ in range(3):
            prompts.append(prompt)
            responses.append([rng.randrange(5, 200) for _ in range(rng.randint(1, 6))])
    prompts.append([7, 8, 9])
    responses.append([10, 11])
    model = copy.deepcopy(hf_backend.model).train()

    assert_sharing_keeps_logprobs_and_gradients(model, prompts, responses)


@pytest.mark.parametrize("bucket_cost", [None, 0.0])
def test_shared_prefix_forward_gives_the_same_logprobs_and_gradients(hf_backend: HFBackend,
                                                                     bucket_cost) -> None:
    """Prompts that start with one system prompt (and some repeat whole): the prefix runs once,
    then each distinct rest of a prompt, then the responses, length-bucketed or not; log-probs
    and parameter gradients equal the plain pass's."""
    import copy
    import random

    from agents.backends.scoring import common_prefix_length

    rng = random.Random(1)
    system = [rng.randrange(5, 200) for _ in range(60)]
    prompts, responses = [], []
    for group in range(4):
        prompt = system + [rng.randrange(5, 200) for _ in range(rng.randint(1, 30))]
        for _ in range(1 + group % 2 * 2):  # some prompts repeat (a GRPO group's first turn)
            prompts.append(prompt)
            responses.append([rng.randrange(5, 200) for _ in range(rng.randint(1, 6))])
    assert common_prefix_length(prompts, 128.0) >= 60
    model = copy.deepcopy(hf_backend.model).train()

    assert_sharing_keeps_logprobs_and_gradients(model, prompts, responses, bucket_cost=bucket_cost)


def test_hybrid_models_train_through_the_plain_pass() -> None:
    """Qwen3.5-style linear-attention layers keep recurrent state in the cache; with gradients
    on, repeated prompts then take the plain pass (backward works, gradients equal)."""
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "Qwen3_5ForCausalLM"):
        pytest.skip("this transformers has no Qwen3.5")
    from agents.backends.scoring import _attention_only

    config = transformers.Qwen3_5TextConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=16,
        layer_types=["linear_attention", "full_attention"])
    torch.manual_seed(0)
    model = transformers.Qwen3_5ForCausalLM(config).train()
    assert not _attention_only(model)
    prompts = [[1, 2, 3], [1, 2, 3], [4, 5, 6, 7, 8], [1, 2, 3]]
    responses = [[9, 10, 11], [12], [13, 14], [15, 16, 17, 18]]

    def grads(share: bool) -> list[torch.Tensor]:
        model.zero_grad()
        logprobs, _, mask = response_logprobs(model, prompts, responses, share_prompts=share)
        ((logprobs * mask).sum() / mask.sum()).backward()
        return [p.grad.clone() for p in model.parameters() if p.grad is not None]

    for a, b in zip(grads(True), grads(False)):
        assert torch.allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_fast_decoding_gives_the_generations_of_the_plain_loop(hf_backend: HFBackend,
                                                                chat_prompts,
                                                                temperature: float) -> None:
    """Prefill in length buckets merged into one cache, grouped-query decode attention and the
    static cache change float rounding only: the same tokens, log-probs and finish reasons as one
    left-padded batch on transformers' sdpa with a growing cache (prompts of very different
    lengths, some repeated, rows stopping at different steps)."""
    base = hf_backend.tokenizer(" ".join(chat_prompts) * 8, add_special_tokens=False)["input_ids"]
    prompts = [base[: 5 + 4 * i * i] for i in range(12)]
    assert len(set(map(len, prompts))) == 12
    prompts += [prompts[-1]] * 3 + [prompts[0]] * 2
    vocab = hf_backend.model.config.vocab_size
    params = SamplingParams(max_new_tokens=12, temperature=temperature, seed=11,
                            stop_token_ids=tuple(range(0, vocab, 13)))
    fast = HFBackend(hf_backend.model, hf_backend.tokenizer, bucket_cost=6.0)
    plain = HFBackend(hf_backend.model, hf_backend.tokenizer, length_buckets=False,
                      grouped_decode_attention=False, static_cache=False)
    from agents.backends.length_buckets import length_buckets

    assert len(length_buckets([len(p) for p in prompts], 6.0)) > 1  # really bucketed
    a, b = fast.generate_from_ids(prompts, params), plain.generate_from_ids(prompts, params)
    assert [g.response_ids for g in a] == [g.response_ids for g in b]
    assert [g.finish_reason for g in a] == [g.finish_reason for g in b]
    for x, y in zip(a, b):
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-5)
    assert hf_backend.model.config._attn_implementation == "sdpa"  # restored after decoding
    _assert_logprobs_match(fast, a)


def test_length_bucketed_forward_gives_the_same_logprobs_and_gradients(hf_backend: HFBackend,
                                                                      chat_prompts) -> None:
    """Rows run in length buckets (repeated prompts kept together, shared within a bucket):
    the log-probs, mask and gradients of one pass, in the caller's row order."""
    model = hf_backend.model
    base = hf_backend.tokenizer(" ".join(chat_prompts) * 4, add_special_tokens=False)["input_ids"]
    prompts = [base[:200]] * 3 + [base[:9], base[:150], base[:12]] + [base[:9]] * 2
    responses = [base[i:i + 2 + i % 5] for i in range(len(prompts))]

    def forward(bucket_cost):
        model.zero_grad()
        logprobs, _, mask = response_logprobs(model, prompts, responses,
                                              pad_token_id=hf_backend.pad_token_id,
                                              share_prompts=True, bucket_cost=bucket_cost)
        (logprobs * mask).sum().backward()
        return logprobs.detach(), mask, [p.grad.clone() for p in model.parameters()]

    from agents.backends.scoring import _row_buckets

    assert len(_row_buckets(prompts, responses, 10.0)) > 1  # really split
    a, b = forward(10.0), forward(None)
    assert torch.equal(a[1], b[1])
    assert torch.allclose(a[0], b[0], atol=1e-5)
    worst = max(((x - y).abs().max() / y.abs().max().clamp(min=1e-6)).item() for x, y in zip(a[2], b[2]))
    assert worst < 1e-4, worst


def test_hybrid_models_generate_through_the_plain_cache(hf_backend: HFBackend) -> None:
    """A model with linear-attention layers keeps its dynamic cache and one prefill batch (no
    buckets, no preallocated cache): the defaults give the plain loop's tokens; the bucketed
    update forward takes the plain pass per bucket and keeps the logits."""
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "Qwen3_5ForCausalLM"):
        pytest.skip("this transformers has no Qwen3.5")
    from agents.backends.hf import _full_attention_only
    from agents.backends.scoring import response_logits

    config = transformers.Qwen3_5TextConfig(
        vocab_size=hf_backend.model.config.vocab_size, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
        layer_types=["linear_attention", "full_attention"])
    torch.manual_seed(0)
    model = transformers.Qwen3_5ForCausalLM(config).eval()
    assert not _full_attention_only(model)
    prompts = [[5, 6, 7], [5, 6, 7], list(range(10, 60)), [8, 9]]
    params = SamplingParams(max_new_tokens=6, temperature=1.0, seed=2)
    fast = HFBackend(model, hf_backend.tokenizer, bucket_cost=0.0)
    plain = HFBackend(model, hf_backend.tokenizer, length_buckets=False, static_cache=False,
                      grouped_decode_attention=False)
    a, b = fast.generate_from_ids(prompts, params), plain.generate_from_ids(prompts, params)
    assert [g.response_ids for g in a] == [g.response_ids for g in b]
    responses = [g.response_ids for g in a]
    with torch.no_grad():
        bucketed = response_logits(model, prompts, responses, 0, bucket_cost=0.0)
        whole = response_logits(model, prompts, responses, 0)
    assert torch.equal(bucketed[2], whole[2])
    assert torch.allclose(bucketed[0][bucketed[2]], whole[0][whole[2]], atol=1e-5)

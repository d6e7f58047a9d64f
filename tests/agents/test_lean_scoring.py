"""lean_response_logits: the no-grad response logits of transformers' forward, packed."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agent_fixtures import shared_hf_backend  # noqa: E402

from agents.backends.scoring import response_logits  # noqa: E402


def _rows(generator: torch.Generator, prefix: list[int]) -> tuple[list[list[int]], list[list[int]]]:
    """Prompts with repeats (a group's rows), a common prefix, responses of 0-12 tokens."""
    def tokens(n: int) -> list[int]:
        return torch.randint(3, 500, (n,), generator=generator).tolist()

    distinct = [prefix + tokens(n) for n in (7, 19, 3)]
    prompts = [distinct[i] for i in (0, 0, 1, 2, 1, 0)]
    responses = [tokens(n) for n in (12, 1, 0, 5, 9, 4)]
    return prompts, responses


@pytest.mark.parametrize("prefix_length", [0, 140])
def test_lean_logits_equal_the_model_forward(prefix_length: int) -> None:
    backend = shared_hf_backend()
    model = backend.model.eval()
    generator = torch.Generator().manual_seed(prefix_length)
    prefix = torch.randint(3, 500, (prefix_length,), generator=generator).tolist()
    prompts, responses = _rows(generator, prefix)
    with torch.no_grad():
        lean, lean_ids, lean_mask = response_logits(model, prompts, responses, share_prompts=True)
        torch.set_grad_enabled(True)  # the transformers path (lean runs without gradients only)
        try:
            plain, ids, mask = response_logits(model, prompts, responses, share_prompts=False)
        finally:
            torch.set_grad_enabled(False)
    assert torch.equal(lean_ids, ids) and torch.equal(lean_mask, mask)
    assert lean.shape == plain.shape
    assert torch.allclose(lean[mask], plain.detach()[mask], atol=3e-5), (
        (lean[mask] - plain.detach()[mask]).abs().max())
    assert not lean[~mask].any()  # padded positions are 0


def test_lean_scoring_only_without_gradients_or_autocast() -> None:
    from agents.backends.scoring import _lean_scorer

    model = shared_hf_backend().model.eval()
    assert _lean_scorer(model) is None  # gradients on: the model's own forward
    with torch.no_grad():
        assert _lean_scorer(model) is not None
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert _lean_scorer(model) is None

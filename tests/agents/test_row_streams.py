"""Per-row sampling streams: a row's tokens depend on its own seed only, never on the batch,
and the sampler draws from the distribution it is given."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from agents.backends.base import SamplingParams
from agents.backends.row_streams import stream_seed, uniforms


def test_uniforms_are_uniform_and_independent_of_the_other_rows() -> None:
    seeds = [stream_seed(7, row) for row in range(20_000)]
    draws = np.stack([uniforms(seeds, step) for step in range(5)])
    assert ((draws >= 0) & (draws < 1)).all()
    assert stats.kstest(draws.ravel(), "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(draws[0], draws[1])[0, 1]) < 0.03  # steps are not correlated
    np.testing.assert_array_equal(uniforms(seeds[5:9], 3), draws[3, 5:9])  # any subset, any order
    np.testing.assert_array_equal(uniforms(seeds[9:4:-1], 2), draws[2, 9:4:-1])


def test_stream_seeds_differ_for_different_parts() -> None:
    seeds = {stream_seed(s, p, t) for s in range(10) for p in range(10) for t in range(10)}
    assert len(seeds) == 1000
    assert stream_seed(1, 2) != stream_seed(2, 1)


def test_row_seeds_must_match_the_prompts() -> None:
    params = SamplingParams(row_seeds=[1, 2])
    with pytest.raises(ValueError, match="row_seeds holds 2 seeds for 3 prompts"):
        params.check_rows(3)
    assert [p.seed for p in params.per_row(2)] == [1, 2]
    assert all(p.row_seeds is None for p in params.per_row(2))


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("streams", ["per row", "one generator"])
@pytest.mark.parametrize("top_p", [1.0, 0.85])
def test_inverse_cdf_sampling_follows_the_distribution(top_p: float, streams: str) -> None:
    from agents.backends.hf import sample_next

    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0, -30.0]]).repeat(40_000, 1)
    params = SamplingParams(temperature=0.8, top_p=top_p)
    if streams == "per row":
        picked = sample_next(logits, params, None, torch.from_numpy(
            uniforms([stream_seed(3, r) for r in range(40_000)], 0)))
    else:
        picked = sample_next(logits, params, torch.Generator().manual_seed(3))
    probs = (logits[0] / 0.8).softmax(-1)
    if top_p < 1:  # the nucleus: the smallest top set holding top_p of the mass
        keep = (probs.cumsum(-1) - probs) <= top_p
        probs = torch.where(keep, probs, 0.0)
        probs = probs / probs.sum()
    counts = torch.bincount(picked, minlength=5).double()
    assert counts[probs == 0].sum() == 0  # tokens outside the nucleus are never drawn
    seen = probs > 1e-6  # the -30 logit: expected count ~1e-12, drawn never
    assert seen.sum() >= 2
    assert counts[~seen].sum() == 0
    expected = probs[seen].double() / probs[seen].double().sum() * len(picked)
    assert stats.chisquare(counts[seen].numpy(), expected.numpy()).pvalue > 1e-3

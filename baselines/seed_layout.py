"""Where every random stream of a run gets its seed: one table, so that no two streams share
seeds by accident and a reader finds them in one place.

===============================  ===========================================================
stream                           seed
===============================  ===========================================================
training group ``g`` at step s   ``run_seed·GROUP_STRIDE + s·num_groups + g`` (the env reset
                                 seed of the group's G sub-envs: :func:`group_seeds`)
training sampling, step s        :func:`sampling_seed` ``(run_seed, s, rank)`` =
                                 ``run_seed·SAMPLING_STRIDE + s + RANK_STRIDE·rank``
validation rollout seed k        :func:`sampling_seed` at step ``VALIDATION_OFFSET + k``
final test rollout seed k        :func:`sampling_seed` at step ``TEST_OFFSET + k``
teacher premise rollout seed k   ``PREMISE_OFFSET + k`` (the same for every run seed: the
                                 premise is measured on the warm start, before training)
premise pool attempts            rollout seeds from ``PREMISE_POOL_ROLLOUT_SEED`` on (never a
                                 panel rollout seed)
reference baseline episode i     ``rollout_seed·GROUP_STRIDE + task_index`` (policy reset)
===============================  ===========================================================

Training steps stay far below ``VALIDATION_OFFSET`` (10 million), so training, validation,
test and premise samples never share a sampling seed within a run.
"""

from __future__ import annotations

GROUP_STRIDE = 1_000_003
"""A prime: the group seeds of two run seeds never meet for fewer than a million groups."""
SAMPLING_STRIDE = 7919
"""A prime: the sampling seeds of run seed ``n`` start here times ``n``."""
RANK_STRIDE = 104_729
"""A prime: data-parallel ranks sample apart."""
VALIDATION_OFFSET = 10_000_000
TEST_OFFSET = 20_000_000
PREMISE_OFFSET = 30_000_000
PREMISE_POOL_ROLLOUT_SEED = 1_000


def group_seeds(run_seed: int, step: int, num_groups: int) -> list[int]:
    """The env reset seed of each training group at ``step``."""
    base = run_seed * GROUP_STRIDE + step * num_groups
    return [base + group for group in range(num_groups)]


def sampling_seed(run_seed: int, step: int, rank: int = 0) -> int:
    """The backend's sampling seed for a training ``step`` (or an offset validation/test
    rollout seed passed as ``step``) on data-parallel ``rank``."""
    return run_seed * SAMPLING_STRIDE + step + RANK_STRIDE * rank


def baseline_policy_seed(rollout_seed: int, task_index: int) -> int:
    """The reset seed of a reference baseline policy for one task of one rollout seed."""
    return rollout_seed * GROUP_STRIDE + task_index

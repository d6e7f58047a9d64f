"""Sharded data-parallel training with PyTorch's FSDP2 (``torch.distributed.fsdp.fully_shard``).

Under ``sharding="fsdp"`` every decoder layer, then the whole model, is a ``fully_shard`` unit:
each rank keeps ``1/world_size`` of the float32 parameters, gradients and AdamW states, and
the frozen/EMA copies are sharded the same way. Forwards with gradients all-gather one layer at a
time in the compute dtype (``MixedPrecisionPolicy(param_dtype=...)``; gradients are
reduce-scattered in float32 and *summed*, as :meth:`DataParallel.sum_gradients` does for the
replicated path, since the loss is already normalised by the global token count).

Every rank must issue the same collectives in the same order:

* forwards with gradients: ranks run the same number of micro-batches
  (:meth:`baselines.learner.Learner.train_epoch` pads a rank with fewer rows with zero-weight
  micro-batches);
* no-grad forwards (generation, scoring, validation on rank 0) run inside :func:`gathered`,
  which every rank enters: the whole module is all-gathered once, forwards inside are local, and
  it is resharded on exit. That costs one full compute-dtype copy of the module per GPU while it
  lasts (the memory plan counts it).

Checkpoints of a sharded run hold the model, optimizer and teacher copies as a
``torch.distributed.checkpoint`` folder written by every rank (:func:`save_shards`,
:func:`load_shards`), next to rank 0's ``state.pt``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch


def is_sharded(module: torch.nn.Module) -> bool:
    """Whether ``module`` is an FSDP2 unit."""
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # pragma: no cover - torch without distributed
        return False
    return isinstance(module, FSDPModule)


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The transformer blocks of a Hugging Face causal LM (the ``layers`` module list)."""
    for name, module in model.named_modules():
        if name.endswith("layers") and isinstance(module, torch.nn.ModuleList):
            return list(module)
    raise ValueError(f"{type(model).__name__} has no 'layers' module list to shard per layer")


def shard(model: torch.nn.Module, compute_dtype: torch.dtype) -> torch.nn.Module:
    """``fully_shard`` each decoder layer, then ``model`` (in place); forwards gather parameters
    in ``compute_dtype``, gradients are reduce-scattered in float32 and summed over ranks."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    stored = next(model.parameters()).dtype
    policy = MixedPrecisionPolicy(
        param_dtype=compute_dtype if compute_dtype != stored else None,
        reduce_dtype=torch.float32 if stored == torch.float32 else None)
    for layer in decoder_layers(model):
        fully_shard(layer, mp_policy=policy)
    fully_shard(model, mp_policy=policy)
    for unit in model.modules():  # each unit's own setting: sum (not mean) over ranks
        if is_sharded(unit):
            unit.set_gradient_divide_factor(1.0)
            unit.set_force_sum_reduction_for_comms(True)  # plain SUM (gloo has no PREMUL_SUM)
    return model


@contextlib.contextmanager
def gathered(*modules: torch.nn.Module) -> Iterator[None]:
    """All-gather the sharded ``modules`` for local forwards inside (a collective: every rank
    enters it, whatever it then runs); unsharded modules pass through."""
    units = [unit for module in modules if is_sharded(module)
             for unit in module.modules() if is_sharded(unit)]
    if not units:
        yield
        return
    for unit in units:
        unit.set_reshard_after_forward(False, recurse=False)
        unit.unshard()
    try:
        yield
    finally:
        for unit in units:
            unit.reshard()
            unit.set_reshard_after_forward(True, recurse=False)


def clip_grad_norm_(parameters: list[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """``torch.nn.utils.clip_grad_norm_`` for sharded gradients: the global L2 norm (the local
    shards' squares summed over ranks), every gradient scaled by ``min(1, max_norm / norm)``."""
    grads = [p.grad for p in parameters if p.grad is not None]
    local = [getattr(g, "_local_tensor", g) for g in grads]
    total = torch.zeros((), dtype=torch.float64, device=local[0].device if local else "cpu")
    for g in local:
        total += g.double().pow(2).sum()
    if torch.distributed.is_initialized():
        torch.distributed.all_reduce(total)
    norm = total.sqrt().float()
    scale = min(1.0, max_norm / (float(norm) + 1e-6))
    if scale < 1.0:
        for g in local:
            g.mul_(scale)
    return norm


def full_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The whole (unsharded) state dict of ``model`` on every rank (a collective if sharded)."""
    if not is_sharded(model):
        return model.state_dict()
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))


def _sharded_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                   copies: dict[str, torch.nn.Module]) -> dict[str, Any]:
    from torch.distributed.checkpoint.state_dict import get_model_state_dict, get_state_dict

    model_state, optimizer_state = get_state_dict(model, optimizer)
    return {"model": model_state, "optimizer": optimizer_state,
            "teachers": {name: get_model_state_dict(net) for name, net in copies.items()}}


def save_shards(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                copies: dict[str, torch.nn.Module]) -> None:
    """Every rank writes its shards of the model, optimizer and teacher ``copies`` to ``folder``."""
    import torch.distributed.checkpoint as dcp

    dcp.save(_sharded_state(model, optimizer, copies), checkpoint_id=str(folder))


def load_shards(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                copies: dict[str, torch.nn.Module]) -> None:
    """Restore what :func:`save_shards` wrote (every rank reads its shards)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import set_model_state_dict, set_state_dict

    state = _sharded_state(model, optimizer, copies)
    dcp.load(state, checkpoint_id=str(folder))
    set_state_dict(model, optimizer, model_state_dict=state["model"],
                   optim_state_dict=state["optimizer"])
    for name, network in copies.items():
        set_model_state_dict(network, state["teachers"][name])

"""GPU check, offline: a randomly initialised model of real size trains a few steps with the HF
backend and with the vLLM backend, vLLM's log-probs after the weight sync match the trained
module's, and each run's tokens/s, step time and peak memory are printed against the memory plan.

``python -m baselines.gpu_check`` (or ``scripts/gpu_check.sh``) prints one ``PASS``/``FAIL``/
``SKIP`` line per check and exits 1 when one failed. Without a CUDA GPU it prints ``SKIP`` and
exits 0, unless ``--device cpu`` asks for the CPU dry mode (the HF part on a tiny model).
The model has the shipped shape (``--shape``, e.g. ``Qwen3.5-2B``; ``tiny`` for the tiny model),
random weights and the tiny model's tokenizer: nothing is downloaded.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

SYNC_TOLERANCE = 0.1
"""Largest |vLLM − trained module| log-prob difference accepted (bfloat16 kernels differ)."""


def build_model_folder(shape: str, folder: Path, device: str, seed: int = 0) -> Path:
    """A model folder of ``shape`` (random weights, the tiny tokenizer); ``tiny``: the tiny model."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.tiny_model import build_tiny_model
    from baselines.memory_plan import packaged_config

    tiny = build_tiny_model()
    if shape == "tiny":
        return tiny
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    config = packaged_config(shape)
    config.pad_token_id = tokenizer.pad_token_id
    config.eos_token_id = [tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>",
                                                                         "<|endoftext|>")]
    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def check_config(model_dir: Path, backend: str, device: str, steps: int, out: Path) -> Any:
    """A short training config on the tiny Search-QA (random weights: the check is mechanics)."""
    from baselines.config import load_preset

    vllm_kwargs = {"gpu_memory_utilization": 0.3, "enforce_eager": True} if backend == "vllm" \
        else {}
    return load_preset("cpu-smoke", model={"name": str(model_dir)}, sft={"steps": 0},
                       steps=steps, infra={"device": device},
                       rollout={"backend": backend, "num_groups": 2, "group_size": 4,
                                "max_new_tokens": 32, "vllm_kwargs": vllm_kwargs},
                       grpo={"micro_batch_size": 8, "lr": 1e-4}, out_dir=str(out))


def peak_gib(device: str) -> float | None:
    """Peak CUDA memory allocated so far (None on CPU)."""
    import torch

    if not device.startswith("cuda"):
        return None
    return torch.cuda.max_memory_allocated() / 2**30


def train_and_measure(config: Any) -> tuple[Any, dict[str, float]]:
    """Train ``config.steps`` steps; the trainer (still open) and its speed and memory."""
    import torch

    from baselines.memory_plan import GIB, plan_memory
    from baselines.trainer import Trainer

    if config.infra.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    trainer = Trainer(config)
    times = []
    for step in range(1, config.steps + 1):
        started = time.perf_counter()
        trainer.train_step(step)
        times.append(time.perf_counter() - started)
    tokens, total = trainer.timer.tokens, trainer.timer.total
    generated = tokens.get("generated", 0) / max(total.get("generation", 0.0), 1e-9)
    trained = tokens.get("trained_context", 0) / max(total.get("update", 0.0), 1e-9)
    return trainer, {
        "step_seconds": sum(times[1:] or times) / len(times[1:] or times),  # after warm-up
        "generated_per_s": generated, "trained_per_s": trained,
        "peak_gib": peak_gib(config.infra.device) or float("nan"),
        "plan_gib": plan_memory(config).total / GIB}


def weight_sync_gap(trainer: Any) -> float:
    """Largest |vLLM − trained module| log-prob over a fixed prompt and response."""
    import torch

    from agents.backends.scoring import response_logprobs

    text = "<|im_start|>user\nsearch for the capital of France<|im_end|>\n<|im_start|>assistant\n"
    prompt = trainer.tokenizer(text, add_special_tokens=False)["input_ids"]
    response = trainer.tokenizer("search[capital of France]", add_special_tokens=False)["input_ids"]
    engine = trainer.backend.score([prompt], [response])[0]
    with torch.no_grad(), trainer.precision.autocast():
        module, _, _ = response_logprobs(trainer.model, [prompt], [response],
                                         pad_token_id=trainer.pad_id, share_prompts=True)
    return float((torch.tensor(engine) - module[0, :len(response)].float().cpu()).abs().max())


def report(name: str, passed: bool | None, detail: str) -> bool:
    """Print one ``PASS``/``FAIL``/``SKIP`` line; whether it did not fail."""
    print(f"{'SKIP' if passed is None else 'PASS' if passed else 'FAIL'} {name}: {detail}",
          flush=True)
    return passed is not False


def _measured(name: str, numbers: dict[str, float]) -> bool:
    fits = not numbers["peak_gib"] > numbers["plan_gib"]  # NaN (CPU): nothing to compare
    return report(name, fits, (
        f"step {numbers['step_seconds']:.2f} s, generated {numbers['generated_per_s']:.0f} "
        f"tokens/s, trained {numbers['trained_per_s']:.0f} tokens/s, peak "
        f"{numbers['peak_gib']:.1f} GiB vs plan {numbers['plan_gib']:.1f} GiB"))


def run_backend(backend: str, model_dir: Path, args: argparse.Namespace, out: Path) -> bool:
    """Train with ``backend``; for vLLM also check the weight sync."""
    config = check_config(model_dir, backend, args.device, args.steps, out / backend)
    try:
        trainer, numbers = train_and_measure(config)
    except Exception as error:  # a check reports, it does not crash
        return report(f"{backend}-train", False, f"{type(error).__name__}: {error}")
    try:
        ok = _measured(f"{backend}-train", numbers)
        if backend == "vllm":
            gap = weight_sync_gap(trainer)
            ok &= report("vllm-weight-sync", gap <= SYNC_TOLERANCE,
                         f"max |log-prob gap| {gap:.4f} (tolerance {SYNC_TOLERANCE})")
    finally:
        trainer.close()
    return ok


def main(argv: list[str] | None = None) -> int:
    """Run the checks (see the module docstring); 0 when none failed."""
    parser = argparse.ArgumentParser(prog="python -m baselines.gpu_check", description=__doc__)
    parser.add_argument("--shape", default="Qwen3.5-2B", help="shipped model shape, or 'tiny'")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu (dry mode)")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        report("gpu-check", None, "no CUDA GPU here (use --device cpu --shape tiny for a dry run)")
        return 0
    started = time.perf_counter()
    ok = True
    with tempfile.TemporaryDirectory(prefix="sdgym-gpu-check-") as tmp:
        out = Path(tmp)
        model_dir = build_model_folder(args.shape, out / "model", args.device)
        ok &= run_backend("hf", model_dir, args, out)
        try:
            import vllm  # noqa: F401
        except ImportError:
            report("vllm-train", None, "vllm is not installed (pip install 'sdgym[vllm]')")
        else:
            if args.device.startswith("cuda"):
                ok &= run_backend("vllm", model_dir, args, out)
            else:
                report("vllm-train", None, "vLLM needs a CUDA GPU")
    report("gpu-check", ok, f"{time.perf_counter() - started:.0f} s in all")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())


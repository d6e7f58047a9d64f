#!/usr/bin/env bash
# One-GPU check, no network: a random-init model of real size trains a few steps with the HF and
# vLLM backends, vLLM's log-probs after the weight sync are compared with the trained module's,
# and tokens/s, step time and peak memory are printed against the memory plan (PASS/FAIL lines).
# Without a GPU it prints SKIP and exits 0. Extra arguments go to the Python module, e.g.
#   scripts/gpu_check.sh --shape Qwen3.5-4B --steps 2
#   scripts/gpu_check.sh --device cpu --shape tiny --steps 1   # CPU dry mode
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
PYTHON="${PYTHON:-python}"
# a hard deadline: the check must finish well inside 8 minutes on one H200
exec timeout --kill-after=10 "${GPU_CHECK_TIMEOUT:-470}" "$PYTHON" -m baselines.gpu_check "$@"

"""The README's "Use it" snippet runs as written; ``sdgym.wrappers`` is there without importing it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def use_it_snippet() -> str:
    """The first ``python`` code block under the README's ``## Use it`` heading."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Use it\n", 1)
    assert len(section) == 2, "README has no '## Use it' section"
    match = re.search(r"```python\n(.*?)```", section[1], flags=re.S)
    assert match, "README's 'Use it' section has no python block"
    return match.group(1)


def run_fresh(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter (so no earlier test has imported ``sdgym.wrappers``)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path)


def test_readme_use_it_snippet_runs(tmp_path: Path) -> None:
    snippet = use_it_snippet()
    assert "sdgym.wrappers.HidePrivileged" in snippet  # the line the issue found broken
    check = snippet + (
        "\nassert 'privileged' not in student_env.reset(seed=0)[1]"
        "\nassert isinstance(info['privileged']['expert_plan'], list)\nprint('SNIPPET-OK')\n"
    )
    result = run_fresh(check, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "SNIPPET-OK" in result.stdout


def test_wrappers_load_lazily_and_unknown_names_still_fail(tmp_path: Path) -> None:
    code = (
        "import sys, sdgym\n"
        "assert 'sdgym.wrappers' not in sys.modules, 'wrappers imported eagerly'\n"
        "assert sdgym.wrappers.HidePrivileged.__name__ == 'HidePrivileged'\n"
        "try:\n    sdgym.no_such_thing\nexcept AttributeError as e:\n    print('AE', e)\n"
    )
    result = run_fresh(code, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "AE module 'sdgym' has no attribute 'no_such_thing'" in result.stdout


def test_cli_imports_an_upper_layer_module_only_for_the_command_that_runs(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from sdgym.cli import build_parser\n"
        "build_parser().parse_args(['list'])\n"
        "upper = sorted(m for m in sys.modules if m.split('.')[0] in ('agents', 'baselines', 'benchmarks'))\n"
        "declarations = [m for m in upper if m.endswith('.commands')]\n"
        "assert declarations == ['agents.commands', 'baselines.commands', 'benchmarks.commands'], upper\n"
        "assert not [m for m in upper if m.endswith('_cli')], upper\n"
        "assert 'torch' not in sys.modules\n"
        "build_parser('baseline')\n"
        "assert 'benchmarks.protocol.baseline_cli' in sys.modules\n"
        "assert 'baselines.reference.cli' in sys.modules\n"
        "assert 'baselines.train_cli' not in sys.modules and 'agents.evaluate_cli' not in sys.modules\n"
        "assert 'benchmarks.protocol.cli' not in sys.modules\n"
        "print('LAZY-OK')\n"
    )
    result = run_fresh(code, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "LAZY-OK" in result.stdout

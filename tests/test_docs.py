"""The docs stay true to the code: the front page's two commands are the README's, every
``sdgym`` command shown in a bash block of the README or ``docs/`` parses with the real parser
(subcommand, options, choices) and names presets that exist, and every python block compiles.
(The README's "Use it" snippet runs in ``test_readme_and_lazy_import.py``.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(language: str) -> list[tuple[Path, str]]:
    return [(page, match.group(2)) for page in PAGES
            for match in BLOCK.finditer(page.read_text(encoding="utf-8"))
            if match.group(1) == language]


def sdgym_commands() -> list[tuple[str, list[str]]]:
    """``(page, argv)`` of each ``sdgym ...`` command in a bash block (continuation lines joined,
    comments and what follows ``&&`` / ``|`` dropped, ``[optional]`` parts left out)."""
    found = []
    for page, text in blocks("bash"):
        for line in text.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|\|", line):
                part = re.sub(r"\[[^\]]*\]", "", part.split(" #")[0]).strip()
                if part.startswith("sdgym "):
                    found.append((page.name, shlex.split(part)[1:]))
                elif " -m sdgym.cli " in part:
                    found.append((page.name, shlex.split(part.split(" -m sdgym.cli ")[1])))
    return found


def test_the_docs_show_sdgym_commands_at_all() -> None:
    assert len(sdgym_commands()) >= 10


@pytest.mark.parametrize(("page", "argv"), sdgym_commands(),
                         ids=lambda value: value if isinstance(value, str) else " ".join(value))
def test_each_documented_sdgym_command_parses_and_names_real_presets(page, argv) -> None:
    from sdgym.cli import build_parser

    try:
        args = build_parser(argv[0]).parse_args(argv)
    except SystemExit:
        pytest.fail(f"{page}: `sdgym {' '.join(argv)}` does not parse")
    preset = getattr(args, "preset", None)
    if preset and argv[0] == "benchmark":
        from benchmarks.protocol.matrix import load_benchmark_preset
        from benchmarks.protocol.suite import load_suite

        assert load_suite(preset) or load_benchmark_preset(preset)
    elif preset:
        from baselines.config import PRESET_DIR, preset_path

        assert preset_path(preset, PRESET_DIR, "training").is_file()


@pytest.mark.parametrize(("page", "code"), blocks("python"), ids=lambda v: getattr(v, "name", "code"))
def test_each_python_block_compiles(page, code) -> None:
    import ast

    tree = ast.parse(code, str(page))  # a SyntaxError fails the test
    assert tree.body, f"{page.name}: an empty python block"


def test_the_front_page_shows_the_readmes_two_commands() -> None:
    def commands(path: Path) -> list[str]:
        return [text.strip() for _, text in [(path, t) for p, t in blocks("bash") if p == path]
                if "pip install" in text]

    readme, index = commands(ROOT / "README.md"), commands(ROOT / "docs" / "index.md")
    assert len(readme) == 2 and index == readme


def test_the_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_every_docs_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").rglob("*.md")):
        assert str(page.relative_to(ROOT / "docs")) in nav, f"{page.name} is not in mkdocs.yml"

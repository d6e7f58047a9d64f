"""Cache entries: a torn or changed entry is rebuilt with a warning naming it; staging folders
of killed writers are removed (generic, bm25 index, ALFWorld game, SFT warm start)."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sdgym.cache import atomic_directory, usable_entry


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])


def warned_about(caplog, folder: Path) -> bool:
    return any(str(folder) in r.getMessage() and "\n" not in r.getMessage()
               for r in caplog.records if r.name == "sdgym.cache")


def test_a_torn_entry_is_removed_with_a_warning_naming_it(tmp_path, caplog) -> None:
    entry = tmp_path / "entry"
    with atomic_directory(entry) as staging:
        (staging / "data.bin").write_bytes(b"x" * 100)
    assert usable_entry(entry, "data.bin")
    (entry / "data.bin").write_bytes(b"y" * 100)  # same size, other bytes
    with caplog.at_level(logging.WARNING, "sdgym.cache"):
        assert not usable_entry(entry, "data.bin")
    assert not entry.exists() and warned_about(caplog, entry)


def test_staging_of_a_dead_writer_is_removed_a_live_ones_kept(tmp_path) -> None:
    host = socket.gethostname()
    dead = tmp_path / f".entry.tmp-{dead_pid()}@{host}-a1b2"
    live = tmp_path / f".entry.tmp-{__import__('os').getpid()}@{host}-c3d4"
    other = tmp_path / f".entry.docs.tmp-{dead_pid()}@{host}-e5f6"  # another entry's
    for folder in (dead, live, other):
        folder.mkdir()
    with atomic_directory(tmp_path / "entry") as staging:
        (staging / "f").write_text("1")
    assert not dead.exists() and live.exists() and other.exists()


def test_torn_bm25_index_is_rebuilt_with_a_warning(tmp_path, caplog) -> None:
    pytest.importorskip("bm25s")
    from sdgym.retrieval import BM25Retriever, Corpus, Passage

    corpus = Corpus(Passage(f"d{i}", t, t) for i, t in enumerate(
        ["red running shoes", "blue shoe rack", "curly hair shampoo"]))
    index = tmp_path / "index"
    expected = [h.pid for h in BM25Retriever(corpus, index_dir=index).search("shoes")]
    arrays = sorted(index.glob("*.npy"))
    assert arrays
    truncate(arrays[0])
    with caplog.at_level(logging.WARNING, "sdgym.cache"):
        rebuilt = BM25Retriever(corpus, index_dir=index)
    assert warned_about(caplog, index)
    assert [h.pid for h in rebuilt.search("shoes")] == expected


def test_bm25_index_without_manifest_that_fails_to_load_is_rebuilt(tmp_path, caplog) -> None:
    pytest.importorskip("bm25s")
    from sdgym.retrieval import BM25Retriever, Corpus, Passage

    corpus = Corpus(Passage(f"d{i}", t, t) for i, t in enumerate(["red shoes", "blue rack"]))
    index = tmp_path / "index"
    BM25Retriever(corpus, index_dir=index)
    (index / ".manifest.json").unlink()  # an index written before manifests existed
    (index / "vocab.index.json").write_text("{")
    with caplog.at_level(logging.WARNING, "sdgym.cache"):
        assert BM25Retriever(corpus, index_dir=index).search("shoes")[0].pid == "d0"
    assert warned_about(caplog, index)


def test_torn_alfworld_game_is_regenerated_with_a_warning(caplog) -> None:
    pytest.importorskip("textworld")
    from sdgym.envs.alfworld.game_io import GAME_FILE, read_game
    from sdgym.envs.alfworld.generator import game_folder

    folder = game_folder("train", 0, "small")
    original = (folder / GAME_FILE).read_text()
    truncate(folder / GAME_FILE)
    with caplog.at_level(logging.WARNING, "sdgym.cache"):
        again = game_folder("train", 0, "small")
    assert again == folder and warned_about(caplog, folder)
    assert (folder / GAME_FILE).read_text() == original
    assert read_game(folder).traj


def test_sdgym_cache_with_a_tilde_is_one_root_for_every_artefact(tmp_path, monkeypatch) -> None:
    from agents.tiny_model import default_cache_dir
    from sdgym.cache import cache_dir, cache_root
    from sdgym.envs.webshop.catalog import generated_catalog

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SDGYM_CACHE", "~/c")
    monkeypatch.chdir(tmp_path)
    assert cache_root() == home / "c"
    assert cache_dir("sft") == home / "c" / "sft" and (home / "c" / "sft").is_dir()
    assert default_cache_dir() == home / "c"  # the tiny model's root
    generated_catalog.__wrapped__("tiny", 7)  # bypass the in-process memo: write the pickle
    assert len(list((home / "c" / "webshop").glob("catalog-tiny-7-*.pkl"))) == 1
    assert not (tmp_path / "~").exists()
    monkeypatch.setenv("SDGYM_CACHE", "")
    assert cache_root() == home / ".cache" / "sdgym"


def test_file_lock_excludes_another_process_until_released(tmp_path) -> None:
    from sdgym.cache import file_lock

    lock = tmp_path / "entry.lock"
    probe = ("import sys, filelock\n"
             "try:\n    filelock.FileLock(sys.argv[1], timeout=0).acquire()\n"
             "except filelock.Timeout:\n    print('HELD')\nelse:\n    print('FREE')\n")

    def other_process_sees() -> str:
        return subprocess.run([sys.executable, "-c", probe, str(lock)], capture_output=True,
                              text=True, timeout=60, check=True).stdout.strip()

    with file_lock(lock):
        assert other_process_sees() == "HELD"
    assert other_process_sees() == "FREE"

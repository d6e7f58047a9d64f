"""benchmarks.step_walk: the files a call path enters and its re-entries."""

from __future__ import annotations

from benchmarks.step_walk import Walk, project_file, trace_files


def test_files_in_first_entered_order_and_reentries_per_file() -> None:
    walk = Walk(("a.py", "b.py", "a.py", "c.py", "b.py", "a.py"))
    assert walk.files == ["a.py", "b.py", "c.py"]
    assert walk.reentries == {"a.py": 2, "b.py": 1}


def test_only_project_files_count_and_depth_limits_the_walk() -> None:
    from sdgym.cli import parse_env_kwargs
    from sdgym.registration import entry_for

    assert project_file(__file__) is None  # tests are not step code
    assert project_file(parse_env_kwargs.__code__.co_filename) == "sdgym/cli.py"

    def both() -> dict:
        entry_for("searchqa")
        return parse_env_kwargs(["size=tiny"])

    walk, result = trace_files(both)
    assert result == {"size": "tiny"}
    assert walk.path == ("sdgym/registration.py", "sdgym/cli.py")
    shallow, _ = trace_files(both, depth=0)
    assert shallow.path == ()

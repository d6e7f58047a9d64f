"""``report.html`` beside ``report.md``: the same report as one self-contained file.

The Markdown report (:func:`benchmarks.protocol.report.write_report`) is rendered with
Python-Markdown (tables, fenced code), and every figure it links (``![name](file.png)``) is
embedded as a ``data:image/png;base64`` URI, so the file can be mailed or attached as it is: no
other file, no network, no script.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from sdgym.cache import atomic_write_text

HTML_FILE = "report.html"

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
table { border-collapse: collapse; font-size: 0.85em; margin: 1em 0; display: block;
        overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; white-space: nowrap; }
th { background: #f3f3f3; }
img { max-width: 100%; display: block; margin: 1em 0; border: 1px solid #eee; }
code { background: #f5f5f5; padding: 0 0.2em; }
"""

_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+\.png)\)")


def _embedded(markdown_text: str, folder: Path) -> str:
    """``markdown_text`` with each local PNG image link replaced by a data URI (a missing file
    becomes a visible note, never a broken link)."""

    def replace(match: re.Match) -> str:
        alt, name = match.group(1), match.group(2)
        path = folder / name
        if "/" in name or not path.is_file():
            return f"*(figure {html.escape(name)} is missing)*"
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f"![{alt}](data:image/png;base64,{data})"

    return _IMAGE.sub(replace, markdown_text)


def render_html(markdown_text: str, folder: Path, title: str) -> str:
    """The whole HTML document of a Markdown report whose figures lie in ``folder``."""
    import markdown

    body = markdown.markdown(_embedded(markdown_text, folder), extensions=["tables", "fenced_code"])
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n")


def write_html_report(report_md: Path) -> Path | None:
    """Write ``report.html`` beside ``report_md``; None where Python-Markdown is not installed
    (the Markdown report stands alone then)."""
    try:
        import markdown  # noqa: F401
    except ImportError:
        return None
    text = report_md.read_text(encoding="utf-8")
    first = text.splitlines()[0] if text else ""
    title = first.removeprefix("# ").strip() or "sdgym report"
    path = report_md.with_name(HTML_FILE)
    atomic_write_text(path, render_html(text, report_md.parent, title))
    return path

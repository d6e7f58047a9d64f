"""A :class:`~sdgym.envs.webshop.pages.Page` as an interactive HTML document (the Flask site's).

The document shows exactly the page's elements, in order, each in one tag that carries its kind
(``data-kind``), its option group (``data-group``) and whether it is marked (``data-marked``).
Every clickable is a submit button of a POST form whose ``target`` is the clickable's name (the
name :meth:`Page.clickables` gives it), so a click on the site sends the same command the text
env would apply; the search page holds a search form (``#search_input``). Elements use
``white-space: pre-wrap`` and no text transforms, so the browser's ``innerText`` of each one is
the element's text and :data:`READ_PAGE_SCRIPT` rebuilds the same :class:`Page` from the DOM.

Nothing else on the document has a ``data-kind``: the error banner, the session footer and the
"new session" link are for people and are not part of what an agent observes.
"""

from __future__ import annotations

from html import escape

from sdgym.envs.webshop.pages import BUTTON, LINK, OPTION, Page

STYLE = """
body { font-family: sans-serif; max-width: 60rem; margin: 1rem auto; padding: 0 1rem; }
[data-kind] { white-space: pre-wrap; margin: 0.2rem 0; }
form.click { display: inline; margin: 0; }
button[data-kind] { margin: 0.2rem 0.3rem 0.2rem 0; cursor: pointer; }
button[data-kind="product_link"] { border: none; background: none; color: #06c;
  text-decoration: underline; font-size: 1.1rem; padding: 0; display: block; }
button[data-kind="option"] { border: 1px solid #888; border-radius: 1rem; background: #fff; }
button[data-marked="1"] { background: #ffd470; }
#search_input { width: 30rem; }
.error { color: #b00; }
.footer { margin-top: 2rem; color: #888; font-size: 0.8rem; }
"""


def render_document(page: Page, session_id: str, error: str | None = None) -> str:
    """The full HTML document of ``page`` in session ``session_id`` (``error``: shown on top)."""
    prefix = f"/{escape(session_id, quote=True)}"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>WebShop</title>',
        f"<style>{STYLE}</style></head>",
        f'<body data-page="{escape(page.kind, quote=True)}">',
    ]
    if error:
        parts.append(f'<p class="error" role="alert">{escape(error)}</p>')
    names = {id(element): name for name, element in page.clickables().items()}
    for element in page.elements:
        attributes = (
            f'data-kind="{element.kind}" data-group="{escape(element.group, quote=True)}" '
            f'data-marked="{int(element.marked)}"'
        )
        text = escape(element.text)
        if element.kind in (BUTTON, LINK, OPTION) and id(element) in names:
            target = escape(names[id(element)], quote=True)
            parts.append(
                f'<form class="click" method="post" action="{prefix}/click">'
                f'<button type="submit" name="target" value="{target}" {attributes}>{text}'
                "</button></form>"
            )
        elif element.kind == BUTTON and page.has_search_bar:  # the search form's own button
            parts.append(
                f'<form id="search_form" method="post" action="{prefix}/search">'
                '<input id="search_input" type="text" name="search_query" autofocus> '
                f'<button id="search_button" type="submit" {attributes}>{text}</button></form>'
            )
        else:
            parts.append(f"<p {attributes}>{text}</p>")
    parts.append(
        f'<p class="footer">session {escape(session_id)} · <a href="/">new session</a></p>'
    )
    parts.append("</body></html>")
    return "\n".join(parts)


READ_PAGE_SCRIPT = """
const nodes = Array.from(document.querySelectorAll('[data-kind]'));
return [document.body ? document.body.dataset.page || '' : '',
        nodes.map(node => [node, node.dataset.kind, node.innerText,
                           node.dataset.group || '', node.dataset.marked === '1'])];
"""
"""JavaScript returning ``[page kind, [[element, kind, text, group, marked], ...]]`` of the
document in the browser: what :func:`render_document` wrote, as the browser shows it."""

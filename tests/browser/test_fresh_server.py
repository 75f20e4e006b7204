"""A shared page link works as the very first request a freshly started server gets.

A student clicks the teacher's link (say `/masks`) minutes after `streamlit run` started:
the first run of the server process must show that page, with no "Page not found" dialog.
Each page gets its own fresh server; they start side by side to keep the test short.
"""

from __future__ import annotations

import ast

import pytest
from conftest import ROOT, _wait_for_health, start_streamlit, stop_streamlit
from plotly_page import ARTIFACTS

from ui.i18n import translate


def _pages() -> list[tuple[str, str]]:
    """(URL path, English title) of every page, read from app.py's PAGES table (not imported:
    importing app.py would run the Streamlit app). The first page is the default one, whose
    address is the root: Streamlit gives a default page no other path."""
    tree = ast.parse((ROOT / "app.py").read_text())
    table = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(target, "id", "") == "PAGES" for target in node.targets)
    )
    return [
        ("" if index == 0 else url_path, translate(title_key, "en"))
        for index, (_, title_key, _, url_path) in enumerate(ast.literal_eval(table))
    ]


PAGES = _pages()

DIALOG_RECORDER = """
window.__dialogs = [];
new MutationObserver(() => {
    for (const dialog of document.querySelectorAll('[role="dialog"]')) {
        const text = dialog.innerText.trim();
        if (text && !window.__dialogs.includes(text)) window.__dialogs.push(text);
    }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""
"""Records the text of every dialog that ever opens, even one closed again before the test looks."""


@pytest.fixture(scope="module")
def fresh_servers():
    """One just-started `streamlit run app.py` per page, started together; none has served a run yet."""
    servers = {url_path: start_streamlit(f"fresh-server-{url_path or 'root'}.log") for url_path, _ in PAGES}
    try:
        for url, process, _ in servers.values():
            _wait_for_health(url, process)
        yield {url_path: url for url_path, (url, _, _) in servers.items()}
    finally:
        for _, process, log in servers.values():
            stop_streamlit(process, log)


@pytest.mark.parametrize(("url_path", "title"), PAGES, ids=[url_path or "root" for url_path, _ in PAGES])
def test_a_page_link_is_the_first_request_of_a_fresh_server(browser, fresh_servers, url_path, title):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    tab = context.new_page()
    tab.add_init_script(DIALOG_RECORDER)
    try:
        tab.goto(f"{fresh_servers[url_path]}/{url_path}")
        current = tab.locator('[data-testid="stSidebarNav"] a[aria-current="page"]')
        current.wait_for(timeout=60_000)
        tab.wait_for_function(
            "() => document.querySelector('[data-testid=\"stApp\"]')"
            ".getAttribute('data-test-script-state') === 'notRunning'",
            timeout=90_000,
        )
        tab.wait_for_timeout(500)
        dialogs = tab.evaluate("window.__dialogs")
        assert not dialogs, f"/{url_path} on a fresh server opened a dialog: {dialogs}"
        # the link holds the icon's ligature name, then the title
        assert current.inner_text().strip().splitlines()[-1] == title, "the sidebar marks the requested page as current"
        address = f"{fresh_servers[url_path]}/{url_path}".rstrip("/")
        assert tab.url.split("?")[0].rstrip("/") == address, "the address bar keeps the link"
        assert tab.locator('[data-testid="stMain"] h1').count() > 0, "the page drew its heading"
        assert not tab.locator('[data-testid="stException"]').count()
    finally:
        tab.screenshot(path=str(ARTIFACTS / f"fresh-server-{url_path or 'root'}.png"))
        context.close()


def test_every_page_file_is_named_after_its_address_and_routes_through_the_app():
    """The cause of the dialog: until a server process first calls `st.navigation`, Streamlit
    treats `pages/` beside app.py as an old-style multipage app and looks a link up among the
    folder's file names. A page file named after its URL path is found there; its first call,
    `run_through_app()`, then hands the run to app.py (see ui/first_run.py)."""
    tree = ast.parse((ROOT / "app.py").read_text())
    table = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(target, "id", "") == "PAGES" for target in node.targets)
    )
    for path, _, _, url_path in ast.literal_eval(table):
        assert path == f"pages/{url_path}.py", f"{path} should be named after its address /{url_path}"
        page = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        statements = [node for node in page.body if not isinstance(node, (ast.Import, ast.ImportFrom))]
        first_statement = statements[1]  # after the docstring
        assert ast.unparse(first_statement) == "run_through_app()", f"{path} must begin with run_through_app()"

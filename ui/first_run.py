"""A page's link opened as a freshly started server's first request still runs through app.py.

Until a server process first calls `st.navigation`, Streamlit (1.67) treats a `pages/` folder
beside the main script as an old-style multipage app: the first link to `/masks` runs
`pages/masks.py` on its own, without app.py's page config, its link settings or its menu. Each
page therefore begins with `run_through_app()`. The page files are named after their URL paths,
so the old-style lookup finds the page (no "Page not found" dialog) and app.py's menu then
resolves the same address to the same page.
"""

import runpy
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

APP = Path(__file__).resolve().parents[1] / "app.py"


def run_through_app() -> None:
    """On the old-style first run, run app.py instead (it routes back to this page) and stop."""
    if PagesManager.uses_pages_directory:
        runpy.run_path(str(APP), run_name="__main__")
        st.stop()

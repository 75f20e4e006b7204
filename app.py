"""Attention Explorer: the entry point routes to the pages; the pages describe the UI."""

import streamlit as st

from ui.state import t

st.set_page_config(page_title="Attention Explorer", page_icon="🔎", layout="wide")

PAGES = (
    # (file, string key of the title, icon, URL path)
    ("pages/step_through.py", "page.step_through", "👣", "step"),
    ("pages/why_sqrt_dk.py", "page.why_sqrt_dk", "📏", "why-sqrt-dk"),
    ("pages/follow_cell.py", "page.follow_cell", "🔬", "cell"),
    ("pages/mask_lab.py", "page.mask_lab", "🎭", "masks"),
    ("pages/multi_head.py", "page.multi_head", "🧠", "multi-head"),
    ("pages/your_numbers.py", "page.your_numbers", "✍️", "your-numbers"),
    ("pages/compare.py", "page.compare", "⚖️", "compare"),
)

navigation = st.navigation(
    [
        st.Page(path, title=t(title_key), icon=icon, url_path=url_path, default=index == 0)
        for index, (path, title_key, icon, url_path) in enumerate(PAGES)
    ]
)
navigation.run()

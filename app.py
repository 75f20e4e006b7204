"""Attention Explorer: the entry point routes to the pages; the pages describe the UI."""

from pathlib import Path

import streamlit as st
from PIL import Image

from ui.cache import freeze_long_lived_objects, release_page_results
from ui.language import t
from ui.url import load_url_once

# A local favicon: a Material icon here would be fetched from a font CDN that classrooms may block.
FAVICON = Image.open(Path(__file__).with_name("assets") / "favicon.png")
load_url_once()  # a shared link may set the language, which the tab and page titles below need
st.set_page_config(page_title=t("app.title"), page_icon=FAVICON, layout="wide")

PAGES = (
    # (file, string key of the title, icon (Streamlit ships the Material font: no CDN), URL path)
    ("pages/step.py", "page.step_through", ":material/footprint:", "step"),
    ("pages/why-sqrt-dk.py", "page.why_sqrt_dk", ":material/straighten:", "why-sqrt-dk"),
    ("pages/positional.py", "page.positional", ":material/format_list_numbered:", "positional"),
    ("pages/cell.py", "page.follow_cell", ":material/biotech:", "cell"),
    ("pages/masks.py", "page.mask_lab", ":material/theater_comedy:", "masks"),
    ("pages/multi-head.py", "page.multi_head", ":material/hub:", "multi-head"),
    ("pages/your-numbers.py", "page.your_numbers", ":material/edit_note:", "your-numbers"),
    ("pages/compare.py", "page.compare", ":material/compare:", "compare"),
    ("pages/quiz.py", "page.quiz", ":material/quiz:", "quiz"),
    ("pages/real-model.py", "page.real_model", ":material/neurology:", "real-model"),
    ("pages/decoder.py", "page.decoder", ":material/edit_square:", "decoder"),
)

navigation = st.navigation(
    [
        st.Page(path, title=t(title_key), icon=icon, url_path=url_path, default=index == 0)
        for index, (path, title_key, icon, url_path) in enumerate(PAGES)
    ]
)
try:
    navigation.run()
finally:
    release_page_results()  # a session keeps its settings, not its (shared, cached) traces: ui/cache.py
    freeze_long_lived_objects()  # later runs' garbage collections visit only new objects: ui/cache.py

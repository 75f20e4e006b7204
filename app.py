"""Attention Explorer: the entry point routes to the pages; the pages describe the UI."""

import streamlit as st

from ui.state import t

st.set_page_config(page_title="Attention Explorer", page_icon="🔎", layout="wide")

pages = [
    st.Page("pages/step_through.py", title=t("page.step_through"), icon="👣", url_path="step", default=True),
]
st.navigation(pages).run()

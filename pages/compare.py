"""Placeholder: this page is being built."""

import streamlit as st

from ui.state import controls, t

settings = controls()
st.title(t("page.compare"))

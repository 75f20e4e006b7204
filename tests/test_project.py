"""The project's promises about itself: the README's commands and example are the real ones."""

from __future__ import annotations

import re
from pathlib import Path

import plotly.graph_objects as go

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _fenced_blocks(language: str = "") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_ci_runs_the_readme_test_command():
    test_command = next(block.strip() for block in _fenced_blocks() if "pytest" in block)
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_app_command_installs_the_requirements_and_runs_the_app():
    app_command = next(block.strip() for block in _fenced_blocks() if "streamlit run" in block)
    assert "requirements.txt" in app_command and app_command.endswith("streamlit run app.py")


def test_readme_notebook_example_runs(monkeypatch):
    monkeypatch.setattr(go.Figure, "show", lambda self, *args, **kwargs: None)
    (example,) = _fenced_blocks("python")
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    assert namespace["raw"].weights.sum(axis=-1).round(12).tolist() == [1.0, 1.0, 1.0]


def test_readme_shows_screenshots_that_exist():
    for path in re.findall(r"\]\((assets/[^)]+)\)", README):
        assert (ROOT / path).is_file(), path

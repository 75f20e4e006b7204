"""Importing the engine must stay light: no UI or table libraries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
HEAVY_PREFIXES = ("streamlit", "plotly", "pandas")

CHECK = f"""
import sys
import attention_core
heavy = sorted(name for name in sys.modules if name.startswith({HEAVY_PREFIXES!r}))
assert not heavy, f"import attention_core pulled in {{heavy}}"
print("ok")
"""


def test_import_attention_core_does_not_load_streamlit_plotly_or_pandas():
    """A fresh `import attention_core` loads no module under streamlit, plotly or pandas."""
    result = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"

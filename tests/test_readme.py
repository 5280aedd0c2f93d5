"""The README's Python blocks run as written: top to bottom, in one namespace, in order."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

#: A fenced block opened by ```python at the start of a line, up to the closing fence.
PYTHON_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line number of its first line, source)`` of every ```python block of ``text``, in order."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in PYTHON_BLOCK.finditer(text)]


def test_block_extraction():
    text = "intro\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (9, "y = x + 1\n")]


def test_readme_blocks_run(tmp_path, monkeypatch):
    """Executed in a scratch directory, so that files a block writes stay out of the tree."""
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 4, "the README lost its quick starts"
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    for line, source in blocks:
        # padded so that tracebacks give the README's own line numbers
        code = compile("\n" * (line - 1) + source, str(README), "exec")
        try:
            exec(code, namespace)  # noqa: S102 - the README's own examples
        except Exception as exc:  # noqa: BLE001 - name the block that failed
            pytest.fail(f"README.md block at line {line} raised {type(exc).__name__}: {exc}")

"""The kernel module in a model's reply: the last fenced Python block that defines ModelNew.

    code, why_not = extract_code(reply_text)   # (source, "") or (None, one line saying what was wrong)

A reasoning model's <think>…</think> section is ignored. A reply that is bare Python (no fences) defining
ModelNew is taken whole. The code is not judged here: the referee's static check and worker do that.
"""

from __future__ import annotations

import ast
import re

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+.-]*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.DOTALL | re.MULTILINE)
_STRAY = re.compile(r"^[ \t]*```", re.MULTILINE)
_PYTHON = ("python", "py", "python3", "")
_DEFINES = re.compile(r"^class\s+ModelNew\b|^ModelNew\s*=", re.MULTILINE)


def extract_code(reply: str) -> tuple[str | None, str]:
    text = _THINK.sub("", reply or "")
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    python = [body for lang, body in blocks if lang in _PYTHON]
    defining = [body for body in python if _DEFINES.search(body)]
    if defining:
        return defining[-1].rstrip() + "\n", ""
    if not blocks and _bare_module(text):
        return text.strip() + "\n", ""
    if _STRAY.search(_FENCE.sub("", text)):
        return None, "the reply was cut off inside its code block (no closing ```)"
    if python:
        return None, "no ```python block in the reply defines class ModelNew"
    if not (reply or "").strip():
        return None, "the reply was empty"
    return None, "the reply has no ```python block with the kernel module"


def _bare_module(text: str) -> bool:
    if not _DEFINES.search(text):
        return False
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True

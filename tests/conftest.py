"""Test tiers (see pyproject markers): unit (no mark), interpreter (TRITON_INTERPRET=1 in worker processes,
CPU), gpu (needs a CUDA or ROCm GPU: skipped where torch sees none)."""

from __future__ import annotations

import pytest


def _gpu_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_addoption(parser):
    parser.addoption("--accept-golden", action="store_true", default=False,
                     help="rewrite the golden files under tests/golden/ from the current output instead of comparing")


@pytest.fixture
def accept_golden(request) -> bool:
    """True under `pytest --accept-golden`: golden tests rewrite their files instead of comparing."""
    return bool(request.config.getoption("--accept-golden"))

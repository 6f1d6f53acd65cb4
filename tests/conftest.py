"""Test tiers (see pyproject markers and the README): unit (none of the tier marks below; marked `unit` here at
collection, so `pytest -m unit` selects it), capture (torch.export of models, CPU), integration (a command or the
pipeline end to end: child processes, the referee's processes), interpreter (TRITON_INTERPRET=1 in worker
processes, CPU), compile (cross-compiles with Triton, CPU), gpu (needs a CUDA or ROCm GPU: skipped where torch
sees none). Shared helpers live in tests/helpers.py; shared fixtures here."""

from __future__ import annotations

import pytest


def _gpu_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


# a test with none of these marks is a unit test
TIERS = ("capture", "integration", "interpreter", "compile", "gpu")


@pytest.hookimpl(tryfirst=True)   # before pytest's own -m selection, which must see the unit mark
def pytest_collection_modifyitems(config, items):
    for item in items:
        if not any(item.get_closest_marker(tier) for tier in TIERS):
            item.add_marker(pytest.mark.unit)
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


@pytest.fixture
def library_conv(monkeypatch):
    """Codegen without its convolution family (codegen/conv.py): every conv anchor is a library group, as before
    the generator, for the tests of the library path (codegen/library.py, memory_format.py) on plain convolutions.
    helpers.prepared keys its plans by the families, so no plan made here leaks into another test."""
    from kerntailor.codegen import FAMILIES
    from kerntailor.search.families import SPACE_FAMILIES

    monkeypatch.delitem(FAMILIES, "conv")
    monkeypatch.delitem(SPACE_FAMILIES, "conv")


@pytest.fixture
def llm(monkeypatch, tmp_path):
    """Start a FakeLLM (tests/helpers.py) with a script and point the proposer at it through the environment.
    Skipped without the `llm` extra (the openai client)."""
    pytest.importorskip("openai")
    from helpers import FakeLLM

    servers = []
    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)

    def start(script: list):
        fake = FakeLLM(script)
        servers.append(fake)
        monkeypatch.setenv("KERNTAILOR_LLM_BASE_URL", fake.url)
        monkeypatch.setenv("KERNTAILOR_LLM_MODEL", fake.model)
        monkeypatch.setenv("KERNTAILOR_LLM_API_KEY", "test-key")
        return fake

    yield start
    for fake in servers:
        fake.close()

"""The static check (ast) on small candidate sources. Unit tier: nothing runs."""

from __future__ import annotations

import textwrap

import pytest

from kerntailor.errors import CandidateError
from kerntailor.verify.static import parse_candidate, static_check

HEADER = """
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""


def candidate(forward_body: str, init_body: str = "pass", extra: str = "") -> str:
    body = textwrap.indent(textwrap.dedent(forward_body).strip(), " " * 8)
    init = textwrap.indent(textwrap.dedent(init_body).strip(), " " * 8)
    return HEADER + textwrap.dedent(extra) + f"""

class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()
{init}

    def forward(self, x, w=None):
{body}
"""


def rules(src: str, **kw) -> list[str]:
    return [f.message for f in static_check(src, tensor_args=kw.pop("tensor_args", [True, True]), **kw)]


CLEAN_FORWARD = """
    x = x.contiguous().view(-1)
    n = x.numel()
    y = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    scale = 1.0 / math.sqrt(x.shape[-1] * 2 + 1)
    _k[grid](x, y, n, BLOCK=1024)
    if x.is_cuda and n > 0:
        torch.cuda.synchronize()
    return y.reshape(x.shape).to(torch.float32)
"""


def test_kernel_launches_allocation_and_views_are_clean():
    assert rules(candidate(CLEAN_FORWARD)) == []


@pytest.mark.parametrize("body, needle", [
    ("return torch.softmax(x, dim=1)", "torch.softmax"),
    ("return F.relu(x)", "torch.nn.functional.relu"),
    ("return torch.nn.functional.gelu(x)", "torch.nn.functional.gelu"),
    ("return x @ w", "@ operator"),
    ("return torch.matmul(x, w)", "torch.matmul"),
    ("return x.sum(dim=1)", ".sum()"),
    ("return x.exp()", ".exp()"),
    ("return x + w", "Add operator"),
    ("return x * 2", "Mult operator"),
    ("return -x", "unary"),
    ("return torch.where(x > 0, x, w)", "torch.where"),
    ("return torch.ops.aten.relu(x)", "torch.ops.aten.relu"),
    ("return getattr(torch, 'soft' + 'max')(x, 1)", "getattr"),
    ("return torch.compile(lambda t: t)(x)", "torch.compile"),
    ("y = torch.empty_like(x)\ny += x\nreturn y", "updates a tensor"),
])
def test_library_compute_on_the_forward_path_is_flagged(body, needle):
    found = rules(candidate(body))
    assert any(needle in m for m in found), found


def test_nn_layer_call_is_flagged_but_holding_its_parameters_is_not():
    init = "self.linear = nn.Linear(4, 4)"
    assert any("nn layer self.linear" in m for m in rules(candidate("return self.linear(x)", init)))
    uses_weights = """
        y = torch.empty((x.shape[0], self.linear.weight.shape[0]), device=x.device)
        _k[(1,)](x, self.linear.weight, y, 1, BLOCK=16)
        return y
    """
    assert rules(candidate(uses_weights, init)) == []


def test_helpers_reached_from_forward_are_checked_and_init_is_not():
    extra = """
    def _helper(t):
        return torch.softmax(t, 0)


    def _unused(t):
        return torch.softmax(t, 0)
    """
    found = rules(candidate("return _helper(x)", extra=extra))
    assert len(found) == 1 and "torch.softmax" in found[0]
    assert rules(candidate("return x", "self.ref = torch.softmax(torch.ones(3), 0)")) == []


def test_arithmetic_on_integer_arguments_is_fine():
    src = candidate("n = w * 2 + 1\ny = torch.empty(n)\nreturn y")
    assert rules(src, tensor_args=[True, False]) == []
    assert rules(src, tensor_args=[True, True]) != []


def test_from_imports_are_resolved():
    src = HEADER + """
from torch import softmax as sm


class ModelNew(nn.Module):
    def forward(self, x):
        return sm(x, 1)
"""
    assert any("torch.softmax" in m for m in rules(src))


def test_reference_model_is_flagged_even_with_allow_library():
    src = HEADER + """
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


class ModelNew(Model):
    pass
"""
    found = static_check(src, allow_library=True)
    assert [f.rule for f in found] == ["reference"]
    found = static_check("from softmax_rows import Model\nModelNew = Model\n", problem_stem="softmax_rows",
                         allow_library=True)
    assert {f.rule for f in found} == {"reference"}


def test_dynamic_code_and_unknown_libraries_are_flagged():
    assert any(f.rule == "dynamic" for f in static_check(candidate("return eval('x')")))
    found = static_check("import liger_kernel\n" + candidate("return x"))
    assert any("liger_kernel" in f.message for f in found)
    assert not static_check("import liger_kernel\n" + candidate("return x"), allow_library=True)


def test_allow_library_switches_the_library_rules_off():
    assert static_check(candidate("return torch.softmax(x, 1)"), allow_library=True) == []


def test_torch_inside_a_kernel_is_flagged():
    src = HEADER + """
@triton.jit
def _bad(x_ptr):
    torch.exp(x_ptr)


class ModelNew(nn.Module):
    def forward(self, x):
        return x
"""
    assert any("kernel _bad calls torch.exp" in m for m in rules(src))


def test_parse_candidate_errors_are_typed(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def broken(:\n")
    with pytest.raises(CandidateError, match="syntax error"):
        parse_candidate(bad)
    empty = tmp_path / "empty.py"
    empty.write_text("import torch\n")
    with pytest.raises(CandidateError, match="defines no ModelNew"):
        parse_candidate(empty)
    with pytest.raises(CandidateError, match="cannot read"):
        parse_candidate(tmp_path / "missing.py")


def test_a_package_the_reference_imports_may_be_imported():
    """kernel.py carries the reference's imports (its constructor and _reference_forward read them: KernelBench's
    Mamba2 files import einops); any other third-party import stays a finding."""
    from kerntailor.verify.static import problem_imports

    reference = "import torch\nimport torch.nn as nn\nfrom einops import rearrange, reduce\nimport numpy as np\n"
    assert problem_imports(reference) == {"torch", "einops", "numpy"}
    assert problem_imports("def broken(:") == frozenset()
    candidate = "import torch\nfrom einops import rearrange\nimport scipy.linalg\n"
    flagged = [f.message for f in static_check(candidate)]
    assert any("imports einops" in m for m in flagged) and any("imports scipy.linalg" in m for m in flagged)
    flagged = [f.message for f in static_check(candidate, reference_imports=problem_imports(reference))]
    assert not any("einops" in m for m in flagged) and any("imports scipy.linalg" in m for m in flagged)

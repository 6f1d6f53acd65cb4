"""ModelNew is built by the reference's own constructor (codegen/constructor.py), and kernel.py meets KernelBench's
contract: loaded alone in a fresh process, `ModelNew(*get_init_inputs())` builds (with the same weights as
`Model(*get_init_inputs())` under the same seed, which is how KernelBench compares), takes the reference's
state_dict, and returns the same outputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from kerntailor.codegen.constructor import attribute_text, reference_constructor
from kerntailor.problem import load_problem

DATA = Path(__file__).parent / "data" / "module_trees"
KERNELBENCH = Path(__file__).parent / "data" / "kernelbench"


def _problem(tmp_path: Path, source: str):
    path = tmp_path / "p.py"
    head, _, tail = source.partition("\nn = 32\n")
    path.write_text(textwrap.dedent(head) + ("\nn = 32\n" + tail if tail else ""))
    return load_problem(path)


TAIL = """
n = 32


def get_inputs():
    return [torch.randn(n, n)]


def get_init_inputs():
    return [n]
"""


def test_super_with_the_class_name_builds_modelnew(tmp_path):
    ctor = reference_constructor(_problem(tmp_path, """
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            \"\"\"doc\"\"\"
            def __init__(self, n):
                super(Model, self).__init__()
                self.lin = nn.Linear(n, n)

            def forward(self, x):
                return self.lin(x)
        """ + TAIL))
    assert "super(ModelNew, self).__init__()" in ctor.body
    assert "Model," not in ctor.body.replace("ModelNew", "")
    assert "def forward" not in ctor.body and '"""doc"""' not in ctor.body
    assert ctor.definitions == () and ctor.bases == "nn.Module" and ctor.forward_args == ("x",)


def test_copies_what_the_constructor_and_forward_need_and_nothing_else(tmp_path):
    """Model's forward is carried as _reference_forward (kernel.py's backward), so its reads are copied too."""
    ctor = reference_constructor(_problem(tmp_path, """
        import math
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch import nn as unused_alias

        WIDTH = 3
        UNUSED = 7
        NEVER = 11

        def width(n):
            return n * WIDTH

        def unrelated():
            return UNUSED

        def never_read():
            return NEVER

        class Block(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.lin = nn.Linear(n, width(n))

            def forward(self, x):
                return F.relu(self.lin(x)) * math.pi

        class Model(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.block = Block(n)

            def forward(self, x):
                return self.block(x) + unrelated()
        """ + TAIL))
    text = "\n".join(ctor.definitions)
    for needed in ("import math", "import torch.nn.functional as F", "WIDTH = 3", "def width", "class Block",
                   "UNUSED = 7", "def unrelated"):   # the last two: read by forward only
        assert needed in text
    assert ctor.reference_forward.startswith("def _reference_forward(self, x):")
    for not_needed in ("NEVER", "def never_read", "get_inputs", "get_init_inputs", "class Model", "n = 32",
                       "import torch\n", "unused_alias"):
        assert not_needed not in text


def test_a_parameter_named_like_a_global_is_not_a_read_of_it(tmp_path):
    ctor = reference_constructor(_problem(tmp_path, """
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.lin = nn.Linear(n, n)

            def forward(self, x):
                return self.lin(x)
        """ + TAIL))
    assert not any("n = 32" in d for d in ctor.definitions)


def test_attribute_text_for_every_container():
    model = torch.nn.Module()
    model.seq = torch.nn.Sequential(torch.nn.Linear(2, 2))
    model.layers = torch.nn.ModuleList([torch.nn.Linear(2, 2)])
    model.heads = torch.nn.ModuleDict({"q": torch.nn.Linear(2, 2), "0": torch.nn.Linear(2, 2)})
    model.add_module("odd name", torch.nn.Linear(2, 2))
    model.register_buffer("class", torch.zeros(1))   # a keyword: not an attribute name
    cases = {"seq.0.weight": "self.seq[0].weight", "layers.0.bias": "self.layers[0].bias",
             "heads.q.weight": "self.heads['q'].weight", "heads.0.bias": "self.heads['0'].bias",
             "odd name.weight": "self.get_submodule('odd name').weight", "class": "getattr(self, 'class')"}
    for target, text in cases.items():
        assert attribute_text(model, target) == text
        assert eval(text, {"self": model}) is model.get_parameter(target) if "class" not in target \
            else eval(text, {"self": model}) is model.get_buffer(target)


def test_a_forward_parameter_get_inputs_leaves_out_keeps_its_default_and_is_checked():
    """forward(x, mask=None) with get_inputs() giving x alone (KernelBench's NetVLAD files refused before: "get_inputs()
    gives 1 values, forward() takes 2"): ModelNew.forward keeps `mask=None` and raises if it is given anything else;
    a default that is not a literal is still refused."""
    import ast

    from helpers import make_module
    from kerntailor.codegen import CodegenUnsupported
    from kerntailor.codegen.emit import _forward_arg_checks

    problem = DATA / "forward_default_none.py"
    assert reference_constructor(load_problem(problem)).forward_defaults == (("mask", "None"),)
    source = make_module(problem).source
    assert "def forward(self, x, mask=None):" in source and "if mask is not None:" in source
    ast.parse(source)
    spec = load_problem(problem)
    with pytest.raises(CodegenUnsupported, match="forward\\(\\) takes 2"):
        _forward_arg_checks(spec, ("x", "mask"), (("mask", "torch.ones(3)"),))
    with pytest.raises(CodegenUnsupported, match="forward\\(\\) takes 2"):
        _forward_arg_checks(spec, ("x", "mask"))


CONTRACT = """
import importlib.util, json, sys, torch
problem_path, kernel_path = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("candidate", kernel_path)
candidate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(candidate)
assert not any(m.startswith("kerntailor") for m in sys.modules), "kernel.py imported kerntailor"
ref = {}
exec(compile(open(problem_path).read(), problem_path, "exec"), ref)
init = ref["get_init_inputs"]()
torch.manual_seed(42); model = ref["Model"](*init)
torch.manual_seed(42); new = candidate.ModelNew(*init)          # KernelBench: same seed, no state_dict
torch.manual_seed(7); inputs = ref["get_inputs"]()
with torch.no_grad():
    want, got = model(*inputs), new(*inputs)
    same_seed = bool(torch.allclose(got, want, atol=1e-2, rtol=1e-2))
    new.load_state_dict(model.state_dict(), strict=True)
    loaded = bool(torch.allclose(new(*inputs), want, atol=1e-2, rtol=1e-2))
print(json.dumps({"same_seed": same_seed, "state_dict": loaded}))
"""


@pytest.mark.interpreter
@pytest.mark.parametrize("problem", [DATA / "helper_block.py", DATA / "resnet_style.py",
                                     DATA / "batchnorm_train.py", DATA / "forward_default_none.py",
                                     KERNELBENCH / "Gemm_Scaling_Hardtanh_GELU.py"], ids=lambda p: p.stem)
def test_kernel_py_meets_kernelbench_contract_alone_in_a_fresh_process(problem, tmp_path, monkeypatch):
    from kerntailor.generate import GenerateSettings, generate

    monkeypatch.setenv("KERNTAILOR_HOME", str(tmp_path / "home"))
    import kerntailor.generate.pipeline as pipeline

    monkeypatch.setattr(pipeline, "detect_local_target", lambda *a, **k: None)
    result = generate(problem, GenerateSettings(target="mi300x", out_dir=tmp_path / "out", max_candidates=1,
                                                budget_s=10, use_store=False))
    assert result.status == "generated", result.message
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(result.kernel_path, alone / "kernel.py")
    (alone / "harness.py").write_text(CONTRACT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TRITON_INTERPRET": "1"}
    run = subprocess.run([sys.executable, "harness.py", str(problem), "kernel.py"], cwd=alone, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == {"same_seed": True, "state_dict": True}


@pytest.mark.interpreter
def test_a_constructor_reading_module_level_sizes_is_built_at_each_variants_sizes(tmp_path):
    """The referee sets kernel.py's copies of the size constants to each variant's values before it builds ModelNew
    (verify/candidate.py set_constants): before, every variant other than the default failed at `state_dict`."""
    from helpers import judge, make_module

    problem = DATA / "global_sizes.py"
    verdict = judge(problem, make_module(problem), tmp_path)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}"
    assert "odd" in {c.variant for c in verdict.cases if not c.refused}   # seq 23, hidden 39

"""A generated module against eager on inputs that are not square or not even (CPU, Triton interpreter).

    TRITON_INTERPRET=1 PYTHONPATH=src:tests python benchmarks/data/cpu_2026-12-07d/odd_inputs.py PROBLEM.py H W [H W ...]

Every group under its default schedule (no search), convolutions the library's (the conv family taken out of
codegen, as tests/conftest.py's library_conv does), target h100 (sm_90 source; run here under the interpreter). Prints
one line per size: the relative error ||got - eager|| / ||eager|| in fp32 at batch 10, or the error raised.
Used for 20_MobileNetV2 and 22_EfficientNetB0 before and after 01f367e (the probe's odd chains); output in
odd_inputs.txt beside it.
"""
import importlib.util
import sys
from pathlib import Path

import torch

import helpers
from kerntailor.codegen import FAMILIES, default_schedule, generate_module


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


path = Path(sys.argv[1])
spec, _, gen, plan = helpers._prepared(path, None, tuple(f for f in FAMILIES if f != "conv"))
module = generate_module(spec, gen, plan, {g.name: default_schedule(gen, g) for g in plan.groups}, "h100", "sm_90")
kernel_path = Path(f"/tmp/{path.stem}_odd_inputs_kernel.py")
kernel_path.write_text(module.source)
source, kernel = load("reference", path), load("kernel", kernel_path)
sizes = [int(v) for v in sys.argv[2:]]
for h, w in zip(sizes[::2], sizes[1::2]):
    torch.manual_seed(0)
    reference = source.Model(*source.get_init_inputs())
    candidate = kernel.ModelNew(*source.get_init_inputs())
    candidate.load_state_dict(reference.state_dict())
    x = torch.randn(10, 3, h, w)
    with torch.no_grad():
        expected = reference(x)
        try:
            got = candidate(x)
            print(f"{path.stem} {h}x{w}: relative error {float((got - expected).norm() / expected.norm()):.3g}")
        except Exception as e:  # noqa: BLE001
            print(f"{path.stem} {h}x{w}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")

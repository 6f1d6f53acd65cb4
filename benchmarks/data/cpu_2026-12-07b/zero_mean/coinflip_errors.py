"""Our default module's error vs PyTorch's own fp32 error on 23_Conv3d_GroupNorm_Mean (shrunk), six seeds, both
against float64. Usage (repository root, CPU):
    PYTHONPATH=src python benchmarks/data/cpu_2026-12-07b/zero_mean/default_module.py \
        benchmarks/data/cpu_2026-12-07b/zero_mean/23_Conv3d_GroupNorm_Mean_small.py /tmp/k23.py
    TRITON_INTERPRET=1 PYTHONPATH=src python benchmarks/data/cpu_2026-12-07b/zero_mean/coinflip_errors.py \
        benchmarks/data/cpu_2026-12-07b/zero_mean/23_Conv3d_GroupNorm_Mean_small.py /tmp/k23.py
(the module runs under Triton's interpreter without the referee's patches)."""
import importlib.util
import sys

import torch


def load(p, n):
    s = importlib.util.spec_from_file_location(n, p)
    m = importlib.util.module_from_spec(s)
    s.loader.exec_module(m)
    return m


P, K = load(sys.argv[1], "problem"), load(sys.argv[2], "kernel")
for seed in range(6):
    torch.manual_seed(seed)
    ref = P.Model(*P.get_init_inputs())
    x = P.get_inputs()[0]
    new = K.ModelNew(*P.get_init_inputs())
    new.load_state_dict(ref.state_dict())
    with torch.no_grad():
        r64 = ref.double()(x.double())
        ref.float()
        e, o = ref(x), new(x)
    eager, ours = (e.double() - r64).abs().max().item(), (o.double() - r64).abs().max().item()
    print(f"seed {seed}: rms(ref64) {r64.pow(2).mean().sqrt().item():.2e}  PyTorch fp32 max error {eager:.2e}  "
          f"ours {ours:.2e}  ratio {ours / eager:.1f}")

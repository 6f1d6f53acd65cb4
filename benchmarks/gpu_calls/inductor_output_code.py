"""What torch.compile emits for a problem file on this GPU: its output code (TORCH_LOGS=output_code), for reading
how Inductor lays out a convolution + tail (channels-last or not, which kernels it calls). One run per file.

    TORCH_LOGS=output_code python3 benchmarks/gpu_calls/inductor_output_code.py FILE.py [--dtype bf16] 2> code.txt
"""
import argparse
import importlib.util

import torch

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--dtype", default="fp32")
a = ap.parse_args()
spec = importlib.util.spec_from_file_location("problem", a.file)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[a.dtype]
model = m.Model(*m.get_init_inputs()).cuda().to(dt).eval()
xs = [x.cuda().to(dt) if isinstance(x, torch.Tensor) and x.is_floating_point() else
      (x.cuda() if isinstance(x, torch.Tensor) else x) for x in m.get_inputs()]
with torch.no_grad():
    out = torch.compile(model)(*xs)
    ref = model(*xs)
print("output", tuple(out.shape), out.stride(), "max abs diff vs eager", (out.float() - ref.float()).abs().max().item())

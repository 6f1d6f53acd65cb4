"""What a mixed module's library groups may run, for the referee: exactly the operators their calls dispatch to.

The referee's observed check (verify/observe.py) records every ATen operator forward runs at the dispatcher,
below the spelling. A library group's call is recorded as what the dispatcher makes of it, which depends on the
op and on the device: `aten.convolution` is recorded as itself (one explicit op on every backend); SDPA is a
composite that becomes one fused kernel of the device's choice (`aten._scaled_dot_product_flash_attention_for_cpu`
on the CPU, flash / memory-efficient / cuDNN attention on a GPU; a boolean mask adds an `aten.where`); a
recurrent stack becomes oneDNN layers (`aten.mkldnn_rnn_layer`) for an LSTM on the CPU, cuDNN's `_cudnn_rnn` on a
GPU, or its cell arithmetic (`addmm`, `sigmoid_`, ...) where neither applies. So the allowed set is not written
down: it is learned by running each group's call once, small (weights at their real shapes, one batch row, a few
positions: codegen/library.py `probe_shapes`), observed, on the device the referee will use, in a child process
(GPU work never runs in the generate process). What that one call ran is what the module may run; anything
else the module runs is a finding.
"""

from __future__ import annotations

import multiprocessing

from kerntailor.codegen.library import library_call, probe_shapes, probe_value
from kerntailor.errors import KerntailorError

TORCH_DTYPES = {"fp64": "float64", "fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "bool": "bool",
                "i64": "int64", "i32": "int32"}


def _probe(nodes: list, dtypes: list[list[str]], device: str) -> list[str]:
    """Runs in the child: each node's call once on small tensors, observed; the operators recorded."""
    import torch

    from kerntailor.verify.observe import observed

    ops: set[str] = set()
    generator = torch.Generator().manual_seed(0)
    for node, node_dtypes in zip(nodes, dtypes):
        tensors = []
        for shape, dtype in zip(probe_shapes(node), node_dtypes):
            if dtype == "bool":
                t = torch.ones(shape, dtype=torch.bool)
            else:
                t = torch.randn(shape, generator=generator, dtype=torch.float64).to(getattr(torch, TORCH_DTYPES[dtype]))
            tensors.append(t.to(device))
        call = library_call(node)
        op = torch.ops
        for part in call.op.split("."):
            op = getattr(op, part)
        args = [probe_value(a, node, tensors) for a in call.args]
        kwargs = {k: probe_value(v, node, tensors) for k, v in call.kwargs}
        with torch.no_grad(), observed(device_type=torch.device(device).type) as seen:
            op(*args, **kwargs)
        ops |= set(seen.ops)
    return sorted(ops)


def dispatched_ops(gen, plan, device: str) -> frozenset[str]:
    """The ATen operators the library groups of `plan` run on `device` (module docstring); empty without any."""
    nodes = [gen.graph.node(g.nodes[0]) for g in plan.groups if g.family == "library"]
    if not nodes:
        return frozenset()
    dtypes = [[gen.graph.buffer_type(v.base).dtype for v in n.operands] for n in nodes]
    ctx = multiprocessing.get_context("spawn")
    try:
        with ctx.Pool(1) as pool:
            return frozenset(pool.apply(_probe, (nodes, dtypes, device)))
    except Exception as e:   # the library cannot run the op as captured: no mixed module
        raise KerntailorError(f"the library call of {', '.join(n.name for n in nodes)} failed when probed on "
                              f"{device}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None

"""kernel.py's gradients: forward by the generated kernels, backward by the reference recomputed with autograd.

The kernels compute forward only. When grad mode is on and any tensor argument, parameter or buffer the module
reads requires grad, ModelNew.forward() runs through `_ReferenceBackward` (a torch.autograd.Function):
- its forward calls ModelNew.forward() again, where grad mode is off (autograd.Function.forward runs so), so the
  kernels compute the outputs exactly as without gradients; it saves the tensors (references, no copies: the
  saved-tensor version check raises if one is changed in place before backward);
- its backward recomputes Model's own forward (copied into kernel.py as ModelNew._reference_forward,
  codegen/constructor.py) under enable_grad from the saved tensors, substituted for the module's parameters and
  buffers by torch.func.functional_call (so a call under functional_call is differentiated with the tensors it
  was given), and returns torch.autograd.grad of it for the tensors that require grad. Inputs and buffers enter
  the recomputation as copies: a reference that updates one in place (BatchNorm's running statistics in training
  mode) changes neither the caller's tensors nor the module's, as the kernels did not.
The recomputed forward is the one the kernels computed: capture refuses a forward that draws random numbers
(dropout in training mode, rand_like), and a forward that depends on the training flag runs only in the mode it
was generated for (emit.py's mode check). backward is once_differentiable: a second-order gradient raises.
Without grad needed, forward() pays one check (torch.is_grad_enabled() and each tensor's requires_grad flag)
and builds no graph.
"""

from __future__ import annotations

from kerntailor.capture.generalize import Generalized

FUNCTION_TEXT = '''
class _Reference(nn.Module):
    """Model's forward (ModelNew._reference_forward) as a module's forward, for torch.func.functional_call."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args):
        return self.module._reference_forward(*args)


class _ReferenceBackward(torch.autograd.Function):
    """ModelNew's outputs with gradients: forward by the kernels, backward by Model's forward recomputed with
    PyTorch autograd from the saved tensors (module docstring of kerntailor's codegen/grads.py)."""

    @staticmethod
    def forward(ctx, module, args, positions, names, *tensors):
        # tensors: forward()'s tensor arguments (at `positions` of args), then the module's tensors (`names`)
        ctx.module, ctx.args, ctx.positions, ctx.names = module, args, positions, names
        ctx.save_for_backward(*tensors)
        return module(*args)   # grad mode is off here: ModelNew.forward launches the kernels

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        needs = ctx.needs_input_grad[4:]
        leaves = [t.detach().requires_grad_(need) for t, need in zip(ctx.saved_tensors, needs)]
        args = list(ctx.args)
        with torch.enable_grad():   # once_differentiable runs backward under no_grad
            for position, leaf in zip(ctx.positions, leaves):
                args[position] = leaf.clone()   # the reference may update an input in place
            state = {name: leaf if leaf.requires_grad else leaf.clone()   # nor may it update a buffer
                     for name, leaf in zip(ctx.names, leaves[len(ctx.positions):])}
            outs = torch.func.functional_call(_Reference(ctx.module), state, tuple(args))
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        got = torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True) \\
            if pairs and wanted else [None] * len(wanted)
        got = iter(got)
        return (None, None, None, None) + tuple(next(got) if leaf.requires_grad else None for leaf in leaves)
'''.strip("\n")


def grad_branch(gen: Generalized, var: dict[str, str], arg_names: tuple[str, ...], tensor_positions: list[int],
                module_tensors: list[str]) -> list[str]:
    """forward() lines that take `_ReferenceBackward` when a gradient is needed (module docstring). `var`: graph
    input -> host name (forward()'s argument, or the local bound to `self.<attr>`); `module_tensors`: the graph's
    parameters, buffers and constants, by graph input name."""
    targets = {i.name: i.target for i in gen.graph.inputs}
    tensors = [arg_names[p] for p in tensor_positions] + [var[name] for name in module_tensors]
    if not tensors:
        return []
    needed = " or ".join(f"{t}.requires_grad" for t in tensors)
    args = f"({', '.join(arg_names)}{',' if len(arg_names) == 1 else ''})"
    positions = f"({', '.join(map(str, tensor_positions))}{',' if len(tensor_positions) == 1 else ''})"
    names = [repr("module." + targets[name]) for name in module_tensors]
    names_text = f"({', '.join(names)}{',' if len(names) == 1 else ''})"
    return ["# gradients: the kernels' outputs, differentiated by Model's forward recomputed in backward",
            f"if torch.is_grad_enabled() and ({needed}):",
            f"    return _ReferenceBackward.apply(self, {args}, {positions}, {names_text}, {', '.join(tensors)})"]

"""kernel.py's gradients: forward by the generated kernels, backward by the reference recomputed with autograd.

The kernels compute forward only (the custom op that runs them, customop.py, has no autograd formula: a backward
through it alone raises). When grad mode is on and any tensor argument, parameter or buffer the module reads
requires grad, ModelNew.forward() runs through `_ReferenceBackward` (a torch.autograd.Function):
- its forward calls ModelNew.forward() again, where grad mode is off (autograd.Function.forward runs so), so the
  kernels compute the outputs exactly as without gradients; it saves the tensors (references, no copies: the
  saved-tensor version check raises if one is changed in place before backward);
- its backward recomputes Model's own forward (copied into kernel.py as ModelNew._reference_forward,
  codegen/constructor.py) from the saved tensors, substituted for the module's parameters and buffers by
  torch.func.functional_call on `ModelNew._reference` (a module whose forward is _reference_forward, made in
  ModelNew.__new__ and kept out of the module tree, so no state_dict entry), and returns torch.func.vjp of it for
  the tensors that need a gradient; outputs that are not floating point (an argmax) have none. Inputs and buffers
  enter the recomputation as copies: a reference that updates one in place (BatchNorm's running statistics in
  training mode) changes neither the caller's tensors nor the module's, as the kernels did not.
torch.compile traces this backward (fullgraph, no graph break): hence torch.func.vjp rather than
torch.autograd.grad (which Dynamo does not trace) and a module made before, not in, the traced code.
The recomputed forward is the one the kernels computed: capture refuses a forward that draws random numbers
(dropout in training mode, rand_like), and a forward that depends on the training flag runs only in the mode it
was generated for (emit.py's mode check). Gradients are first order only: backward computes them under no_grad,
and under create_graph=True ties them to the tensors they come from through `_SecondOrder`, whose backward raises,
so a second-order gradient raises (torch.autograd.function.once_differentiable would tie them to detached copies:
torch.autograd.grad of them would then say "not used in the graph", or give None, or zeros with
materialize_grads=True, without a word about why).
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
        outs = module(*args)   # grad mode is off here: ModelNew.forward launches the kernels
        flat = outs if isinstance(outs, tuple) else (outs,)
        ctx.floating = [o.is_floating_point() or o.is_complex() for o in flat]   # the outputs with gradients
        return outs

    @staticmethod
    def backward(ctx, *grads):
        saved, needs = ctx.saved_tensors, ctx.needs_input_grad[4:]

        def reference(*wanted):   # Model's forward of the tensors that need a gradient, the others held fixed
            wanted = iter(wanted)
            tensors = [next(wanted) if need else t.clone() for t, need in zip(saved, needs)]
            args = list(ctx.args)
            for position, t in zip(ctx.positions, tensors):
                args[position] = t.clone()   # the reference may update an input in place (and a buffer: cloned above)
            state = dict(zip(ctx.names, tensors[len(ctx.positions):]))
            outs = torch.func.functional_call(ctx.module._reference, state, tuple(args))
            outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
            return tuple(o for o in outs if o.is_floating_point() or o.is_complex()), ()

        with torch.no_grad():   # first-order gradients, not recorded for a second order (_SecondOrder)
            wanted = [t for t, need in zip(saved, needs) if need]
            floating, pullback, _ = torch.func.vjp(reference, *wanted, has_aux=True)
            grads = [g for g, o in zip(grads, ctx.floating) if o]
            got = iter(pullback(tuple(torch.zeros_like(o) if g is None else g for g, o in zip(grads, floating))))
            out = [next(got) if need else None for need in needs]
        if torch.is_grad_enabled():   # create_graph=True: differentiating these gradients must raise
            present = [g for g in out if g is not None]
            tied = iter(_SecondOrder.apply(len(present), *present, *saved, *[g for g in grads if g is not None]))
            out = [None if g is None else next(tied) for g in out]
        return (None, None, None, None) + tuple(out)


class _SecondOrder(torch.autograd.Function):
    """ModelNew's gradients computed under create_graph=True, tied to the tensors they come from: a second-order
    gradient reaches this node and raises, where it would otherwise come out as none (or zeros) without a word."""

    @staticmethod
    def forward(ctx, count, *tensors):
        return tuple(t.view_as(t) for t in tensors[:count])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("a second-order gradient through ModelNew: kernel.py gives first-order gradients only "
                           "(its backward recomputes Model's forward and is not differentiated again)")
'''.strip("\n")

NEW_TEXT = '''
    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        # Model's forward as a module (backward's functional_call), made with the instance and held outside the
        # module tree (no state_dict entry): torch.compile traces backward, and cannot trace a module being built
        object.__setattr__(self, "_reference", _Reference(self))
        return self
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

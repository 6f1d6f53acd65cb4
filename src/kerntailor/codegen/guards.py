"""kernel.py's run-time checks: every assumption its kernels make, checked on the host before any launch.

The kernels compute what the trace saw, for every size the generalization fitted (capture/generalize.py);
they assume the rest. forward() checks, in this order, and raises one error naming the argument and the
assumption (ValueError; RuntimeError for a device; TypeError for a tensor argument that is not a tensor):
- each tensor argument, parameter and buffer: its rank and dtype (the traced ones: a kernel's loads, stores
  and output buffers are typed at generation, so another dtype would be read as this one or return this one),
  and its device (the first input's; a CPU tensor only under the interpreter). Another float dtype is refused,
  not cast: Model would return that dtype and compute in it (bf16 parameters, bf16 rounding), so a cast in and
  out would give an answer the referee never judged, under a tolerance chosen for the traced dtype;
- every size the kernels were not given at run time: an axis that was the same in every traced variant is a
  literal in the kernels, an axis fitted to another's size (a weight's `in_features` to x.shape[1]) is read
  through that one: each must hold at run time;
- what a stride fitted over part of the variants could not see (generalize.Pinned: the variants where its axis
  was not 1 all had kv_heads == 2, so `2 * L * D` fitted as well as `kv_heads * L * D`): every product of dims
  those variants kept equal (kv_heads == 2, H == W) must hold, unless the axis has size 1 (its stride unused);
- the ranges the schedule supports: a persistent kernel holds XBLOCK whole rows of next_power_of_2(row)
  elements in one block, at most Triton's TRITON_MAX_TENSOR_NUMEL (2^20 in triton 3.6; past it Triton
  refuses to compile: "numel exceeds triton maximum tensor numel"); a kernel generated with int32 offsets
  (every tensor it indexes had fewer than 2^31 - 1 elements when traced) takes no tensor of 2^31 - 1 or more.
Contiguity is not a check: the custom op that runs the kernels (customop.py) makes every tensor `.contiguous()`
first (a no-op returning the tensor itself when it already is; a copy when it is not), since every kernel indexes
with row-major strides.

Every check reads shapes, dtypes and devices only: host metadata, no device sync, no dispatcher call.
"""

from __future__ import annotations

from fractions import Fraction

from kerntailor.capture.generalize import Dim, Generalized, Pinned, SizeExpr
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.kernel import GeneratedKernel
from kerntailor.codegen.sizes import SizeArgs

INT32_LIMIT = 2 ** 31 - 1   # a writer indexes in int64 from this many elements (fused/space.py, anchor.py)

# Every check is written inline in forward(), not in a helper function: the referee's static check reads any
# function forward() calls as taking tensors, and a comparison of tensors there as a PyTorch operator.


def interpreted_line(kernels: list[GeneratedKernel]) -> list[str]:
    """kernel.py's `_INTERPRETED`: whether triton.jit gave the interpreter's function (TRITON_INTERPRET=1 at
    import), so that host tensors can run. Nothing when no kernel is Triton (host lines only)."""
    first = next((k.kernel_name for k in kernels if k.source), None)
    if first is None:
        return []
    return ["# Whether triton.jit gave the interpreter's function (TRITON_INTERPRET=1 at import): kernels then run "
            "on the host.", f"_INTERPRETED = not isinstance({first}, triton.runtime.JITFunction)"]


def tensor_checks(gen: Generalized, var: dict[str, str], labels: dict[str, str], triton_kernels: bool) -> list[str]:
    """forward() lines checking each tensor's rank, dtype and device (module docstring). `var`: graph input ->
    host name; `labels`: graph input -> the name the user knows (`x`, `self.ln.weight`)."""
    from kerntailor.codegen.emit import TORCH_DTYPES

    inputs = [i for i in gen.graph.inputs if i.kind == "input"] + \
        [i for i in gen.graph.inputs if i.kind != "input"]
    lines, device, first = [], None, ""
    for inp in inputs:
        dtype = TORCH_DTYPES.get(inp.type.dtype)
        if dtype is None:
            raise CodegenUnsupported(f"{labels[inp.name]} of dtype {inp.type.dtype}")
        name, label, rank = var[inp.name], labels[inp.name], len(inp.type.shape)
        if inp.kind == "input":
            lines += [f"if not isinstance({name}, torch.Tensor):",
                      f'    raise TypeError(f"{label} is a {{type({name}).__name__}}: this kernel takes a '
                      'torch.Tensor")']
        lines += [f"if {name}.dim() != {rank} or {name}.dtype != {dtype}:",
                  f'    raise ValueError(f"{label} is {{{name}.dtype}} of shape {{tuple({name}.shape)}}: this kernel '
                  f'was generated for {dtype} of rank {rank} (its loads, stores and outputs are typed; cast it, or '
                  'generate a kernel for that dtype or rank)")']
        if device is not None:
            lines += [f"if {name}.device != {device}:",
                      f'    raise RuntimeError(f"{label} is on {{{name}.device}}, the kernels run on {{{device}}} '
                      f'({first}\'s device): move the module and every input to one device")']
        elif inp.kind == "input":
            device, first = f"{name}.device", label
            if triton_kernels:
                lines += [f'if not ({device}.type == "cuda" or (_INTERPRETED and {device}.type == "cpu")):',
                          f'    raise RuntimeError(f"{label} is on {{{device}}}: the Triton kernels run on a CUDA or '
                          'ROCm GPU (on the CPU only under TRITON_INTERPRET=1)")']
    return lines


def shape_checks(gen: Generalized, var: dict[str, str], labels: dict[str, str], host_names: dict[Dim, str]) \
        -> list[str]:
    """forward() lines checking every axis the kernels do not read at run time: an axis the same in every
    traced variant (a literal in the kernels), an axis fitted to other dims' sizes. Runs after the dims'
    host names are set."""
    graph, lines = gen.graph, []
    origin = {d: _dim_label(gen, labels, d) for d in host_names if not d.node}
    for i, inp in enumerate(graph.inputs):
        for k, traced in enumerate(inp.type.shape):
            e = gen.expr(("input", i, "shape", k), traced)
            if _is_dim(e, Dim(i, k)):
                continue   # the dim the host reads here
            here = f"{var[inp.name]}.shape[{k}]"
            expected = e.render(host_names)
            label = f"{labels[inp.name]}.shape[{k}]"
            why = (f"{e.render({})} (the same in every variant it was traced at)" if e.is_constant
                   else e.render(origin))
            lines += [f"if {here} != {expected}:",
                      f'    raise ValueError(f"{label} is {{{here}}}: this kernel was generated for '
                      f'{label} == {why}")']
    return lines


def pin_checks(gen: Generalized, labels: dict[str, str], host_names: dict[Dim, str]) -> list[str]:
    """forward() lines checking what the strides fitted over part of the variants assume (generalize.Pinned), one
    check per distinct assumption. Runs after the dims' host names are set."""
    lines, seen = [], set()
    users = {d: _dim_label(gen, labels, d) for p in gen.pins for d, _ in p.factors}
    for pin in gen.pins:
        here, unless = _relation(pin, host_names), pin.unless.render(host_names)
        if (here, unless) in seen:
            continue
        seen.add((here, unless))
        sizes = ", ".join(f"{users[d]} = {{{host_names[d]}}}" for d, _ in pin.factors)
        slot = "/".join(map(str, pin.path))
        lines += [f"if {unless} != 1 and not ({here}):",
                  f'    raise ValueError(f"{sizes}: this kernel was generated for {_relation(pin, users)} (the '
                  f"stride {slot} was fitted over variants where it held, and cannot tell whether it depends on "
                  f'these sizes); generate the kernel with variants that vary them apart")']
    return lines


def offset_checks(gen: Generalized, labels: dict[str, str], host_names: dict[Dim, str]) -> list[str]:
    """forward() lines refusing sizes that put a view's start before its tensor: x[:, -3:]'s offset S - 3 (on a
    (B, S) tensor; a polynomial (S - 3) · H on (B, S, H), polyfit.py) was fitted where S >= 3, and the slice's
    length 3 was traced as a constant; at S = 2 the reference's slice is shorter and the kernel read before x
    or the row before (a (3, 2) x summed wrong, interpreter, 2026-12-04). One check per distinct offset."""
    lines, seen = [], set()
    for path, e in gen.exprs:
        if e.is_constant or (not e.more and not (e.coeff > 0 and e.offset < 0)) or _never_negative(e):
            continue   # S - 1, 2·S·H - 2·H: never negative; a monomial is checked only as S - k, as it was traced
        if path[0] == "output" and path[2:] == ("offset",):
            view = gen.graph.outputs[path[1]]
        elif path[0] == "node" and path[2] == "operand" and path[4:] == ("offset",) and \
                not getattr(gen.graph.node(path[1]), "cat_sizes", ()):   # a concatenation's operands sit before it
            view = gen.graph.node(path[1]).operands[path[3]]
        else:
            continue
        text = e.render(host_names)
        if text in seen:
            continue
        seen.add(text)
        lines += [f"if {text} < 0:",
                  f'    raise ValueError(f"a view of {labels.get(view.base, view.base)} starts at element {{{text}}}: '
                  'this kernel was generated for sizes where a slice of a fixed length fits its axis (x[:, -k:] '
                  'needs k steps); generate the kernel at these sizes")']
    return lines


def _never_negative(e: SizeExpr) -> bool:
    """Whether a polynomial in sizes >= 1 is >= 0 for every size, by a sufficient test: each negative term is
    covered by positive terms it divides (S·H covers -H, as S >= 1), each unit of a positive coefficient covering
    one unit once; a negative constant by what any positive term has left."""
    terms = [(Fraction(c), dict(f)) for c, f in ((e.coeff, e.factors),) + e.more]
    left = [[c, f] for c, f in terms if c > 0]
    for c, f in sorted((t for t in terms if t[0] < 0), key=lambda t: -len(t[1])):
        need = -c
        for entry in left:
            if need and all(entry[1].get(d, 0) >= x for d, x in f.items()):
                used = min(need, entry[0])
                entry[0] -= used
                need -= used
        if need:
            return False
    return e.offset >= 0 or sum(c for c, _ in left) >= -e.offset


def _relation(pin: Pinned, names: dict[Dim, str]) -> str:
    """`pin` as a Python comparison of integers over `names`: Π dim^f == value, both sides multiplied out."""
    def side(factors: list[tuple[Dim, int]], coeff: int) -> str:
        terms = ([str(coeff)] if coeff != 1 else []) + [names[d] if f == 1 else f"{names[d]} ** {f}"
                                                         for d, f in factors]
        return " * ".join(terms) or "1"

    top = [(d, f) for d, f in pin.factors if f > 0]
    bottom = [(d, -f) for d, f in pin.factors if f < 0]
    return f"{side(top, pin.value.denominator)} == {side(bottom, pin.value.numerator)}"


def _dim_label(gen: Generalized, labels: dict[str, str], dim: Dim) -> str:
    if dim.root:   # generalize.root_dims: the exact integer square root of its base times a rational
        return f"isqrt({_dim_label(gen, labels, dim.base)} * {dim.root})"
    if dim.end:
        return f"where {dim.node}'s operand {dim.end - 1} ends along axis {dim.axis}"
    if dim.node:
        return f"{dim.node}'s output shape[{dim.axis}]"
    return f"{labels[gen.graph.inputs[dim.input].name]}.shape[{dim.axis}]"


def _is_dim(e: SizeExpr, dim: Dim) -> bool:
    return e.factors == ((dim, 1),) and e.coeff == 1 and e.offset == 0


def row_checks(kernels: list[GeneratedKernel], size: SizeArgs, origins: dict[str, tuple[str, ...]] | None = None) \
        -> list[str]:
    """forward() lines refusing a row longer than a persistent kernel's block can hold (module docstring). The
    message names the tensors the row's length comes from (`origins`: a size's host name -> those tensors, from
    emit.py): a row of a tensor the model makes (a conv's output depth) is traced back to the input behind it."""
    lines, seen = [], set()
    for k in kernels:
        row = k.launch.whole_row
        if row is None or k.loops_long_rows:   # such rows run its looped form
            continue
        xblock = rows_a_program(k)
        text = size.host(row)
        key = (text, xblock, dict(k.launch.constexprs).get("SPLIT"))
        if key in seen:
            continue
        seen.add(key)
        names = dict.fromkeys(t for d in row.dims for t in (origins or {}).get(size.host_names.get(d, ""), ()))
        whose = f" (a size of {', '.join(names)})" if names else ""
        split = dict(k.launch.constexprs).get("SPLIT")
        if split:   # a cooperative split: each of a row's SPLIT programs holds its share of XBLOCK rows in one block
            lines += [f"if -(-({text}) // {split}) > tl.TRITON_MAX_TENSOR_NUMEL // {xblock}:",
                      f'    raise ValueError(f"rows of {{{text}}} elements{whose}: {k.kernel_name} holds the share of '
                      f"{split} programs of {xblock} row(s) in one block of at most "
                      f"{{tl.TRITON_MAX_TENSOR_NUMEL}} elements (Triton's limit); generate the kernel with rows this "
                      'long, and it loops over each row")']
            continue
        lines += [f"if {text} > tl.TRITON_MAX_TENSOR_NUMEL // {xblock}:",
                  f'    raise ValueError(f"rows of {{{text}}} elements{whose}: {k.kernel_name} holds {xblock} whole '
                  f"row(s) in one block of at most {{tl.TRITON_MAX_TENSOR_NUMEL}} elements (Triton's limit); generate "
                  'the kernel with rows this long, and it loops over each row")']
    return lines


def rows_a_program(k: GeneratedKernel) -> int:
    """The whole rows a persistent kernel holds in one block at the longest row it takes: its XBLOCK, or one where
    the host decides XBLOCK per call (fused/finish.py: fewer rows where they are longer than traced)."""
    if "XBLOCK" in dict(k.launch.host_constexprs):
        return 1
    return dict(k.launch.constexprs).get("XBLOCK", 1)


def int32_checks(gen: Generalized, kernels: list[GeneratedKernel], size: SizeArgs, var: dict[str, str],
                 labels: dict[str, str], buffers: dict[str, tuple]) -> list[str]:
    """forward() lines refusing a tensor of 2^31 - 1 elements or more to a kernel generated with int32 offsets,
    checked on sizes before anything is allocated. A tensor that was that large when traced is left out: the
    writer that chose int32 offsets with it in view addresses it in int64 (a gather's table). Scratch buffers
    (per-tile partials) and the buffers a kernel's host lines make (fp8 copies of its operands) are not in
    `buffers`: emit.py checks the latter before the launch (`int32_check_before_launch`)."""
    graph, lines, seen = gen.graph, [], set()
    shapes = {inp.name: [gen.expr(("input", i, "shape", k), s) for k, s in enumerate(inp.type.shape)]
              for i, inp in enumerate(graph.inputs)}
    shapes |= {b: list(shape) for b, (shape, _) in buffers.items()}
    for k in kernels:
        if not k.source or k.launch.wide_indices:
            continue
        for _, b in k.pointer_args:
            if b not in shapes or graph.buffer_type(b).numel >= INT32_LIMIT:
                continue
            exprs = shapes[b]
            if all(e.is_constant for e in exprs):
                continue   # the traced count, under the limit
            text = " * ".join(_factor(size.host(e)) for e in exprs)
            if text in seen:
                continue   # checked for an earlier kernel: the same limit
            seen.add(text)
            lines += _int32_check(labels.get(b, b), text, k.kernel_name)
    return lines


def int32_check_before_launch(k: GeneratedKernel, var: dict[str, str]) -> list[str]:
    """forward() lines, after a kernel's host lines, refusing the buffers they made (fp8 copies of operands,
    the library's product) when they are too large for the kernel's int32 offsets."""
    if not k.source or k.launch.wide_indices:
        return []
    lines = []
    for _, b in k.pointer_args:
        if b in k.launch.host_buffers:
            lines += _int32_check(var[b], f"{var[b]}.numel()", k.kernel_name)
    return lines


def _int32_check(label: str, numel: str, kernel: str) -> list[str]:
    return [f"if {numel} >= {INT32_LIMIT}:",
            f'    raise ValueError(f"{label} has {{{numel}}} elements: {kernel} computes offsets in int32, generated '
            'for fewer than 2**31 - 1 elements per tensor; generate the kernel at a size this large (it then indexes '
            'in int64)")']


def _factor(text: str) -> str:
    return text if text.isidentifier() or text.isdigit() else f"({text})"


def usage_text(problem_file: str, gen: Generalized, kernels: list[GeneratedKernel], labels: dict[str, str],
               host_names: dict[Dim, str]) -> str:
    """kernel.py's header paragraph: how to use ModelNew, what it supports, and what it raises outside that."""
    from kerntailor.codegen.customop import NAMESPACE, PLACEHOLDER
    from kerntailor.codegen.emit import TORCH_DTYPES

    graph = gen.graph
    origin = {d: _dim_label(gen, labels, d) for d in host_names if not d.node}
    op = f"torch.ops.{NAMESPACE}.{PLACEHOLDER}"   # customop.py names it
    lines = ["Usage:",
             f"    ref = Model(*get_init_inputs())                  # the reference ({problem_file})",
             "    new = ModelNew(*get_init_inputs()).cuda()       # Model's own constructor and parameter names",
             "    new.load_state_dict(ref.state_dict())",
             "    with torch.no_grad():",
             "        out = new(*inputs)                          # the kernels alone, no autograd graph",
             "    new(*inputs).sum().backward()                   # training: gradients as Model's (below)",
             "    fast = torch.compile(model_holding_new, fullgraph=True)   # no graph break (below)",
             "",
             f"Custom op: forward() checks its inputs in Python (below), then runs every launch as one operator, "
             f"{op} (torch.library.custom_op, with a fake implementation that gives the outputs' shapes): a model "
             "holding ModelNew compiles under torch.compile without a graph break, and its launches can be captured "
             "in a CUDA graph (torch.cuda.CUDAGraph, torch.compile(mode=\"reduce-overhead\")): nothing on the way "
             "reads a tensor's data on the host. In eager, forward() calls the op's function (_launch_kernels) itself: "
             "the same launches without the operator's dispatch, which costs tens of microseconds a call. The op "
             "takes tensors only; called directly it skips forward()'s checks.",
             "", "Supports (checked by forward() before any launch):"]
    for i, inp in enumerate(graph.inputs):
        dims = []
        for k, traced in enumerate(inp.type.shape):
            e = gen.expr(("input", i, "shape", k), traced)
            dims.append("any" if _is_dim(e, Dim(i, k)) else e.render(origin))
        shape = f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"
        lines.append(f"    {labels[inp.name]}: {TORCH_DTYPES[inp.type.dtype]}, shape {shape}")
    users = {d: _dim_label(gen, labels, d) for p in gen.pins for d, _ in p.factors}
    for pin in gen.pins:
        unless = pin.unless.render(host_names | origin)
        line = f"    {_relation(pin, users)} where {unless} != 1 (a stride fitted where it held)"
        if line not in lines:
            lines.append(line)
    lines.append("    every tensor on one CUDA or ROCm device (on the CPU under TRITON_INTERPRET=1); any strides "
                 "(the op makes them contiguous, a copy where they are not)")
    for k in kernels:
        split = dict(k.launch.constexprs).get("SPLIT")
        if k.loops_long_rows:
            lines.append(f"    {k.kernel_name}: holds whole rows of up to {k.long_rows.min_row} elements in one block; "
                         f"longer rows run {k.long_rows.kernel.kernel_name}, which loops over them")
        elif k.launch.whole_row is not None and split:
            xblock = rows_a_program(k)
            lines.append(f"    {k.kernel_name}: rows of at most {split} x TRITON_MAX_TENSOR_NUMEL // {xblock} elements "
                         f"({split} x 2^20 // {xblock} in triton 3.6; each of a row's {split} programs holds its "
                         f"share of {xblock} row(s) in one block)")
        elif k.launch.whole_row is not None:
            xblock = rows_a_program(k)
            lines.append(f"    {k.kernel_name}: rows of at most TRITON_MAX_TENSOR_NUMEL // {xblock} elements "
                         f"(2^20 // {xblock} in triton 3.6; it holds whole rows in one block)")
    narrow = [k.kernel_name for k in kernels if k.source and not k.launch.wide_indices]
    if narrow:
        lines.append(f"    {', '.join(narrow)}: tensors of fewer than 2^31 - 1 elements (int32 offsets)")
    lines += ["", "Raises, outside that: ValueError naming the argument and the assumption (rank, dtype, a size, a row "
              "or tensor too large), RuntimeError for a device; TypeError for a non-tensor.", "",
              "Gradients: when grad mode is on and an input, parameter or buffer requires grad, forward() runs "
              "through _ReferenceBackward (a torch.autograd.Function): the kernels compute the outputs, and "
              "backward recomputes Model's own forward (ModelNew._reference_forward, copied from the reference) "
              "with PyTorch autograd (torch.func.vjp) from the saved inputs, parameters and buffers, and returns "
              "its gradients; torch.compile traces that backward too. "
              "That costs the inputs kept until backward and one reference forward and backward there. A tensor "
              "changed in place between forward and backward raises (autograd's saved-tensor check), so does a "
              "second-order gradient (the gradients are first order only). No recomputation can differ from the "
              "kernels' forward: a forward that draws random numbers (dropout in training mode) is never "
              "generated, and one that reads the training flag runs only in the mode it was generated for. "
              "Under torch.no_grad, or with nothing requiring grad, forward() builds no graph."]
    return "\n".join(lines)

"""Assemble a standalone `kernel.py`: header, helpers, @triton.jit kernels, and `ModelNew`.

`ModelNew` is built by the reference `Model`'s own constructor, copied with what it needs (constructor.py: the
signature, module tree and parameter names match, a state_dict loads, and the file stands alone); `forward`
checks its inputs and the sizes the kernels assume (guards.py), then calls one custom op (customop.py) whose
implementation reads the sizes, makes the tensors contiguous, allocates outputs and launches the kernels, each as
its Launch says; where a gradient is needed forward runs through an autograd.Function whose backward recomputes
Model's forward (grads.py). The module imports only torch and triton.
"""

from __future__ import annotations

import ast
import datetime
import re
import textwrap
from collections import Counter
from dataclasses import dataclass, replace

from kerntailor import __version__
from kerntailor.capture.generalize import Dim, Generalized, SizeExpr
from kerntailor.codegen.constructor import attribute_text, meta_model, reference_constructor
from kerntailor.codegen.customop import (
    NAMESPACE,
    PLACEHOLDER,
    call_lines,
    name_module,
    op_lines,
    op_signature,
    parts_names,
)
from kerntailor.codegen.errors import CodegenUnsupported
from kerntailor.codegen.families import FAMILIES
from kerntailor.codegen.grads import FUNCTION_TEXT, NEW_TEXT, grad_branch
from kerntailor.codegen.guards import (
    int32_check_before_launch,
    int32_checks,
    interpreted_line,
    offset_checks,
    pin_checks,
    row_checks,
    shape_checks,
    tensor_checks,
    usage_text,
)
from kerntailor.codegen.kernel import GeneratedKernel, GridAxis
from kerntailor.codegen.render import HELPER_PRELUDE
from kerntailor.codegen.sizes import SizeArgs
from kerntailor.ir.types import contiguous_strides
from kerntailor.problem.spec import ProblemSpec

TORCH_DTYPES = {"fp64": "torch.float64", "fp32": "torch.float32", "bf16": "torch.bfloat16",
                "fp16": "torch.float16", "i64": "torch.int64", "i32": "torch.int32", "bool": "torch.bool",
                "i8": "torch.int8", "u8": "torch.uint8", "i16": "torch.int16"}
AMD_KNOBS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")
NVIDIA_KNOBS = ("maxnreg",)   # triton 3.6's HIP launcher raises KeyError on an option its HIPOptions lacks


@dataclass(frozen=True)
class EmittedModule:
    source: str
    kernels: tuple[GeneratedKernel, ...]


def _forward_arg_checks(problem: ProblemSpec, arg_names: tuple[str, ...],
                        defaults: tuple[tuple[str, str], ...] = ()) -> tuple[dict[int, str], list[str]]:
    """Forward positions of tensor arguments -> names, and the host lines that check every non-tensor argument
    has the value the kernels were generated for (it was a constant of the trace). forward()'s parameters past
    get_inputs()'s values took their defaults in the trace: each must have a literal one (`mask=None`), and is
    checked to keep it."""
    tensors, checks = {}, []
    default = dict(defaults)
    missing = arg_names[len(problem.inputs):]
    if len(problem.inputs) > len(arg_names) or not all(_literal(default.get(name)) for name in missing):
        raise CodegenUnsupported(f"get_inputs() gives {len(problem.inputs)} values, forward() takes "
                                 f"{len(arg_names)}")
    for name in missing:
        test = f"{name} is not None" if default[name] == "None" else f"{name} != {default[name]}"
        checks += [f"if {test}:",
                   f"    raise ValueError(f\"{name} is {{{name}!r}}: this kernel was generated for its default, "
                   f"{name} = {default[name]}\")"]
    for i, (spec, name) in enumerate(zip(problem.inputs, arg_names)):
        if spec.shape is not None:
            tensors[i] = name
            continue
        try:
            ast.literal_eval(spec.value)
        except (ValueError, SyntaxError):
            raise CodegenUnsupported(f"forward() argument {name} is {spec.value}, not a literal") from None
        checks += [f"if {name} != {spec.value}:",
                   f"    raise ValueError(f\"{name} is {{{name}!r}}: this kernel was generated for "
                   f"{name} == {spec.value}\")"]
    return tensors, checks


def _literal(text: str | None) -> bool:
    """Whether `text` (a default as written) is a Python literal (None, a number, a string, a bool)."""
    if text is None:
        return False
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    return True


def _mode_check(training: bool | None) -> list[str]:
    """Host lines that refuse to run in the other mode, where forward() depends on the training flag
    (Graph.training): the kernels compute what Model computed in the mode it was built in."""
    if training is None:
        return []
    mode, other = ("training", "eval") if training else ("eval", "training")
    note = ["# training mode as built: BatchNorm normalizes by the batch's statistics; the running statistics",
            "# Model would update in training mode are left as they are"] if training else []
    return note + [f"if {'not ' if training else ''}self.training:",
            f"    raise RuntimeError(\"this kernel was generated for the model in {mode} mode (as Model was built); "
            f"it is in {other} mode: regenerate it for that mode\")"]


def emit_module(problem: ProblemSpec, gen: Generalized, kernels: list[GeneratedKernel], sizes: list[SizeArgs],
                host_names: dict[Dim, str], header: str, buffers: dict[str, tuple]) -> EmittedModule:
    """The kernel.py text. `buffers` maps each group output to (shape SizeExprs, dtype)."""
    # a group may launch more than one kernel (`GeneratedKernel.before`): from here on, every launch in order
    launches = [(part, size) for k, size in zip(kernels, sizes) for part in k.launches]
    groups_kernels, kernels, sizes = kernels, [k for k, _ in launches], [size for _, size in launches]
    ctor = reference_constructor(problem)
    tensor_args, arg_checks = _forward_arg_checks(problem, ctor.forward_args, ctor.forward_defaults)
    scalar_args = {name: spec.value for spec, name in zip(problem.inputs, ctor.forward_args) if spec.shape is None}
    var = {}   # graph input or buffer -> its name in forward()
    for inp in (i for i in gen.graph.inputs if i.kind == "input"):
        position = int(inp.target.removeprefix("arg"))
        if position not in tensor_args:
            raise CodegenUnsupported(f"graph input {inp.name} ({inp.target}) is not a tensor argument of forward()")
        var[inp.name] = tensor_args[position]
    tensor_positions = {name: position for position, name in tensor_args.items()}
    labels = _labels(problem, gen, var)
    usage = usage_text(problem.path.name, gen, kernels, labels, host_names)
    lines = [f'"""{header}\n\n{usage}"""', "", "import torch", "import torch.nn as nn", "import triton",
             "import triton.language as tl", ""]
    if ctor.definitions:
        lines += ["# From the reference file: what Model's constructor needs, so that ModelNew is built as Model is."]
        for text in ctor.definitions:
            lines += [text, ""]
    lines += ["", "# Compile options; AMD-only ones apply when this torch is a ROCm build.",
              "_AMD = torch.version.hip is not None", ""]
    lines += _module_level([part for k in groups_kernels for part in k.every_kernel]) + [""] + interpreted_line(kernels)

    # forward(): the checks, the gradient branch, then the op (customop.py) and the outputs' views
    positions = [tensor_positions[var[i.name]] for i in gen.graph.inputs if i.kind == "input"]
    module_tensors = [i.name for i in gen.graph.inputs if i.kind != "input"]
    grads = grad_branch(gen, {i.name: i.name for i in gen.graph.inputs if i.kind != "input"}, ctor.forward_args,
                        sorted(set(positions)), module_tensors)
    forward = _mode_check(gen.graph.training) + list(arg_checks) + _forward_checks(gen, kernels, host_names, var,
                                                                                   labels, buffers, grads)
    sizes_text = _size_lines(gen, host_names, var)
    # the op: its tensors (forward()'s, in argument order, then the module's), sizes, copies, launches
    op_tensors = sorted({var[i.name] for i in gen.graph.inputs if i.kind == "input"}, key=ctor.forward_args.index)
    op_tensors += [var[name] for name in module_tensors]
    body = list(sizes_text) + [f"{var[inp.name]} = {var[inp.name]}.contiguous()" for inp in gen.graph.inputs]
    user_inputs = [i for i in gen.graph.inputs if i.kind == "input"]
    device = var[user_inputs[0].name] + ".device" if user_inputs else "'cuda'"
    graph_inputs = set(var)   # an output viewing one of these is built in forward(): an op may not return it
    for k, size in zip(kernels, sizes):
        body.append(f"# {k.group}: {k.kernel_name}")
        for buffer, (shape, dtype) in buffers.items():
            if any(b == buffer for _, b in k.pointer_args) and buffer not in var:
                body.append(_empty_line(buffer, shape, dtype, size, device))
                var[buffer] = buffer
        body += _launch_forms(k, size, var, device)
    size = SizeArgs(gen, host_names)
    results = list(dict.fromkeys(var[v.base] for v in gen.graph.outputs
                                 if v.base in var and v.base not in graph_inputs))
    bases = {var[v.base]: v.base for v in gen.graph.outputs if v.base in var}
    fake = list(sizes_text) + [_empty_line(r, *buffers[bases[r]], size, device) for r in results]
    sig = op_signature(op_tensors, body, parts_names(lines), scalar_args, results)
    lines += ["", ""] + op_lines(sig, body, fake)
    forward += [*call_lines(sig), _return_line(gen, var, size)]

    lines += ["", ""] + FUNCTION_TEXT.splitlines() + [""]
    lines += ["", f"class ModelNew({ctor.bases}):",
              f'    """{problem.name}: forward() checks its inputs and runs the Triton kernels above, as the custom '
              f'op torch.ops.{NAMESPACE}.{PLACEHOLDER}; the constructor is Model\'s own."""', ""]
    lines += NEW_TEXT.splitlines() + [""]
    lines += textwrap.indent(ctor.body, "    ").splitlines()
    lines += ["", "    # Model's own forward, for backward only (see _ReferenceBackward); forward() never calls it"]
    lines += textwrap.indent(ctor.reference_forward, "    ").splitlines()
    defaults = dict(ctor.forward_defaults)
    params = [f"{a}={defaults[a]}" if a in defaults else a for a in ctor.forward_args]
    lines += ["", f"    def forward(self, {', '.join(params)}):"]
    lines += ["        " + line for line in forward]
    docstring, code = lines[0], "\n".join(lines[1:]) + "\n"
    return EmittedModule(name_module(docstring + "\n", code, problem.name), tuple(groups_kernels))


def _empty_line(buffer: str, shape, dtype: str, size: SizeArgs, device: str) -> str:
    shape_text = ", ".join(size.host(e) for e in shape)
    return (f"{buffer} = torch.empty(({shape_text}{',' if len(shape) == 1 else ''}), device={device}, "
            f"dtype={TORCH_DTYPES[dtype]})")


def _module_level(kernels: list[GeneratedKernel]) -> list[str]:
    """The fp8 format line, the helpers (each once, in first use order, after their prelude), the kernels."""
    lines = []
    fp8 = sorted({k.fp8_format for k in kernels if k.fp8_format})
    if len(fp8) > 1:
        raise CodegenUnsupported(f"products in two fp8 formats ({', '.join(fp8)})")
    if fp8:  # the referee emulates this format (precision.py)
        lines += [f'FP8_FORMAT = "{fp8[0]}"   # matrix products quantized to fp8 (kerntailor precision fp8-*)', ""]
    helpers = list(dict.fromkeys(h for k in kernels for h in k.helpers))
    if helpers:
        lines += [HELPER_PRELUDE]
    lines += helpers
    for k in kernels:
        if k.source:   # a library group has host lines only
            lines += ["", k.source]
    return lines


def _labels(problem: ProblemSpec, gen: Generalized, var: dict[str, str]) -> dict[str, str]:
    """Graph input -> the name its user knows: forward()'s argument, or the attribute (`self.ln.weight`)."""
    return {inp.name: var[inp.name] if inp.kind == "input" else attribute_text(meta_model(problem), inp.target)
            for inp in gen.graph.inputs}


def _forward_checks(gen: Generalized, kernels: list[GeneratedKernel], host_names: dict[Dim, str], var: dict,
                    labels: dict[str, str], buffers: dict[str, tuple], grads: list[str]) -> list[str]:
    """forward()'s lines before the op: the module's tensors bound to locals (`var` gains their names), the
    inputs' and parameters' checks (guards.py), the problem's sizes (`_size_lines`), the checks of every size the
    kernels assume and of the ranges their schedules support. `grads` (the gradient branch, grads.py) comes right
    after the tensors' checks: a wrong tensor is named before anything."""
    graph, body = gen.graph, []
    for inp in graph.inputs:
        if inp.kind in ("parameter", "buffer", "constant"):
            var[inp.name] = inp.name
            body.append(f"{inp.name} = {labels[inp.name]}")
        elif inp.kind != "input":
            raise CodegenUnsupported(f"graph input {inp.name} of kind {inp.kind}")
    body += tensor_checks(gen, var, labels, any(k.source for k in kernels))
    body += grads
    sizes = _size_lines(gen, host_names, var)
    body += sizes
    size = SizeArgs(gen, host_names)
    body += shape_checks(gen, var, labels, host_names)   # the dims equal in every variant among them
    body += pin_checks(gen, labels, host_names)          # what strides fitted over part of the variants assume
    body += offset_checks(gen, labels, host_names)               # slices of fixed length the sizes at hand cannot hold
    body += row_checks(kernels, size, _size_origins(sizes, var, labels)) + \
        int32_checks(gen, kernels, size, var, labels, buffers)
    return body


def _size_origins(size_lines: list[str], var: dict[str, str], labels: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """Each size's host name -> the tensors (by the names their user knows) it is read or derived from, in order:
    `x_2 = x.shape[2]` gives (x,), a conv's output size computed from x_2 gives (x,) as well. A refusal names them,
    so a size derived inside the model (a conv's output depth) is traced to the input whose size made it."""
    user = {host: labels[graph_name] for graph_name, host in var.items() if graph_name in labels}
    origins: dict[str, tuple[str, ...]] = {}
    for line in size_lines:
        name, _, expr = line.partition(" = ")
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)
        found = [w2 for w in words for w2 in (origins.get(w) or ((user[w],) if w in user else ()))]
        origins[name.strip()] = tuple(dict.fromkeys(found))
    return origins


def _size_lines(gen: Generalized, host_names: dict[Dim, str], var: dict) -> list[str]:
    """The problem's dims read from the tensors (`var`: graph input -> host name), then the sizes families derive
    on the host (a pool's output sizes, by the op's formula): forward() checks them, the op and its fake read
    them again from the tensors they are given."""
    graph, body = gen.graph, []
    for dim in gen.dims:
        if not dim.node and not dim.root:
            body.append(f"{host_names[dim]} = {var[graph.inputs[dim.input].name]}.shape[{dim.axis}]")
    for dim in gen.dims:   # the roots of those (a ViT's patch size from its embedding's width 3p^2)
        if dim.root and not dim.node:
            body += root_lines(dim, host_names, f"{var[graph.inputs[dim.input].name]}.shape[{dim.axis}]")
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    derived = [(f, f.derived_names(gen)) for f in FAMILIES.values() if f.derived_size_lines is not None]
    blocks = []
    for dim in sorted((d for d in host_names if d.node), key=lambda d: (order[d.node], d.axis, d.end)):
        node = graph.node(dim.node)
        fam = next((f for f, names in derived if dim in names), None)   # the family that named this size derives it
        if fam is None:
            raise CodegenUnsupported(f"sizes of {node.family} outputs")
        blocks.append(fam.derived_size_lines(gen, node, dim, host_names[dim], SizeArgs(gen, host_names)))
    body += [line for block in _defined_before_use(blocks) for line in block]
    for dim in gen.dims:
        if dim.root and dim.node:
            body += root_lines(dim, host_names, f"{dim.node}'s size {host_names[dim.base]}")
    return body


_ASSIGNED = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*) = ", re.M)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _defined_before_use(blocks: list[list[str]]) -> list[list[str]]:
    """The derived sizes' line blocks in node order, except that a block moves after the blocks that assign
    what it reads. A size may be fitted in the terms of a dim another node derives later: 19_MobileNetV1's fourth
    convolution reads a width of 2 * d5, d5 being the eighth's output height ((d4 - 1) // 2 + 1), and kernel.py
    raised UnboundLocalError before any kernel ran."""
    pending = []
    for block in blocks:
        text = "\n".join(block)
        assigns = set(_ASSIGNED.findall(text))
        pending.append((block, assigns, set(_WORD.findall(text)) - assigns))
    unassigned = Counter(n for _, assigns, _ in pending for n in assigns)   # by the blocks still pending
    ordered = []
    while pending:
        for i, (block, assigns, reads) in enumerate(pending):
            if not any(unassigned[n] for n in reads):
                ordered.append(block)
                unassigned.subtract(assigns)
                del pending[i]
                break
        else:
            names = sorted(n for _, assigns, _ in pending for n in assigns)
            raise CodegenUnsupported(f"derived sizes {', '.join(names)} are each computed from another")
    return ordered


def root_lines(dim, host_names: dict, label: str) -> list[str]:
    """A root dim's host lines (generalize.root_dims): the exact integer square root of its base dim times
    p/q, computed in floats, checked in integers (a size whose root is not exact is refused in one line)."""
    name, base = host_names[dim], host_names[dim.base]
    p, q = dim.root.numerator, dim.root.denominator
    scaled = base if p == 1 else f"{base} * {p}"
    return [f"{name} = round(({scaled} / {q}) ** 0.5)" if q != 1 else f"{name} = round(({scaled}) ** 0.5)",
            f"if {name} * {name} * {q} != {scaled}:",
            f'    raise ValueError(f"{label} is {{{base}}}: this kernel was generated for sizes where {label} x '
            f'{p}/{q} is a perfect square (its square root is a size the model uses)")']


def _return_line(gen: Generalized, var: dict[str, str], size: SizeArgs) -> str:
    """forward()'s return: each output's buffer, or a view of it (torch.as_strided)."""
    graph, outs = gen.graph, []
    for i, view in enumerate(graph.outputs):
        base = var.get(view.base)
        if base is None:
            raise CodegenUnsupported(f"output {view.base} is not computed by any kernel")
        shape = [gen.expr(("output", i, "shape", k), s) for k, s in enumerate(view.shape)]
        strides = [gen.expr(("output", i, "strides", k), s) for k, s in enumerate(view.strides)]
        offset = gen.expr(("output", i, "offset"), view.offset)
        buffer_type = graph.buffer_type(view.base)
        if tuple(view.shape) == buffer_type.shape and view.offset == 0 and \
                tuple(view.strides) == contiguous_strides(buffer_type.shape):
            outs.append(base)
        else:
            outs.append(f"torch.as_strided({base}, ({', '.join(size.host(e) for e in shape)},), "
                        f"({', '.join(size.host(e) for e in strides)},), {size.host(offset)})")
    return f"return {outs[0]}" if len(outs) == 1 else f"return ({', '.join(outs)},)"


def _launch_forms(k: GeneratedKernel, size: SizeArgs, var: dict[str, str], device: str) -> list[str]:
    """The launches of group kernel `k`: on long rows its long-row form (kernel.py's LongRowSplit: a looped
    kernel's split for few long rows, a persistent kernel's looped form, which may hold its own split), else the
    kernel the search chose."""
    if k.long_rows is None:
        return _launch_lines(k, size, var, device)
    form = k.long_rows.kernel
    lines = [f"if {k.long_rows.condition(size.host)}:"]
    lines += [f"    {line}" for part in form.before for line in _launch_lines(part, size, var, device)]
    lines += [f"    {line}" for line in _launch_forms(form, size, var, device)]
    lines.append("else:")
    return lines + [f"    {line}" for line in _launch_lines(k, size, var, device)]


def _launch_lines(k: GeneratedKernel, size: SizeArgs, var: dict[str, str], device: str) -> list[str]:
    """Host lines for one kernel: the buffers its host lines define, those lines, its scratch, then the call.
    `var` (buffer -> host variable) gains the buffers defined here."""
    launch = k.launch
    for buffer in launch.host_buffers:   # made by the host lines before the launch
        var[buffer] = f"{k.group}_{buffer}"
    lines = [line.format(**var, device=device) for line in launch.host_prologue]
    lines += int32_check_before_launch(k, var)
    # partial results and counters, allocated per call; zeroed unless the kernel writes every element first
    for s in launch.scratch:
        var[s.buffer] = f"{k.group}_{s.buffer}"
        alloc = "torch.zeros" if s.zeroed else "torch.empty"
        lines.append(f"{var[s.buffer]} = {alloc}({_count_text(size, s.count)}, device={device}, "
                     f"dtype={TORCH_DTYPES[s.dtype]})")
    if not k.source:   # host lines only (a library call)
        return lines
    args = [var[b] for _, b in launch.pointer_args] + [size.host(e) for _, e in launch.size_args]
    decided = dict(launch.host_constexprs)  # chosen per call from sizes and addresses
    consts = [f"{n}={decided[n].format(**var, device=device)}" if n in decided else f"{n}={v}"
              for n, v in launch.constexprs]
    opts = [f"{n}={v}" for n, v in launch.options if n not in AMD_KNOBS + NVIDIA_KNOBS]
    amd = {n: v for n, v in launch.options if n in AMD_KNOBS}
    nvidia = {n: v for n, v in launch.options if n in NVIDIA_KNOBS}
    axes = [_grid_text(size, axis) for axis in launch.grid]
    if launch.grid_cap:  # a persistent kernel: no more programs than it was told to use
        axes = [f"min({axes[0]}, {launch.grid_cap.format(**var, device=device)})"]
    grid = f"({axes[0]},)" if len(axes) == 1 else f"({', '.join(axes)})"
    call = f"{k.kernel_name}[{grid}]({', '.join(args + consts + opts)}"
    call += f", **({amd!r} if _AMD else {nvidia!r}))" if amd or nvidia else ")"
    return lines + [call]


def _grid_text(size: SizeArgs, axis: GridAxis) -> str:
    """Host text for the programs along one grid axis: triton.cdiv(n, block) for one factor (block 1 included),
    a product of ceil-divisions for several (GEMM tiles x batch x splits), times a sum of them (axis.summed), times
    the host's own factor (axis.host_factor)."""
    if axis.host_factor:
        base = _grid_text(size, replace(axis, host_factor="")) if axis.summed else _count_text(size, axis.factors)
        return f"{base} * {axis.host_factor}"
    if axis.summed:
        summed = " + ".join(f"triton.cdiv({size.host(e)}, {block})" for e, block in axis.summed)
        return f"{_count_text(size, axis.factors)} * ({summed})"
    if len(axis.factors) == 1:
        (e, block), = axis.factors
        return f"triton.cdiv({size.host(e)}, {block})"
    return _count_text(size, axis.factors)


def _count_text(size: SizeArgs, count) -> str:
    """Host text for a product of (size, block) ceil-divisions."""
    def factor(e: SizeExpr, block: int) -> str:
        text = size.host(e)
        if block != 1:
            return f"triton.cdiv({text}, {block})"
        return text if text.isidentifier() or text.isdigit() else f"({text})"

    return " * ".join(factor(e, block) for e, block in count) or "1"


def header_text(problem: ProblemSpec, target_name: str, arch: str, configs: dict[str, str],
                notes: list[str]) -> str:
    date = datetime.date.today().isoformat()
    lines = [f"{problem.name}: Triton kernels generated by kerntailor {__version__} on {date}.", "",
             f"Target: {target_name} ({arch}). Reference: {problem.path.name} "
             f"({problem.description or 'no description'}).",
             f"Problem hash {problem.content_hash[:16]}, dtype {problem.dtype or 'as written'}.", "", "Kernels:"]
    lines += [f"  {name}: {cfg}" for name, cfg in configs.items()]
    if notes:
        lines += [""] + notes
    return "\n".join(lines)

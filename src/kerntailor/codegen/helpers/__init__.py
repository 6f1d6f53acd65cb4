"""Triton helpers (and a few host functions) that kernel.py defines at module level, kept as real source.

kernel.py stands alone (it imports only torch and triton), so a helper's text is copied into it: from the
modules here, by `inspect.getsource`, never written as a string. The modules import, lint and run as they are
(tests/test_codegen_helpers.py runs them under the interpreter):

- `math.py`: tanh, log1p, expm1 (a portable form for the interpreter, libdevice's on a GPU) and Mish's
  tanh(softplus(x)) from one exp;
- `dot.py`: tl.dot under the precision policies (tf32, tf32x3, 16-bit operands, fp8), with interpreter forms;
- `reduce.py`: a row's max and min that keep a NaN, and its product (one reduction on a GPU), with interpreter
  forms;
- `fp8_e4m3fn.py`, `fp8_e4m3fnuz.py`: each fp8 format's scale, rounding, bit patterns and cast;
  `fp8_quantize.py`: the quantize kernels and their host function;
- `host.py`: the TMA descriptors' allocator, a persistent GEMM's program count, and a library convolution's
  channels-last weight, copied once per weight, and input, copied per call by a tiled kernel;
- `convt.py`: a transposed convolution's weight in the order its kernel reads it, copied once per weight.

Where kernel.py picks a form per run (`_x = _x_emulated if _INTERPRET else _x_hw`) that line is written here,
beside the copied functions: `_INTERPRET` is kernel.py's (render.HELPER_PRELUDE).
"""

from __future__ import annotations

import functools
import importlib
import inspect

from kerntailor.precision import Fp8Format


def source(fn) -> str:
    """A helper function's source text, its decorator included (a @triton.jit function's `fn`)."""
    return inspect.getsource(getattr(fn, "fn", fn))


def block(*pieces) -> str:
    """Module-level text: functions (copied by `source`) and lines of text, two blank lines apart."""
    return "\n\n".join(p if isinstance(p, str) else source(p) for p in pieces)


def pick(name: str, interpreted: str, hardware: str, *comment: str) -> str:
    """kernel.py's choice of a helper's form when it is imported, after comment lines saying why."""
    return "".join(f"# {line}\n" for line in comment) + f"{name} = {interpreted} if _INTERPRET else {hardware}\n"


def _module(name: str):
    return importlib.import_module(f"kerntailor.codegen.helpers.{name}")


@functools.cache
def math_helper(name: str) -> str:
    """tanh, log1p, expm1 (both forms and the pick), or tanh_softplus, expm1_16 (one form)."""
    m = _module("math")
    if name in ("tanh_softplus", "expm1_16"):   # one form, the interpreter's and the GPU's
        return block(getattr(m, f"_{name}"))
    return block(getattr(m, f"_{name}_portable"), getattr(m, f"_{name}_libdevice"),
                 pick(f"_{name}", f"_{name}_portable", f"_{name}_libdevice"))


MATH_HELPERS = ("tanh", "log1p", "expm1", "expm1_16", "tanh_softplus")


@functools.cache
def reduce_helper(op: str) -> str:
    """max or min: `_row_<op>`, a row's extremum that keeps a NaN (both forms, their combine and the pick); prod:
    `_row_prod`, a row's product (a multiply tl.reduce; the interpreter's form from tl.cumprod)."""
    m = _module("reduce")
    if op == "prod":
        return block(m._multiply, m._row_prod_hw, m._row_prod_scanned,
                     pick("_row_prod", "_row_prod_scanned", "_row_prod_hw",
                          "one multiply reduction on a GPU; the interpreter would run that tl.reduce one element at a",
                          "time in Python, so there the product is the row's last running product (tl.cumprod)"))
    combine = m._maximum_nan if op == "max" else m._minimum_nan
    return block(combine, getattr(m, f"_row_{op}_hw"), getattr(m, f"_row_{op}_flagged"),
                 pick(f"_row_{op}", f"_row_{op}_flagged", f"_row_{op}_hw",
                      "one NaN-keeping reduction on a GPU; the interpreter would run that tl.reduce one element at a",
                      "time in Python, so there the same value comes from tl.max/tl.min and a NaN flag"))


REDUCE_HELPERS = ("row_max", "row_min", "row_prod")


def named_helper(name: str) -> str:
    """A kernel's helper by the name its writer records: a math helper or row_max/row_min/row_prod."""
    return reduce_helper(name[len("row_"):]) if name in REDUCE_HELPERS else math_helper(name)


@functools.cache
def dot_helper(name: str) -> str:
    """round_tf32, tf32, tf32x3, 16bit or fp8: the dot of a precision policy, both forms and the pick."""
    m = _module("dot")
    if name == "round_tf32":
        return block(m._round_tf32)
    why = {"tf32": ("the interpreter ignores input_precision: emulate tf32 there, so the CPU referee sees its error",),
           "tf32x3": ("the interpreter ignores input_precision: emulate tf32x3 there, so the CPU referee sees its "
                      "error",),
           "16bit": ("the interpreter keeps bf16 as raw bits and its dot would multiply those: upcast there (exact: "
                     "a product", "of two 8- or 11-bit mantissas fits fp32's 24), fp32 accumulation like the matrix "
                     "units"),
           "fp8": ("exact products of fp8 values, fp32 accumulation, on the GPU's matrix units or (interpreter) in "
                   "numpy",)}[name]
    emulated = {"16bit": "_dot_16bit_upcast"}.get(name, f"_dot_{name}_emulated")
    return block(getattr(m, emulated), getattr(m, f"_dot_{name}_hw"), pick(f"_dot_{name}", emulated,
                                                                          f"_dot_{name}_hw", *why))


@functools.cache
def tma_allocator() -> str:
    """The allocator for on-device TMA descriptors, installed where this torch runs CUDA."""
    return block(_module("host")._tma_scratch, "if torch.cuda.is_available() and torch.version.hip is None:\n"
                                               "    triton.set_allocator(_tma_scratch)\n")


@functools.cache
def channels_last_weight() -> str:
    """The host function that keeps a library convolution's weight channels-last across calls."""
    return block(_module("host")._channels_last_weight)


@functools.cache
def channels_last_input() -> str:
    """The tiled copy kernel and host function that give a library convolution its input channels-last."""
    h = _module("host")
    return block(h._channels_last_copy_kernel, h._channels_last_input)


@functools.cache
def num_programs() -> str:
    return block(_module("host")._num_programs)


@functools.cache
def fp8_helpers(fmt: Fp8Format) -> str:
    """The quantize kernels and host function for `fmt`, after its format helpers and its FP8_DTYPE."""
    f, q = _module(f"fp8_{fmt.name}"), _module("fp8_quantize")
    return block(f"FP8_DTYPE = torch.{fmt.torch_dtype}   # {fmt.name}: max {fmt.max:g}\n",
                 f._fp8_scale, f._fp8_round, f._fp8_encode, f._fp8_decode, f._to_fp8_hw,
                 pick("_to_fp8", "_fp8_encode", "_to_fp8_hw"),
                 q._fp8_amax_kernel, q._fp8_row_scales, q._fp8_tensor_scale, q._fp8_quantize_kernel, q._fp8_quantize)


@functools.cache
def convt_weight() -> str:
    """The host function that lays a transposed convolution's weight out in its kernel's order, once per weight."""
    return block(_module("convt")._convt_weight)

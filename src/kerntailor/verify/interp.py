"""Make Triton's interpreter (TRITON_INTERPRET=1) as strict as a GPU, or stricter. Worker process only.

The interpreter runs each program instance in turn on numpy. Out of the box it (a) does not check memory
accesses: an unmasked load past the end of a tensor silently reads the heap, and a far one corrupts it;
(b) computes every `tl.dot` in plain fp32, so a kernel that asks for tf32 looks exact; (c) always runs the
programs in the same order, so a race between programs never shows. `install()` patches its builder so that:

- memcheck: every active lane of a load, store or atomic must fall inside a tensor passed to that launch;
  otherwise the launch raises IllegalMemoryAccess (what a GPU with compute-sanitizer would report);
- tf32: `input_precision="tf32"` cuts the fp32 operands to tf32 (10-bit mantissa) by truncation, as NVIDIA's
  tensor cores do with fp32 operands (measured on an H200, 4096^3: 7.8e-4 relative norm error, against 3e-4
  for round-to-nearest); "tf32x3" splits them into a tf32 high and low part and sums three products, the NaNs
  of the two small ones set to 0 as Triton's F32DotTC pass does (an Inf operand's low part is inf - inf);
  "ieee" stays exact;
- bf16 dot: the interpreter holds bf16 as raw uint16 bits and multiplied those integers (a bf16 `tl.dot` gave
  values of 1e10 where the product is 1); the operands are widened to the fp32 values they hold first;
- bf16 casts: the interpreter cuts an fp32 value to bf16 by truncation (and its "rtne" mode rounds half up without
  carrying into the exponent), where a GPU rounds to nearest even (cvt.rn.bf16.f32 on sm_90, LLVM's fptrunc on AMD).
  Truncation biases every cast low by up to 2^-7: a ReLU attention's unnormalised weights, cast for the second
  product, came out 1.5 % low against the reference (eager 0.35 %) and failed bf16's 1.6 % under the interpreter
  only. fp32 -> bf16 casts now round to nearest even (`_fp32_to_bf16`); an explicit "rtz" cast still truncates;
- NaN: `tl.maximum`/`tl.minimum` with the default PropagateNan.NONE compile to maxnum/minnum on a GPU, which
  return the other operand when one is NaN; the interpreter computes them with np.maximum/np.minimum, which
  return the NaN. They become np.fmax/np.fmin, so a kernel that would drop a NaN on the GPU drops it here too
  (PropagateNan.ALL keeps np.maximum/np.minimum). Its `tl.max`/`tl.min` reductions already use np.nanmax/nanmin;
- program order: while `reversed_grid()` is active, program ids are handed out last to first;
- bookkeeping: the interpreter's own copies of a launch's arguments to and from the host are marked
  (`in_bookkeeping()`), so that observe.py does not count them as the candidate's.

Two patches only save time, with the same results (tests/test_interp_speed.py holds them equal; on the 2-core CPU
machine, loaded, a ViT's layer norm over 394 rows of 16 took 6.25 -> 2.21 s, its attention over 1576 programs
40.3 -> 18.8 s):
- integer overflow sanitizer: with `sanitize_overflow` on (the interpreter's default) every int32 add, sub and mul
  is redone in int64, compared with the int32 bounds and handed to `device_assert`, which returns at once unless
  `debug` is on (never, under the interpreter): a third of a small kernel's time spent on a check that cannot fire.
  While debug is off it is switched off; with debug on nothing changes;
- the language patch: a call to a jit function from inside a kernel (`tl.sum`, `tl.max`, a combine function, a
  helper of kernel.py) re-patches the whole triton.language namespace (`_patch_lang`: getmembers over tl, tl.core,
  tl.math, the tensor class) on every call, six times a program for a layer norm. Within one launch the patch of a
  given module namespace is done once: what `_patch_lang` does depends only on the function's globals, and nothing
  undoes it before the launch ends.

Written against triton 3.6's interpreter (runtime/interpreter.py); `install()` is a no-op if its names move.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading

import numpy as np

_state = threading.local()
_installed = False


class IllegalMemoryAccess(RuntimeError):
    """A masked-in lane of a load/store/atomic outside every tensor argument of the launch."""


def _ranges() -> list[tuple[int, int, str]]:
    return getattr(_state, "ranges", None) or []


def _tensor_ranges(args, kwargs, names) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []

    def visit(arg, label):
        if isinstance(arg, (tuple, list)):
            for i, a in enumerate(arg):
                visit(a, f"{label}[{i}]")
            return
        base = getattr(arg, "base", None)
        if base is not None and hasattr(base, "data_ptr") and not hasattr(arg, "untyped_storage"):
            visit(base, label)  # a TensorDescriptor
            return
        if hasattr(arg, "untyped_storage"):
            storage = arg.untyped_storage()
            lo = storage.data_ptr()
            out.append((lo, lo + storage.nbytes(), label))

    for i, a in enumerate(args):
        visit(a, names[i] if i < len(names) else f"arg{i}")
    for k, v in kwargs.items():
        visit(v, k)
    return out


def _check(ptrs, mask, what: str) -> None:
    ranges = _ranges()
    if not ranges:
        return
    p = np.asarray(ptrs.data).reshape(-1).astype(np.uint64)
    m = np.asarray(mask.data).reshape(-1).astype(bool) if mask is not None else np.ones(p.shape, bool)
    if m.shape != p.shape:
        m = np.broadcast_to(np.asarray(mask.data), np.asarray(ptrs.data).shape).reshape(-1).astype(bool)
    active = p[m]
    if active.size == 0:
        return
    try:
        elem = max(ptrs.get_element_ty().primitive_bitwidth // 8, 1)
    except AttributeError:
        elem = 1
    inside = np.zeros(active.shape, dtype=bool)
    for lo, hi, _ in ranges:
        inside |= (active >= np.uint64(lo)) & (active + np.uint64(elem) <= np.uint64(hi))
    if inside.all():
        return
    bad = active[~inside]
    first = int(bad[0])
    nearest = min(ranges, key=lambda r: min(abs(first - r[0]), abs(first - r[1])))
    offset = first - nearest[1] if first >= nearest[1] else first - nearest[0]
    side = f"{offset} bytes past the end of" if first >= nearest[1] else f"{-offset} bytes before"
    grid = getattr(_state, "grid_idx", None)
    raise IllegalMemoryAccess(
        f"illegal memory access: {what} of {bad.size} element(s) outside every tensor argument "
        f"(first {side} {nearest[2]!r}, program {grid})")


def _to_tf32(a: np.ndarray) -> np.ndarray:
    """Keep sign, exponent and the top 10 mantissa bits (truncation toward zero, as the tensor cores do)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return (bits & np.uint32(0xFFFFE000)).view(np.float32).reshape(np.shape(a))


def _bf16_to_fp32(bits: np.ndarray) -> np.ndarray:
    """The interpreter's bf16 (raw uint16 bits) as the fp32 values they are (exact: bf16 is fp32's top half)."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def install() -> bool:
    """Patch the interpreter's builder and grid executor (idempotent). False if the names are not there."""
    global _installed
    if _installed:
        return True
    try:
        import triton.language as tl
        from triton.runtime import interpreter as I
        builder_cls = I.InterpreterBuilder
        executor_cls = I.GridExecutor
        function_cls = I.InterpretedFunction
        orig_fn_call = function_cls.__call__
        builder = I.interpreter_builder
        debug = builder.options.debug
        tensor_handle = I.TensorHandle
    except (ImportError, AttributeError):
        return False

    orig_call = executor_cls.__call__
    if not debug:   # device_assert is a no-op: the sanitizer's work is thrown away
        builder.options = dataclasses.replace(builder.options, sanitize_overflow=False)
    orig_to_host = getattr(executor_cls, "_init_args_hst", None)
    orig_from_host = getattr(executor_cls, "_restore_args_dev", None)
    orig_load = builder_cls.create_masked_load
    orig_store = builder_cls.create_masked_store
    orig_rmw = builder_cls.create_atomic_rmw
    orig_cas = builder_cls.create_atomic_cas
    orig_dot = builder_cls.create_dot
    orig_idx = builder_cls.set_grid_idx
    orig_cast = builder_cls.cast_impl
    orig_fp_to_fp = builder_cls.create_fp_to_fp

    def call(self, *args, **kwargs):
        import inspect
        names = inspect.getfullargspec(self.fn).args
        _state.ranges = _tensor_ranges(args, kwargs, names)
        _state.patched = set()   # the globals whose language patch this launch has done (fn_call)
        try:
            return orig_call(self, *args, **kwargs)
        finally:
            _state.ranges = None
            _state.patched = None

    def fn_call(self, *args, **kwargs):
        patched = getattr(_state, "patched", None)
        if patched is None or id(self.fn.__globals__) not in patched:   # outside a launch, or a first call
            if patched is not None:
                patched.add(id(self.fn.__globals__))
            return orig_fn_call(self, *args, **kwargs)
        fn = self.rewrite()   # orig_fn_call less its _patch_lang(self.fn), already done in this launch
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise I.InterpreterError(repr(e)) from e

    def load(self, ptrs, mask, other, *rest, **kw):
        _check(ptrs, mask, "load")
        return orig_load(self, ptrs, mask, other, *rest, **kw)

    def store(self, ptrs, value, mask, *rest, **kw):
        _check(ptrs, mask, "store")
        return orig_store(self, ptrs, value, mask, *rest, **kw)

    def rmw(self, op, ptr, val, mask, *rest, **kw):
        _check(ptr, mask, "atomic")
        return orig_rmw(self, op, ptr, val, mask, *rest, **kw)

    def cas(self, ptr, cmp, val, *rest, **kw):
        _check(ptr, None, "atomic_cas")
        return orig_cas(self, ptr, cmp, val, *rest, **kw)

    def dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        # bf16 operands: the interpreter holds them as raw uint16 bits and would multiply the integers; widened
        # to fp32 they multiply exactly, as a GPU's bf16 MMA does into its fp32 accumulator
        a, b = (tensor_handle(_bf16_to_fp32(x.data), tl.float32) if x.dtype.scalar == tl.bfloat16 else x
                for x in (a, b))
        prec = str(input_precision).rsplit(".", 1)[-1].upper()
        fp32 = a.data.dtype == np.float32 and b.data.dtype == np.float32
        if fp32 and prec == "TF32":
            a = tensor_handle(_to_tf32(a.data), a.dtype)
            b = tensor_handle(_to_tf32(b.data), b.dtype)
        elif fp32 and prec == "TF32X3":
            a_hi, b_hi = _to_tf32(a.data), _to_tf32(b.data)
            a_lo, b_lo = _to_tf32(a.data - a_hi), _to_tf32(b.data - b_hi)
            acc = d.data.dtype
            small = np.matmul(a_hi, b_lo, dtype=acc) + np.matmul(a_lo, b_hi, dtype=acc)
            small = np.where(np.isnan(small), 0, small)   # as Triton's F32DotTC: an Inf's x - x_hi is NaN
            data = np.matmul(a_hi, b_hi, dtype=acc) + small + d.data
            return tensor_handle(data, d.dtype.scalar)
        return orig_dot(self, a, b, d, input_precision, max_num_imprecise_acc)

    def to_bf16(src, dst_type) -> bool:
        return src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16

    def cast(self, src, dst_type):
        if to_bf16(src, dst_type):
            return tensor_handle(_fp32_to_bf16(src.data), dst_type.scalar)
        return orig_cast(self, src, dst_type)

    def fp_to_fp(self, src, dst_type, rounding_mode):
        if to_bf16(src, dst_type) and "RTZ" not in str(rounding_mode).upper():
            return tensor_handle(_fp32_to_bf16(src.data), dst_type.scalar)
        return orig_fp_to_fp(self, src, dst_type, rounding_mode)

    def set_grid_idx(self, x, y, z):
        if getattr(_state, "reverse", False):
            nx, ny, nz = self.grid_dim
            x, y, z = nx - 1 - x, ny - 1 - y, nz - 1 - z
        _state.grid_idx = (x, y, z)
        return orig_idx(self, x, y, z)

    def marked(orig):
        def run(self, *args, **kwargs):
            _state.bookkeeping = getattr(_state, "bookkeeping", 0) + 1
            try:
                return orig(self, *args, **kwargs)
            finally:
                _state.bookkeeping -= 1
        return run

    executor_cls.__call__ = call
    function_cls.__call__ = fn_call
    if orig_to_host is not None and orig_from_host is not None:
        executor_cls._init_args_hst = marked(orig_to_host)
        executor_cls._restore_args_dev = marked(orig_from_host)
    builder_cls.create_masked_load = load
    builder_cls.create_masked_store = store
    builder_cls.create_atomic_rmw = rmw
    builder_cls.create_atomic_cas = cas
    builder_cls.create_dot = dot
    builder_cls.create_maxnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmax)
    builder_cls.create_minnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmin)
    builder_cls.set_grid_idx = set_grid_idx
    builder_cls.cast_impl = cast
    builder_cls.create_fp_to_fp = fp_to_fp
    _installed = True
    return True


def _fp32_to_bf16(data) -> np.ndarray:
    """fp32 values as bf16 bit patterns (uint16, the interpreter's bf16), rounded to nearest even as a GPU's
    conversion: the low 16 bits are rounded away with ties to the even result; NaNs stay (quiet) NaNs and values
    past bf16's largest finite round to Inf, as torch's .to(torch.bfloat16) does."""
    x = np.ascontiguousarray(data, dtype=np.float32)
    bits = x.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet = (bits >> np.uint32(16)) | np.uint32(0x40)
    return np.where(np.isnan(x), quiet, rounded).astype(np.uint16)


def in_bookkeeping() -> bool:
    """True while the interpreter copies a launch's arguments to or from the host (not the candidate's doing)."""
    return getattr(_state, "bookkeeping", 0) > 0


@contextlib.contextmanager
def reversed_grid(active: bool = True):
    """Hand out program ids last to first inside the block (exposes order-dependent races)."""
    before = getattr(_state, "reverse", False)
    _state.reverse = active
    try:
        yield
    finally:
        _state.reverse = before

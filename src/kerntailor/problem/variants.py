"""Derive input variants for a problem file that declares none.

KernelBench files size their tensors with module-level integer constants (`batch_size = 16`,
`dim = 16384`). We shrink the large ones (>= MIN_SIZE) until every tensor is small enough for the
Triton interpreter ("small"), then make as many of them odd as the model allows ("odd"). Small
constants (kernel sizes, strides, axes, group counts) are left alone: they are structure, not size.
So is a large one whose move changes no input's, parameter's or buffer's shape (`num_groups = 512` of a
GroupNorm, `pool_kernel_size = 16`): no tensor size is a function of it, and moving it leaves shapes that
generalization cannot express as functions of the inputs' sizes (structural_constants; slots.py has its own
test). Nor may a size be shrunk into such a constant's room: a GroupNorm's channels down to its group count.
Every candidate variant is checked by building the model and running forward on meta tensors.

Where that finds no variant (no such constants; or sizes that must move together, as a hinge loss whose
`batch_size` must equal `input_shape[0]`), the sizes are taken more widely (`_derive_from_slots`): the
integer literals of get_inputs(), get_init_inputs() and module-level tuples too (literals.py), equal sizes
moved together first, and for the odd variant also a small size that only the inputs have (a batch of 10).
Files the first way serves keep exactly the variants they had: stored results are keyed on them.
"""

from __future__ import annotations

import functools
import types
from pathlib import Path

from kerntailor.errors import ProblemError
from kerntailor.problem.literals import model_globals
from kerntailor.problem.load import MetaShapes, exec_module, meta_shapes, same_structure
from kerntailor.problem.spec import Variant

MIN_SIZE = 16          # constants below this are structural and never rescaled
SMALL_NUMEL = 1 << 15  # the largest input or parameter of "small" has at most this many elements
FLOOR = 8              # a shrunk constant never goes below this
# where the size constants leave a "small" variant with a tensor larger than this, the file's literal sizes are
# tried too. Not SMALL_NUMEL: a conv net's small variant keeps its 224 x 224 images (1.5 M elements), and
# shrinking those changes the structure its variants share (adaptive pools, strided conv sizes), which the
# constants' variants keep; 4 M fp32 elements (16 MB) still judge in seconds on the CPU
TOO_LARGE = 1 << 22
# nor may their total pass this: the interpreter runs every layer (16 hidden Linear(1024, 1024): 2 min a draw)
TOO_LARGE_TOTAL = 1 << 23


def size_constants(module: types.ModuleType, source: str = "") -> dict[str, int]:
    """Module-level integer constants that look like sizes (not bools, not private, >= MIN_SIZE), less those the
    model's code reads itself (literals.model_globals: only get_inputs() and get_init_inputs() pass sizes on)."""
    fixed = model_globals(source)
    out = {}
    for key, value in vars(module).items():
        if key.startswith("_") or type(value) is not int or key in fixed:
            continue
        if value >= MIN_SIZE:
            out[key] = value
    return out


def _try(source: str, path: Path, overrides: dict[str, int], dtype: str | None, name: str) -> MetaShapes | None:
    """The shapes of the inputs and parameters of the model at these sizes, or None if it does not build and run,
    its forward's structure is not the default's (load.OpStructure: a pool shrunk to one element) or a structural
    constant lost the room it has as written (_keeps_room)."""
    shapes = same_structure(source, path, tuple(sorted(overrides.items())), (), dtype, name)
    if shapes is None or not _keeps_room(source, path, overrides, dtype, name):
        return None
    return shapes


def _keeps_room(source: str, path: Path, overrides: dict[str, int], dtype: str | None, name: str) -> bool:
    """Whether each structural constant doubled builds at these sizes exactly where it builds as written. A size
    that must be a multiple of one (GroupNorm's channels of its `num_groups = 512`) is otherwise shrunk down to it:
    one channel a group, where the file has 16, and the captured graph's group axis becomes a 1, which
    OpStructure cannot see (native_group_norm returns no such axis) but the capture's decomposition does."""
    for key, value in structural_constants(source, path, dtype, name):
        doubled = {**overrides, key: 2 * value}
        as_written = meta_shapes(source, path, ((key, 2 * value),), (), dtype, name) is not None
        if as_written != (meta_shapes(source, path, tuple(sorted(doubled.items())), (), dtype, name) is not None):
            return False
    return True


def _shrink(source, path, sizes, dtype, name) -> dict[str, int] | None:
    """Halve the largest size constant until the largest input and parameter fit SMALL_NUMEL.

    A constant whose halving breaks the model (divisibility, fixed relations) is frozen at its value until another
    constant moves: ViT's image_size = 224 does not halve to 56 while its patch_size is 16, and does once the patch
    is 8 (frozen for good, its "small" variant kept 112 x 112 images, 197 tokens a sequence, and its interpreter
    referee ran past 300 s on the CPU).
    """
    current = dict(sizes)
    inputs = _try(source, path, current, dtype, name)
    if inputs is None:
        return None
    frozen: set[str] = set()
    while inputs.largest > SMALL_NUMEL:
        shrinkable = [k for k, v in current.items() if k not in frozen and v > FLOOR]
        if not shrinkable:
            break
        key = max(shrinkable, key=lambda k: current[k])
        trial = {**current, key: max(FLOOR, current[key] // 2)}
        trial_inputs = _try(source, path, trial, dtype, name)
        if trial_inputs is None:
            frozen.add(key)
            continue
        current, inputs = trial, trial_inputs
        frozen.clear()
    return current


def _oddify(source, path, small: dict[str, int], dtype, name) -> dict[str, int]:
    """Make each shrunk constant odd and not a power of two, one at a time, where the model allows it."""
    odd = dict(small)
    for key in sorted(small, key=lambda k: -small[k]):
        value = small[key]
        for candidate in (value - 1 if value % 2 == 0 else value + 2, value + 1, value - 3, value + 3):
            if candidate < 3 or candidate & (candidate - 1) == 0 or candidate == value:
                continue
            trial = dict(odd)
            trial[key] = candidate
            if _try(source, path, trial, dtype, name) is not None:
                odd = trial
                break
    return odd


def derive_variants(source: str, path: Path, module: types.ModuleType, dtype: str | None,
                    name: str) -> tuple[Variant, ...]:
    """A "small" and an "odd" variant, both checked on meta: from the file's size constants where they give
    both, else from every integer size of the file (module docstring)."""
    from kerntailor.problem.slots import derive_from_slots

    try:
        variants = _derive_from_constants(source, path, module, dtype, name)
    except ProblemError as first:
        wider = derive_from_slots(source, path, module, dtype, name)
        if wider is None:
            raise first from None
        return wider
    small = _sizes(source, path, variants[0], dtype, name)
    if small is None or (small[0] <= TOO_LARGE and small[1] <= TOO_LARGE_TOTAL):
        return variants
    # the constants leave a tensor too large to judge on the CPU (a list of hidden sizes, [32768, 32768], holds
    # the largest weights: that "small" variant kept 2 x 4 GB of fp32 weights, and the CPU referee ran 600 s), or
    # too many of them (a deep MLP's `[1024] * 16` hidden sizes, 15.7 M elements in 1 M pieces: its interpreter
    # referee ran over 140 s): the file's every size, where that gives a smaller "small"
    wider = derive_from_slots(source, path, module, dtype, name)
    if wider is None:
        return variants
    found = _sizes(source, path, wider[0], dtype, name)
    if found is not None and (found[0] < small[0] or (found[0] <= small[0] and 2 * found[1] <= small[1])):
        return wider   # (at least halved: a conv net whose channels are literals in its code only loses a few images)
    return variants


def _sizes(source: str, path: Path, variant: Variant, dtype: str | None, name: str) -> tuple[int, int] | None:
    """(largest, total): the elements of the variant's largest input, parameter or op result (an activation: an
    MBConv block expands its input's channels 6x, so 21_EfficientNetMBConv's "odd" variant, its input 3.5 M
    elements, ran 790 s a forward under the interpreter at 21 M-element activations), and of its inputs and
    parameters together."""
    shapes = meta_shapes(source, path, variant.overrides, variant.literals, dtype, name)
    return (max(shapes.largest, shapes.activations), shapes.total) if shapes is not None else None


def _derive_from_constants(source: str, path: Path, module: types.ModuleType, dtype: str | None,
                           name: str) -> tuple[Variant, ...]:
    sizes = _sizing(source, path, size_constants(module, source), dtype, name)
    if not sizes:
        raise ProblemError(
            f"{name}: cannot derive variants (no integer sizes >= {MIN_SIZE} in module-level constants, "
            "get_inputs() or get_init_inputs()); declare VARIANTS = {'small': {...}, 'odd': {...}} in the file")
    small = _shrink(source, path, sizes, dtype, name)
    if small is None:
        raise ProblemError(f"{name}: no smaller variant of the size constants builds; declare VARIANTS")
    odd = _oddify(source, path, small, dtype, name)
    variants = [Variant("small", tuple(sorted(small.items())))]
    if odd != small:
        variants.append(Variant("odd", tuple(sorted(odd.items()))))
    else:
        raise ProblemError(f"{name}: no odd-sized variant of the size constants builds; declare VARIANTS")
    return tuple(variants)


def _sizing(source: str, path: Path, constants: dict[str, int], dtype: str | None, name: str) -> dict[str, int]:
    """The constants less the structural ones (structural_constants): those keep their value in every variant and
    so in the probe."""
    fixed = dict(structural_constants(source, path, dtype, name))
    return {k: v for k, v in constants.items() if k not in fixed}


@functools.lru_cache(maxsize=64)
def structural_constants(source: str, path: Path, dtype: str | None, name: str) -> tuple[tuple[str, int], ...]:
    """The size-like constants (size_constants) that size no tensor: halving one builds a model with every
    input's, parameter's and buffer's shape as written (a group count, a pool's kernel size, a constant nothing
    reads). One whose halving breaks the model (it moves with another) or changes how many tensors there are (a
    shortcut that becomes an identity) is still taken for a size, as before."""
    default = meta_shapes(source, path, (), (), dtype, name)
    if default is None:
        return ()  # the model does not build as written: _shrink says so
    try:
        constants = size_constants(exec_module(source, path), source)
    except ProblemError:
        return ()
    return tuple(sorted((k, v) for k, v in constants.items()
                        if _leaves_shapes(source, path, k, v, default, dtype, name)))


def _leaves_shapes(source, path, key: str, value: int, default: MetaShapes, dtype, name) -> bool:
    moved = meta_shapes(source, path, ((key, value // 2),), (), dtype, name)
    return moved is not None and (moved.inputs, moved.state) == (default.inputs, default.state)


def probe_variant(problem) -> Variant | None:
    """A variant for shape generalization only: every size constant moved by a different small step.

    Variants the referee uses often keep two constants equal (H == W, batch == heads); fitting sizes
    over them cannot tell those dims apart. The probe breaks such ties wherever the model allows.
    It is only ever built on meta tensors.
    """
    base_variant = next((v for v in problem.variants if not v.is_default), None)
    if base_variant is None:
        return None
    if base_variant.literals:
        from kerntailor.problem.slots import probe_slots

        return probe_slots(problem, base_variant)
    base = dict(base_variant.overrides)
    module = vars(problem.module())
    taken = {k: {module.get(k)} | {dict(v.overrides).get(k) for v in problem.variants} for k in base}
    probe = move_apart(base, taken, lambda trial: _try(problem.source, problem.path, trial, problem.dtype,
                                                       problem.name) is not None)
    return Variant("probe", tuple(sorted(probe.items()))) if probe != base else None


ODD_CHAIN_MAX = 4096   # move_apart: the largest value moved to an odd chain, m * 2^e + 1
ODD_CHAIN_TRIES = 8    # move_apart: the odd chains tried for one size before the small steps


def odd_chains(value: int) -> list[int]:
    """Values m * 2^e + 1 (m odd, 2^e below 2 * value) from value / 2 to 4 * value but `value`, the ones that
    stay odd through the most halvings first (e), then the nearest: where the first does not build (19_MobileNetV1's
    fixed AvgPool2d(7) feeding a Linear(1024) takes only inputs that end 7..13 wide after five halvings), another
    that still stays odd long. Halvings ((x - 1) // 2 + 1) keep m: two chains of different m never meet at any
    level (chain_of)."""
    top = (value - 1).bit_length()
    found = {m * 2 ** e + 1 for e in range(1, top + 1) for m in range(1, 4 * value // 2 ** e + 1, 2)}
    return sorted((c for c in found if value // 2 <= c <= 4 * value and c != value),
                  key=lambda c: (-((c - 1) & -(c - 1)), abs(c - value)))


def chain_of(value: int) -> int:
    """m, the odd part of value - 1 (0 for 1): the chain m * 2^e + 1 that `value` is on."""
    return (value - 1) // ((value - 1) & -(value - 1)) if value > 1 else 0


def move_apart(base: dict, taken: dict, builds) -> dict:
    """`base` with every key moved (to an odd chain first where it is a size a net may halve, else by a different
    small step) where `builds` (the model builds and keeps its structure), to a value no variant has (`taken`)
    where one builds: a stride fitted only over the variants where its axis is not 1 (the default and the probe,
    where the others have a batch of 1) then sees every dim vary (capture/generalize.py; a probe at the default's
    batch left `batch == 2` to check at run time)."""
    probe = dict(base)
    chained: set[int] = set()   # the chains (chain_of) that keys were moved to
    for i, key in enumerate(sorted(base)):
        steps = [d for d in (2 * i + 1, 2 * i + 2, -(2 * i + 1), 4 * i + 3) if base[key] + d >= 2]
        # nor a value another key moved to: DenseNet's block at growth 16 + 1 == height 14 + 3 and channels
        # 16 + 5 == width 14 + 7 had C·H·W == growth·W² in every variant, and the fit took the shorter product
        moved = {v for k, v in probe.items() if k != key and v != base[k]}
        free = [d for d in steps if base[key] + d not in taken.get(key, ()) and base[key] + d not in moved]
        # first an odd chain (odd_chains; each key its own m): halved by a stride-2 convolution ((x - 1) // 2 + 1)
        # it stays odd e times, and no two keys' halvings meet. Small steps apart vanish under a net's halvings, and
        # sizes even in every variant fit halves of the map before: 20_MobileNetV2's probe 59 x 61 was 8 x 8 after
        # three, and its kernel took a width for a height and a stride 192 H'W' for 48 HW, wrong on any input not
        # square or not even (H100 referee, 2026-12-07); 19_MobileNetV1's width, its first chain refused by the
        # net, fell back to 229 (even after two halvings) and fitted (W'' // 2) for (W'' - 1) // 2 + 1. Sizes up to
        # ODD_CHAIN_MAX only (spatial sizes, not a model's widths or sequences)
        chains = []
        if 2 <= base[key] <= ODD_CHAIN_MAX:
            chains = [c - base[key] for c in odd_chains(base[key])
                      if c not in taken.get(key, ()) and chain_of(c) not in chained][:ODD_CHAIN_TRIES]
        for delta in chains + free + [d for d in steps if d not in free]:
            trial = {**probe, key: base[key] + delta}
            if builds(trial):
                probe = trial
                if delta in chains:
                    chained.add(chain_of(base[key] + delta))
                break
    return probe

"""Variants from every integer size of a problem file, for files whose module-level constants give none.

A *slot* is one integer a variant may change: a module-level constant (by name) or an integer literal of
get_inputs(), get_init_inputs() or a module-level tuple (by position, literals.py). A slot counts as a size
when moving it changes the shape of an input, a parameter or a buffer (a `randint` bound or a seed does
not); one whose move breaks the model counts too (it may only move together with another).

small: slots of equal value move together first (`batch_size` and `input_shape[0]`, both 32768, where the
model needs them equal), halved, largest first, until every tensor fits SMALL_NUMEL; a group whose halving
breaks the model is split into its members, a member whose halving breaks it keeps its value.
odd: each group (then each member) made odd and not a power of two where the model allows. Where nothing
shrinks or nothing can be odd, a small size (below MIN_SIZE) that only the inputs have, never a parameter
(a batch of 10, not a kernel size of 3) is halved for small and made odd for odd. Every candidate is
checked by building the model and running forward on meta tensors.
"""

from __future__ import annotations

import types
from pathlib import Path

from kerntailor.problem.literals import literal_slots, model_globals
from kerntailor.problem.load import MetaShapes, meta_shapes, same_structure
from kerntailor.problem.spec import Variant

Slot = tuple[str, str]   # ("const", name) or ("literal", "LINE:COL")


def _split(values: dict[Slot, int]) -> tuple[dict[str, int], dict[str, int]]:
    consts = {k: v for (kind, k), v in values.items() if kind == "const"}
    literals = {k: v for (kind, k), v in values.items() if kind == "literal"}
    return consts, literals


def _shapes(source: str, path: Path, values: dict[Slot, int], dtype: str | None, name: str,
            keep_structure: bool = True) -> MetaShapes | None:
    """The shapes of the model built at `values` (inputs; parameters and buffers), or None if it fails or (with
    `keep_structure`) its forward's structure is not the default's (load.OpStructure)."""
    consts, literals = _split(values)
    measure = same_structure if keep_structure else meta_shapes
    return measure(source, path, tuple(sorted(consts.items())), tuple(sorted(literals.items())), dtype, name)


def _all_slots(source: str, module: types.ModuleType) -> dict[Slot, int]:
    """Every integer a variant may move: module-level constants the model's code does not read itself
    (literals.model_globals), and the literals of literal_slots."""
    fixed = model_globals(source)
    ints = {k: v for k, v in vars(module).items() if type(v) is int and not k.startswith("_") and k not in fixed}
    slots: dict[Slot, int] = {("const", k): v for k, v in ints.items()}
    for lit in literal_slots(source, set(ints)):
        slots[("literal", lit.key)] = lit.value
    return slots


def _is_odd(value: int) -> bool:
    return value >= 3 and value % 2 == 1 and value & (value - 1) != 0


def derive_from_slots(source: str, path: Path, module: types.ModuleType, dtype: str | None,
                      name: str) -> tuple[Variant, ...] | None:
    """A "small" and an "odd" variant from the file's integer sizes, both checked on meta; None if none builds."""
    from kerntailor.problem.variants import FLOOR, MIN_SIZE, SMALL_NUMEL

    default = _shapes(source, path, {}, dtype, name)
    if default is None:
        return None
    every = _all_slots(source, module)
    sizes = {s: v for s, v in every.items()
             if v >= MIN_SIZE and _moves_a_shape(source, path, s, v, default, dtype, name)}
    # shrink: groups of equal value first
    units = [tuple(s for s in sizes if sizes[s] == value) for value in sorted(set(sizes.values()), reverse=True)]
    current, shapes = dict(sizes), default
    frozen: set[tuple[Slot, ...]] = set()
    while shapes.largest > SMALL_NUMEL:
        open_units = [u for u in units if u not in frozen and current[u[0]] > FLOOR]
        if not open_units:
            break
        unit = max(open_units, key=lambda u: current[u[0]])
        trial = {**current, **{s: max(FLOOR, current[s] // 2) for s in unit}}
        trial_shapes = _shapes(source, path, trial, dtype, name)
        if trial_shapes is not None:
            current, shapes = trial, trial_shapes
        elif len(unit) > 1:
            units.remove(unit)
            units += [(s,) for s in unit]
        else:
            frozen.add(unit)
    small = current
    odd = dict(small)
    for unit in sorted(units, key=lambda u: -small[u[0]]):
        for members in [unit] + ([(s,) for s in unit] if len(unit) > 1 else []):
            if any(odd[s] != small[s] for s in members):
                continue  # the whole group is odd already
            value = small[members[0]]
            for candidate in (value - 1 if value % 2 == 0 else value + 2, value + 1, value - 3, value + 3):
                if not _is_odd(candidate) or candidate == value:
                    continue
                trial = {**odd, **{s: candidate for s in members}}
                if _shapes(source, path, trial, dtype, name) is not None:
                    odd = trial
                    break
    if small == sizes or odd == small:
        batch = _batch_slot(source, path, every, small, shapes, dtype, name)
        if batch is not None:
            slot, value = batch
            if small == sizes and value >= 4 and _shapes(source, path, {**small, slot: value // 2}, dtype, name):
                small = {**small, slot: value // 2}
                odd = {**odd, slot: value // 2} if odd != sizes else dict(small)
            if odd == small:
                for candidate in (value - 1, value + 1, value + 2):
                    trial = {**small, slot: candidate}
                    if _is_odd(candidate) and candidate != small.get(slot, value) and \
                            _shapes(source, path, trial, dtype, name):
                        odd = trial
                        break
    if odd == small:
        return None
    variants = (_variant("small", small, every), _variant("odd", odd, every))
    return tuple(v for v in variants if not v.is_default)  # nothing shrinks: the default is the small one


def _moves_a_shape(source, path, slot: Slot, value: int, default, dtype, name) -> bool:
    """Whether moving this one slot changes a tensor's shape (or breaks the model: it moves with another), and
    not how many there are: a count (`[1024] * 16` layers) changes the graph's structure, not its sizes."""
    moved = _shapes(source, path, {slot: value // 2 if value > 2 else value + 1}, dtype, name, keep_structure=False)
    if moved is None:
        return True
    return (moved.inputs, moved.state) != (default.inputs, default.state) and \
        (len(moved.inputs), len(moved.state)) == (len(default.inputs), len(default.state))


def _batch_slot(source, path, every: dict[Slot, int], small: dict[Slot, int], base, dtype,
                name) -> tuple[Slot, int] | None:
    """A small slot (below MIN_SIZE) that is a size of the inputs only: moving it changes the inputs' shapes
    and no parameter's or buffer's (a batch of 10, never a kernel size of 3). `base`: the shapes at `small`."""
    from kerntailor.problem.variants import MIN_SIZE

    for slot, value in every.items():
        if slot in small or not 2 <= value < MIN_SIZE:
            continue
        moved = _shapes(source, path, {**small, slot: value + 1}, dtype, name)
        if moved is not None and moved.state == base.state and moved.inputs != base.inputs:
            return slot, value
    return None


def _variant(name: str, values: dict[Slot, int], every: dict[Slot, int]) -> Variant:
    changed = {s: v for s, v in values.items() if v != every[s]}
    consts, literals = _split(changed)
    return Variant(name, tuple(sorted(consts.items())), tuple(sorted(literals.items(), key=_position)))


def _slot_values(variant: Variant) -> dict[Slot, int]:
    return {("const", k): v for k, v in variant.overrides} | {("literal", k): v for k, v in variant.literals}


def _position(item: tuple[str, int]) -> tuple[int, int]:
    line, col = item[0].split(":")
    return int(line), int(col)


def probe_slots(problem, base: Variant) -> Variant | None:
    """probe_variant (variants.py) for a variant that rewrites literals: every slot it changes moved by a
    different small step, where the model allows."""
    from kerntailor.problem.variants import move_apart

    values: dict[Slot, int] = {("const", k): v for k, v in base.overrides}
    values.update({("literal", k): v for k, v in base.literals})
    default = _all_slots(problem.source, problem.module())
    taken = {s: {default.get(s)} | {_slot_values(v).get(s) for v in problem.variants} for s in values}
    probe = move_apart(values, taken, lambda trial: _shapes(problem.source, problem.path, trial, problem.dtype,
                                                            problem.name) is not None)
    if probe == values:
        return None
    consts, literals = _split(probe)
    return Variant("probe", tuple(sorted(consts.items())), tuple(sorted(literals.items(), key=_position)))

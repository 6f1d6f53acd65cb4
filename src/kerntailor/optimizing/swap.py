"""The swap itself: a user's module replaced by one that runs a generated kernel, its parameters untouched.

`Tailored` takes the place of the module in the model's tree. It holds the module's own parameters, buffers and
children under the same names (the same tensor objects: the state_dict's keys and tensors are unchanged, and an
optimizer or a load_state_dict reaches the same Parameters), and its forward calls the generated kernel.py's
ModelNew with the module's argument and those tensors in the order the kernel takes them (scope.Slot), in the
training mode the module was in when swapped (the kernel was captured, generated and verified in it; in the other
mode, `model.train()` after an eval-mode swap, the module's own forward runs: dropout is not silently lost). ModelNew
checks its inputs in Python, then runs every launch as one `torch.library.custom_op` with a fake implementation
(codegen/customop.py), so a model holding a Tailored module compiles under torch.compile without a graph break
at it; with gradients on it runs through ModelNew's autograd path (the kernel forward, the reference's backward).

The optimized model is a structural copy of the user's (`share_copy`): new module objects, the same parameter
and buffer tensors. The user's model stays as it was: the reference the swaps are verified against.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import inspect
import sys
from pathlib import Path

from torch import nn

from kerntailor.errors import KerntailorError
from kerntailor.optimizing.scope import ARG, Scope


def _adopt(new: nn.Module, original: nn.Module) -> None:
    """`new` holds `original`'s parameters, buffers and children under the same names (the same objects)."""
    new.__dict__.update(_parameters=dict(original._parameters), _buffers=dict(original._buffers),
                        _modules=dict(original._modules),
                        _non_persistent_buffers_set=set(original._non_persistent_buffers_set))
    new.training = original.training
    object.__setattr__(new, "original", original)
    object.__setattr__(new, "swapped_training", original.training)


def _train(new: nn.Module, mode: bool) -> None:
    """The kept original follows the mode too (it runs in the mode the kernel was not made for)."""
    new.original.training = mode


class PassThrough(nn.Module):
    """A chain's later module (scope.py): the kernel in place of the chain's first computed its result already, so
    its forward returns its argument. It keeps the module's parameters (the state_dict is unchanged)."""

    def __init__(self, original: nn.Module, first: str):
        super().__init__()
        _adopt(self, original)
        object.__setattr__(self, "first", first)

    def forward(self, x):
        if self.training != self.swapped_training:   # the chain's first runs its own forward too (Tailored)
            return self.original(x)
        return x

    def train(self, mode: bool = True):
        super().train(mode)
        _train(self, mode)
        return self

    def extra_repr(self) -> str:
        return f"{type(self.original).__name__}, computed by the kernel at {self.first}"


class Tailored(nn.Module):
    """A module whose forward is a generated kernel (module docstring); `original` is kept (outside the module
    tree) to undo the swap. `followers`: the PassThrough modules of the rest of a chain, whose parameters the
    kernel reads too."""

    def __init__(self, original: nn.Module, kernel: nn.Module, scope: Scope, op: str,
                 followers: tuple[nn.Module, ...] = ()):
        super().__init__()
        _adopt(self, original)
        object.__setattr__(self, "kernel", kernel)
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "followers", followers)
        object.__setattr__(self, "_paths", tuple((s.owner, tuple(s.state.split("."))) if s.kind != ARG else None
                                                 for s in scope.slots))

    def forward(self, *args, **kwargs):
        if self.training != self.swapped_training:   # the kernel was made and verified in the other mode
            return self.original(*args, **kwargs)
        if kwargs or len(args) != self.scope.args:
            raise TypeError(f"{self.scope.module} was optimized for a call with {self.scope.args} positional "
                            f"argument(s), got {len(args)} and keywords {sorted(kwargs)}")
        given = iter(args)
        tensors = [next(given) if path is None else self._state(*path) for path in self._paths]
        out = self.kernel(*tensors)
        return out if self.scope.reshape is None else out.reshape(self.scope.reshape)

    def train(self, mode: bool = True):
        super().train(mode)
        _train(self, mode)
        return self

    def _state(self, owner: int, path: tuple[str, ...]):
        value = self if owner == 0 else self.followers[owner - 1]
        for part in path:
            value = getattr(value, part)
        return value

    def extra_repr(self) -> str:
        chain = f" (with {', '.join(self.scope.modules[1:])})" if self.followers else ""
        return f"{type(self.original).__name__}{chain} as torch.ops.kerntailor.{self.op}"


def install_scope(model: nn.Module, scope: Scope, kernel: nn.Module, op: str) -> tuple[nn.Module, tuple]:
    """Put the kernel in place of the scope's module (the first of a chain; the rest become PassThrough). Returns
    the model (a Tailored one where the scope is the whole model) and the modules replaced, for `undo_scope`."""
    originals = tuple(model.get_submodule(m) for m in scope.modules)
    followers = tuple(PassThrough(o, scope.module) for o in originals[1:])
    tailored = Tailored(originals[0], kernel, scope, op, followers)
    if not scope.module:
        return tailored, originals
    install(model, scope.module, tailored)
    for path, follower in zip(scope.modules[1:], followers):
        install(model, path, follower)
    return model, originals


def undo_scope(model: nn.Module, scope: Scope, originals: tuple[nn.Module, ...]) -> nn.Module:
    """The model as it was before install_scope."""
    if not scope.module:
        return originals[0]
    for path, original in zip(scope.modules, originals):
        install(model, path, original)
    return model


def share_copy(model: nn.Module) -> nn.Module:
    """A copy of `model`'s module tree holding the same parameter and buffer tensors (no weight is copied)."""
    memo = {id(t): t for t in list(model.parameters()) + list(model.buffers())}
    return copy.deepcopy(model, memo)


def load_kernel(path: Path) -> tuple[nn.Module, str]:
    """ModelNew of a kernel.py (built with no arguments: a problem file `profile` writes has none) and its custom
    op's name."""
    source = Path(path).read_text()
    name = "kerntailor_optimized_" + hashlib.sha256(source.encode()).hexdigest()[:16]
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception:
            del sys.modules[name]
            raise
    if not hasattr(module, "ModelNew"):
        raise KerntailorError(f"{path} defines no ModelNew")
    ops = [line.split("torch.ops.kerntailor.")[1].split("(")[0] for line in source.splitlines()
           if "= torch.ops.kerntailor." in line]
    return module.ModelNew(), (ops[0] if ops else "?")


def kernel_arguments(kernel: nn.Module) -> tuple[str, ...]:
    """The names ModelNew.forward takes, in order."""
    return tuple(inspect.signature(kernel.forward).parameters)


def install(model: nn.Module, path: str, new: nn.Module) -> nn.Module:
    """Put `new` at `path` of `model`'s tree; returns the module it replaced."""
    parent, _, name = path.rpartition(".")
    holder = model.get_submodule(parent) if parent else model
    old = holder._modules[name]
    holder._modules[name] = new
    return old


def same_state(a: dict, b: dict) -> str:
    """Why two state_dicts differ ("" when they hold the same keys and the same tensors)."""
    if list(a) != list(b):
        return f"its keys differ ({sorted(set(a) ^ set(b))[:3]} ...)"
    for k in a:
        if a[k] is not b[k] and not (a[k].data_ptr() == b[k].data_ptr() and a[k].shape == b[k].shape):
            return f"{k} is another tensor"
    return ""

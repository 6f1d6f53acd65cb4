"""Issue #16's "adding a family means a writer, a schedule type and a search space, and nothing else", shown: a
family registered at test time, as one `Family` entry (codegen) and one `SpaceFamily` entry (search), is taken by
the plan, the generate stage's sizing, the search space, codegen and the emitted module, with no other edit.

The family is a toy convolution family, registered in place of codegen's own (codegen/conv.py; without either,
"conv" anchors are library groups). Its
"kernel" is the ATen call on the host (the library's host lines, reused), so it is a toy in what it computes, not
in how it is wired: the plan makes it a `conv` group (not a `library` one) because codegen's table names it, its
sizes come from its own `work_sizes`, its space from its own entry, and kernel.py calls it ahead of a generated
softmax kernel that reads its output; the referee passes the module.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from helpers import judge, prepared
from kerntailor.codegen import FAMILIES, Family, default_schedule, generate_module
from kerntailor.codegen import library as library_writer
from kerntailor.codegen.kernel import GeneratedKernel, Launch
from kerntailor.codegen.library import LibrarySchedule
from kerntailor.generate.kernels import group_work
from kerntailor.plan import plan_fusion
from kerntailor.search.families import (
    SPACE_FAMILIES,
    SpaceFamily,
    loop_trips,
    make_space,
    padding_factor,
    program_count,
    seed_knobs,
)
from kerntailor.search.space import Space
from kerntailor.targets import get_target
from kerntailor.targets.roofline import dtype_key
from kerntailor.verify import VerifySettings

PROBLEM = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)

    def forward(self, x):
        return torch.softmax(self.conv(x), dim=1)


def get_inputs():
    return [torch.randn(2, 3, 12, 10)]


def get_init_inputs():
    return []
'''
CALL = "torch.ops.aten.convolution.default"


class ConvCallSchedule(LibrarySchedule):
    """The toy family's schedule: nothing to tune (the library picks its algorithm)."""

    family: ClassVar[str] = "conv"


def _default(gen, group) -> ConvCallSchedule:
    return ConvCallSchedule()


def _write(gen, group, schedule, host_names, kernel_name, arch=None) -> GeneratedKernel:
    lines, call = library_writer.host_lines(gen, group, host_names)
    launch = Launch((), (), (), (), host_prologue=tuple(lines), host_buffers=tuple(group.outputs))
    return GeneratedKernel(group.name, kernel_name, "", (), launch, library_calls=(call.dotted,))


def _sizes(gen, group) -> dict[str, int]:
    node = gen.graph.node(group.anchor)
    return {"outputs": node.out.numel, "channels": node.out.shape[1]}


def _space(target, *, outputs: int, channels: int, dtype: str = "fp32") -> Space:
    return Space("conv", (), (), target.name, (("channels", channels), ("outputs", outputs)), dtype_key(dtype))


@pytest.fixture
def conv_family(monkeypatch):
    """The two entries a family is, and nothing else."""
    monkeypatch.setitem(FAMILIES, "conv", Family("conv", ConvCallSchedule, _default, _write, work_sizes=_sizes,
                                                 matrix=True, output_shape=library_writer.output_shape))
    monkeypatch.setitem(SPACE_FAMILIES, "conv", SpaceFamily("conv", _space, None))


@pytest.fixture
def problem(tmp_path) -> Path:
    path = tmp_path / "conv_softmax.py"
    path.write_text(PROBLEM)
    return path


def test_without_the_family_the_convolution_is_a_library_group(problem, library_conv):
    _, _, gen, plan = prepared(problem)
    assert [g.family for g in plan.groups] == ["library", "reduction"]
    assert "conv" not in FAMILIES and "conv" not in SPACE_FAMILIES


@pytest.mark.interpreter
def test_a_family_registered_in_the_two_tables_runs_from_plan_to_an_emitted_module(problem, conv_family, tmp_path):
    spec, _, gen, _ = prepared(problem)
    plan = plan_fusion(gen.graph, FAMILIES)                     # the caller names codegen's families
    assert [g.family for g in plan.groups] == ["conv", "reduction"]
    conv, softmax = plan.groups
    anchor = gen.graph.node(conv.anchor)
    assert conv.nodes == (anchor.name,) and anchor.family == "conv"

    # the generate stage sizes it by the family's own hook; its product runs at the matrix rate
    work, sizes = group_work(gen, conv, "fp32")
    assert sizes == {"outputs": 2 * 8 * 12 * 10, "channels": 8}
    assert work.matrix and work.flops == anchor.flops() and work.vector_flops == 0

    # the search space and what its configs imply come from the family's entry
    target = get_target("mi300x")
    space = make_space("conv", target, dtype="fp32", **sizes)
    (config,) = space.enumerate()
    assert config.family == "conv" and seed_knobs("conv", target, dtype="fp32", **sizes) == []
    assert loop_trips(config, sizes) == 1 and padding_factor(config, sizes) == 1.0
    with pytest.raises(ValueError, match="no grid rule"):   # no kernel of its own: no grid
        program_count(config, sizes)
    schedule = space.schedule(config, default_schedule(gen, conv))
    assert isinstance(schedule, ConvCallSchedule)

    # codegen writes it, kernel.py runs it ahead of the generated softmax, and the referee passes the module
    schedules = {conv.name: schedule, softmax.name: default_schedule(gen, softmax)}
    module = generate_module(spec, gen, plan, schedules, "mi300x", "gfx942")
    text = module.source
    assert f"{conv.name}_{anchor.name} = {CALL}(" in text and f"def {conv.name}_conv_kernel" not in text
    assert f"def {softmax.name}_reduction_kernel" in text
    assert f"conv [{anchor.name}]" in text                      # the header lists the group under its family
    settings = VerifySettings(allowed_calls=frozenset({CALL}), allowed_ops=frozenset({"aten.convolution.default"}))
    verdict = judge(problem, module, tmp_path, settings=settings)
    assert verdict.passed, f"{verdict.check}: {verdict.reason}\n{text}"

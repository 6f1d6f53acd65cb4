"""Twin groups (generate/twins.py): groups whose kernels are one function on one shape share a search, and only
those: a different op, shape or schedule makes another key."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from helpers import captured, loaded
from kerntailor.codegen import FAMILIES, default_schedule, generate_module, refused_anchors
from kerntailor.generate.twins import canonical, twin_keys
from kerntailor.plan import plan_fusion

# layers 1 and 2 are the same Linear(16, 16) + ReLU; layer 3 is Linear(16, 16) + Tanh; layer 0 has another shape
TWINS = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n_in, hidden):
        super().__init__()
        self.l0 = nn.Linear(n_in, hidden)
        self.l1 = nn.Linear(hidden, hidden)
        self.l2 = nn.Linear(hidden, hidden)
        self.l3 = nn.Linear(hidden, hidden)

    def forward(self, x):
        x = torch.relu(self.l0(x))
        x = torch.relu(self.l1(x))
        x = torch.relu(self.l2(x))
        return torch.tanh(self.l3(x))

batch_size = 32
n_in = 24
hidden = 16

def get_inputs():
    return [torch.randn(batch_size, n_in)]

def get_init_inputs():
    return [n_in, hidden]
'''


def _run(tmp_path, text=TWINS):
    path = tmp_path / "twins.py"
    path.write_text(text)
    spec = loaded(path)
    cap, gen = captured(spec)
    plan = plan_fusion(gen.graph, tuple(FAMILIES), library=refused_anchors(gen.graph))
    schedules = {g.name: default_schedule(gen, g) for g in plan.groups}
    run = SimpleNamespace(gen=gen, capture=cap, plan=plan,
                          module=lambda s: generate_module(spec, gen, plan, s, "mi300x", "gfx942"))
    return run, plan, schedules


def test_twin_groups_share_a_key_and_others_do_not(tmp_path):
    run, plan, schedules = _run(tmp_path)
    assert [g.family for g in plan.groups] == ["matmul"] * 4
    by_group = twin_keys(run, schedules)
    keys = [by_group[g.name] for g in plan.groups]
    assert keys[1] == keys[2]                       # the same Linear + ReLU on the same shapes
    assert keys[0] != keys[1]                       # another K (24)
    assert keys[3] != keys[1]                       # tanh, not relu
    other = dict(schedules, **{plan.groups[2].name: replace(schedules[plan.groups[2].name], num_warps=8)})
    assert twin_keys(run, other)[plan.groups[2].name] != keys[1]   # another default schedule


def test_canonical_renames_only_the_given_names():
    a = "def k1_kernel(pw1_ptr, out_ptr):\n    x = tl.load(pw1_ptr)\n    tl.store(out_ptr, tl.maximum(x, 0))"
    b = "def k5_kernel(pw9_ptr, o_ptr):\n    x = tl.load(pw9_ptr)\n    tl.store(o_ptr, tl.maximum(x, 0))"
    c = b.replace("maximum", "minimum")
    names_a, names_b = {"k1_kernel", "pw1_ptr", "out_ptr"}, {"k5_kernel", "pw9_ptr", "o_ptr"}
    assert canonical(a, names_a) == canonical(b, names_b)
    assert canonical(a, names_a) != canonical(c, names_b)
    assert canonical(a, set()) == a


def test_a_group_reading_its_input_transposed_is_not_a_twin(tmp_path):
    """Measured mode reuses a twin's timed ranking too, so the key must tell memory patterns apart: l1 and l2 are
    the same Linear(16, 16) + ReLU on the same shapes, but l2 reads its input transposed."""
    text = TWINS.replace("        x = torch.relu(self.l2(x))", "        x = torch.relu(self.l2(x.transpose(0, 1)))")
    run, plan, schedules = _run(tmp_path, text.replace("torch.randn(batch_size, n_in)", "torch.randn(hidden, n_in)"))
    keys = twin_keys(run, schedules)
    assert [g.family for g in plan.groups] == ["matmul"] * 4
    assert keys[plan.groups[1].name] != keys[plan.groups[2].name]

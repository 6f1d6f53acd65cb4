"""capture_problem: a ProblemSpec and a variant → the IR graph with its costs."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, replace

import torch

from kerntailor.capture.cost import GraphCost, graph_cost
from kerntailor.capture.export import export_on_meta
from kerntailor.capture.generalize import Generalized, StructureChanged, generalize
from kerntailor.capture.lower import lower_program
from kerntailor.capture.product_rows import common_rows, flatten_product_rows
from kerntailor.capture.rewrite_attention import rewrite_attention
from kerntailor.errors import CaptureError
from kerntailor.ir.nodes import Attention, Graph
from kerntailor.problem.spec import ProblemSpec, Variant


@dataclass(frozen=True)
class Capture:
    problem: str
    variant: str
    dtype: str | None
    graph: Graph
    cost: GraphCost
    # the graph before flatten_product_rows (capture_generalized makes every variant's choice the same)
    unflattened: Graph | None = None


def capture_problem(problem: ProblemSpec, variant: str | Variant = "default", prove_causal: bool = True) -> Capture:
    """Trace the problem's model on meta tensors of `variant`'s shapes and lower it to the IR (`prove_causal`:
    rewrite_attention's causal-mask proofs).

    Remembered (the last few): `generate` captures the default again for its baselines' cost after
    capture_generalized captured it, and a KernelBench sweep before generalizing; an export is seconds (ResNet-101's
    5 s on a free core). Keyed on everything the capture reads: the whole ProblemSpec (its source, path and dtype
    policy), the variant's sizes, `prove_causal` and torch's default dtype. A capture that raises is not remembered.

    Raises CaptureError naming the ops the IR cannot express.
    """
    chosen = variant if isinstance(variant, Variant) else problem.variant(variant)
    return _capture(problem, chosen, prove_causal, torch.get_default_dtype())


@functools.lru_cache(maxsize=8)
def _capture(problem: ProblemSpec, variant: Variant, prove_causal: bool, default_dtype: torch.dtype) -> Capture:
    model = problem.make_model(variant, device="meta")
    inputs = problem.make_inputs(variant, device="meta")
    training = model.training if reads_training(model) else None
    _without_running_statistics(model)
    program = export_on_meta(model, inputs, problem.name)
    unflattened = rewrite_attention(lower_program(program, problem.name), prove_causal)
    if training is not None:
        unflattened = replace(unflattened, training=training)
    graph = flatten_product_rows(unflattened)
    return Capture(problem.name, variant.name, problem.dtype, graph, graph_cost(graph), unflattened)


def capture_generalized(problem: ProblemSpec) -> tuple[Capture, Generalized]:
    """The default capture plus its sizes as functions of input dims, fitted over every variant.

    A written-out mask proved causal at some variants (or the probe) and not at others is a diagonal that moves
    with the sizes (tril(ones(Lq, Lk), Lk - Lq) where Lq == Lk only in some): every variant is then captured again
    with the mask kept as an operand, so no variant gets a causal kernel the others disprove.

    Raises CaptureError when the structure changes between variants or a size cannot be fitted.
    """
    from kerntailor.problem.variants import probe_variant

    captures = [capture_problem(problem, v) for v in problem.variants]
    probe = probe_variant(problem)
    probed = capture_problem(problem, probe) if probe is not None else None
    if len({causal_proofs(c.graph) for c in captures + ([probed] if probed else [])}) > 1:
        captures = [capture_problem(problem, v, prove_causal=False) for v in problem.variants]
        probed = capture_problem(problem, probe, prove_causal=False) if probe is not None else None
    # flatten_product_rows' choice depends on sizes (a batch of 1 merges a broadcast axis): one choice for all
    every = captures + ([probed] if probed is not None else [])
    flat = common_rows([c.unflattened for c in every])
    every = [replace(c, graph=g, cost=graph_cost(g)) for c, g in zip(every, flat)]
    captures, probed = every[:len(captures)], (every[-1] if probed is not None else None)
    graphs = [c.graph for c in captures]
    # the probe's sizes may change the graph (StructureChanged: GQA with as many kv heads as heads), or its untied
    # dims make a size a sum no monomial is (a padded size plus a product; a concatenation's sums are derived dims,
    # generalize.concat_dims): over the referee's variants alone those dims stay tied: one is fitted to the other,
    # which the kernel's shape checks hold at run time (codegen/guards.py). Sums of monomials (polyfit.py) are the
    # last resort, tried only where no monomial fits with or without the probe: a problem that fitted so keeps
    # the expressions it had
    attempts = [(g, polynomials) for polynomials in (False, True)
                for g in ([graphs + [probed.graph]] if probed is not None else []) + [graphs]]
    error = None
    for variant_graphs, polynomials in attempts:
        try:
            return captures[0], generalize(variant_graphs, problem.name, polynomials)
        except StructureChanged:
            if variant_graphs is graphs:
                raise   # the referee's own variants differ in structure: no size expression mends that
        except CaptureError as e:
            error = e   # the last attempt's (the referee's variants, polynomials allowed) is the one raised
    raise error


def causal_proofs(graph: Graph) -> tuple[bool, ...]:
    """Per written-out Attention node (safe_softmax False), whether its mask was proved causal."""
    return tuple(n.causal for n in graph.nodes if isinstance(n, Attention) and not n.safe_softmax)


def _without_running_statistics(model: torch.nn.Module) -> None:
    """BatchNorm in training mode returns the batch-statistics normalization; updating its running statistics is
    a side effect no generated module reproduces (emit.py says so in kernel.py). Captured without it, the
    export has no buffer mutations to functionalize: ResNet-101's export took 4.5 s of CPU instead of 8.4 s.
    Only the meta model built for this capture is changed."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.training and m.track_running_stats:
            m.track_running_stats = False
            m.running_mean = m.running_var = m.num_batches_tracked = None


def reads_training(model: torch.nn.Module) -> bool:
    """Whether forward() may depend on the modules' training flag: some module class (or a base below
    nn.Module) reads `self.training` (BatchNorm's batch statistics, dropout, an RNN's dropout, InstanceNorm with
    running statistics, a user's `if self.training:`). Read from the classes' source, so it may say yes for a
    module whose output happens not to change (InstanceNorm without running statistics); a class whose source
    cannot be read counts as not reading it."""
    classes = {c for m in model.modules() for c in type(m).__mro__
               if issubclass(c, torch.nn.Module) and c is not torch.nn.Module}
    for cls in classes:
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):
            continue
        if "self.training" in source:
            return True
    return False

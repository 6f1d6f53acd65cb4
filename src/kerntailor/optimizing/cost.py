"""Tokens per second and dollars per million tokens of each end-to-end variant: the bill, before and after.

    tokens/s  = tokens per call / measured seconds per call
    $/Mtok    = price per GPU-hour / 3600 / tokens per second * 1e6

Tokens per call is a rule, stated in the report, that the user overrides (`--tokens-per-call N`):
the product of the first two dimensions of the first integer input (token ids: batch x sequence; a 1-d one: its
length), else the product of the first floating input's dimensions but the last (batch x sequence of a
(batch, seq, hidden) activation; the batch of a (batch, features) one). A model with no tensor input has none.

Only measured seconds become numbers: without a GPU (or where a variant failed) its row says why and carries no
number, and nothing is predicted in its place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from kerntailor.errors import KerntailorError
from kerntailor.targets.price import ListPrice

VARIANTS = ("eager", "compile", "eager_cuda_graph", "optimized", "optimized_compile", "optimized_cuda_graph")
RULE_IDS = "the first integer input's first two dimensions (token ids: batch x sequence)"
RULE_ACTIVATIONS = "the first floating input's dimensions but the last (batch x sequence)"


@dataclass(frozen=True)
class TokenCost:
    """One variant's rate and cost; `note` says why there are no numbers (then both are None)."""

    variant: str
    seconds: float | None
    tokens_per_s: float | None
    usd_per_million_tokens: float | None
    note: str = ""


@dataclass(frozen=True)
class CostReport:
    tokens_per_call: int | None
    token_rule: str                 # how tokens_per_call was found
    price: ListPrice
    rows: tuple[TokenCost, ...]


def count_tokens(example_inputs: list, given: int | None = None) -> tuple[int | None, str]:
    """(tokens one call of the model processes, the rule that gave it); module docstring."""
    if given is not None:
        if given < 1:
            raise KerntailorError(f"--tokens-per-call must be a positive integer, got {given}")
        return int(given), "given by the user"
    tensors = [v for v in example_inputs if isinstance(v, torch.Tensor) and v.dim() > 0]
    ids = next((v for v in tensors if not v.is_floating_point() and not v.is_complex() and v.dtype != torch.bool),
               None)
    if ids is not None:
        return math.prod(ids.shape[:2]), RULE_IDS
    acts = next((v for v in tensors if v.is_floating_point()), None)
    if acts is not None:
        return math.prod(acts.shape[:-1]) if acts.dim() > 1 else 1, RULE_ACTIVATIONS
    return None, "no tensor input to count tokens in: give --tokens-per-call"


def token_costs(timing: dict, tokens: int | None, rule: str, price: ListPrice) -> CostReport:
    """A row per variant from end_to_end()'s `timing` (module docstring)."""
    seconds = timing.get("seconds") or {}
    errors = timing.get("errors") or {}
    rows = []
    for variant in dict.fromkeys(VARIANTS + tuple(seconds)):
        s = seconds.get(variant)
        if s is None or not s > 0:
            why = f"failed: {errors[variant]}" if variant in errors else timing.get("note") or "not measured"
            rows.append(TokenCost(variant, None, None, None, why))
        elif tokens is None:
            rows.append(TokenCost(variant, s, None, None, rule))
        else:
            rate = tokens / s
            rows.append(TokenCost(variant, s, rate, price.usd_per_hour / 3600.0 / rate * 1e6))
    return CostReport(tokens, rule, price, tuple(rows))

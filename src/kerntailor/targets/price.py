"""What one hour of each target GPU costs: the default of `optimize --price-per-hour`, kept as data with its source.

Cost per million tokens is `price per GPU-hour / 3600 / tokens per second * 1e6`; the price is the one input of
that sum that is not measured, so it is stated with where it came from. No price in this table is a cited list
price: neither ../shared/reference/gpu-facts.md nor the context documents give one, and a citation is never
invented. Each is therefore marked `assumed`, a round placeholder for an on-demand cloud rate of that GPU, so
that the report always shows the arithmetic; the report prints the source beside every cost, and the user
replaces the price with their own (`--price-per-hour`, `price_per_hour=`). A price the user gives is marked so.
"""

from __future__ import annotations

from dataclasses import dataclass

from kerntailor.errors import KerntailorError
from kerntailor.targets.lookup import resolve_target

ASSUMED = ("assumed: no list price in ../shared/reference/gpu-facts.md or the context documents; a round "
           "placeholder for an on-demand cloud rate per GPU-hour, not a quote (give yours with --price-per-hour)")
SET_ON = "2026-12-03"


@dataclass(frozen=True)
class ListPrice:
    """US dollars per GPU-hour, where the figure came from and when it was set."""

    usd_per_hour: float
    source: str
    date: str
    assumed: bool

    def to_dict(self) -> dict:
        return {"usd_per_hour": self.usd_per_hour, "source": self.source, "date": self.date, "assumed": self.assumed}


LIST_PRICES: dict[str, ListPrice] = {
    name: ListPrice(usd, ASSUMED, SET_ON, True)
    for name, usd in (("h200", 3.50), ("h100", 3.00), ("a100", 2.00), ("mi355x", 3.50), ("mi325x", 3.00),
                      ("mi300x", 2.50), ("mi250x", 1.50))
}


def list_price(target: str) -> ListPrice:
    """The table's price of `target` (any name resolve_target takes, "local" included)."""
    name = resolve_target(target).name
    if name not in LIST_PRICES:
        raise KerntailorError(f"no price per hour is known for {name}: give one with --price-per-hour")
    return LIST_PRICES[name]


def price_for(target: str, price_per_hour: float | None) -> ListPrice:
    """The user's price when given (positive), else the table's."""
    if price_per_hour is None:
        return list_price(target)
    if not price_per_hour > 0:
        raise KerntailorError(f"--price-per-hour must be a positive number of dollars, got {price_per_hour}")
    return ListPrice(float(price_per_hour), "given by the user", "", False)

"""Judge prices (USD per million tokens) used for dry-run estimates and ``max_usd``.

How it works: docs/judging.md, "Prices".
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PRICES_AS_OF = "2025-08"

# (input, output) USD per million tokens; list prices, no caching, no batch discount.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "o3": (2.0, 8.0),
    "o4-mini": (1.1, 4.4),
}

# Both Anthropic Message Batches and the OpenAI Batch API bill half the list price.
BATCH_DISCOUNT = 0.5

# A dated snapshot suffix: claude-sonnet-4-20250514, gpt-4o-2024-08-06.
_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def usd(self, input_tokens: float, output_tokens: float, *, batch: bool = False) -> float:
        """Cost of one call (or of token totals)."""
        usd = (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6
        return usd * BATCH_DISCOUNT if batch else usd


def _as_price(name: str, value: Any) -> Price:
    if isinstance(value, Price):
        return value
    if isinstance(value, Mapping):
        pair = (value.get("input"), value.get("output"))
    elif isinstance(value, list | tuple) and len(value) == 2:
        pair = tuple(value)
    else:
        raise ValueError(
            f"price for {name!r} must be {{'input': x, 'output': y}} or [x, y] (USD per "
            f"million tokens), got {value!r}"
        )
    try:
        inp, out = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise ValueError(f"price for {name!r} must hold two numbers, got {value!r}") from None
    if not (inp >= 0 and out >= 0):
        raise ValueError(f"price for {name!r} must be >= 0, got {value!r}")
    return Price(inp, out)


def load_prices(source: str | os.PathLike[str] | Mapping[str, Any] | None) -> dict[str, Price]:
    """Default prices updated with ``source`` (a mapping or a JSON file)."""
    table = {name: Price(*pair) for name, pair in DEFAULT_PRICES.items()}
    if source is None:
        return table
    if not isinstance(source, Mapping):
        path = Path(source)
        try:
            source = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read prices file {path}: {exc}") from None
        if not isinstance(source, Mapping):
            raise ValueError(f"prices file {path} must hold a JSON object")
    table.update({str(name): _as_price(str(name), value) for name, value in source.items()})
    return table


def price_for(provider: str, model: str, table: Mapping[str, Price]) -> Price | None:
    """Price of ``provider:model``: exact name, bare model, then the model minus a date suffix."""
    for name in (f"{provider}:{model}", model, _SNAPSHOT.sub("", model)):
        if name in table:
            return table[name]
    return None

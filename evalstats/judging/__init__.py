"""Judge calls: providers, the resumable journal, the runner and batch submission."""

from __future__ import annotations

from ._calls import JudgeOptions
from ._planning import plan_calls
from ._redact import redact
from .journal import Journal, JournalLockedError, read_journal
from .prices import DEFAULT_PRICES, PRICES_AS_OF, Price, load_prices
from .providers import JudgeAuthError, JudgeSpec, MissingKeyError, parse_judge
from .runner import JudgeRunResult, run_judges

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_AS_OF",
    "Journal",
    "JournalLockedError",
    "JudgeAuthError",
    "JudgeOptions",
    "JudgeRunResult",
    "JudgeSpec",
    "MissingKeyError",
    "Price",
    "load_prices",
    "parse_judge",
    "plan_calls",
    "read_journal",
    "redact",
    "run_judges",
]

"""What every section of the evaluation kind shares: its constants, the checks of the
verdicts a section needs, and how a design a section cannot handle becomes "unavailable,
because ..." (:func:`guarded`) instead of an error."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._tidy import with_diagnostics
from ._kinds import Context, Unavailable

# Seed 000: when in doubt, "(b) roughly equivalent": judges that disagree make a tie.
CONSENSUS_RULE = "unanimous"
# Judge text is shown in example tables only, cut to this many characters (escaped on render).
_TEXT_LIMIT = 400
_N_EXAMPLES = 12
_INPUT_STEMS = ("tasks", "runs", "judgments", "labels")
_EXAMPLE_COLUMNS = ["rubric", "task_id", "replicate", "order", "judge", "outcome", "label"]

# The between-task correlation is not estimated from one small evaluation: the design is shown
# over a range of latent ICCs that brackets what clustered evals report.
_ICC_GRID = (0.0, 0.1, 0.3, 0.5)
_NET_WIN_TARGETS = (0.1, 0.2, 0.3)
_POWER = 0.8
_N_TASKS_GRID = (5, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300)
_CURVE_ICC = 0.3
# Simulations of the methodology page: what its text says it shows.
_POWER_SIMS = 4000
_COVERAGE_EVALS = 1000
_COVERAGE_MAX_RESAMPLES = 1000


def _rubrics_in(frame: pd.DataFrame) -> list[str]:
    known = ("with-without", "blind-pair")
    present = set(frame["rubric"].astype(str))
    return [r for r in known if r in present] + sorted(present - set(known))


def _multi_judge_rubrics(f: pd.DataFrame) -> list[str]:
    return [r for r in _rubrics_in(f) if f.loc[f["rubric"] == r, "judge"].nunique() >= 2]


def _paired_rubrics(f: pd.DataFrame) -> list[str]:
    """Rubrics on which at least two judges gave a verdict on the same pair (and order)."""
    ok = f.loc[f["status"] == "ok"]
    g = ok.assign(rubric=ok["rubric"].astype(str), order=ok["order"].astype(object).fillna(""))
    n = g.groupby(["rubric", "task_id", "replicate", "order"], observed=True)["judge"].nunique()
    shared = set(n[n >= 2].index.get_level_values("rubric"))
    return [r for r in _multi_judge_rubrics(f) if r in shared]


def _need_verdicts(f: pd.DataFrame) -> None:
    """Win rates need readable verdicts; say so (rather than fail) when there are none."""
    if not (f["status"] == "ok").any():
        counts = f["status"].astype(str).value_counts()
        seen = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no judgments"
        raise Unavailable(
            f"no judge gave a readable verdict here ({seen}): nothing to count; "
            "see the accounting section"
        )


# What the statistics say when the design cannot carry them, said in the report's words.
_REASONS = (
    (
        "at least 2 clusters",
        "needs readable verdicts on at least two tasks (the task is the unit of resampling)",
    ),
    ("p_tie must be in [0, 1)", "every verdict is a tie: there is no win or loss to size"),
)


def _reason(exc: BaseException) -> str:
    msg = str(exc).strip() or type(exc).__name__
    for needle, plain in _REASONS:
        if needle in msg:
            return f"{plain}: {msg}"
    return f"cannot be computed on this data: {msg}"


def _guarded(
    compute: Callable[[Context], Mapping[str, Any]], tables: Sequence[str]
) -> Callable[[Context], Mapping[str, Any]]:
    """``compute``, with a design it cannot handle turned into "unavailable, because ..."
    for each of its ``tables`` (the report renders on every dataset the loaders accept)."""

    def run(ctx: Context) -> Mapping[str, Any]:
        try:
            return with_diagnostics(compute(ctx))
        except Unavailable:
            raise
        except (ValueError, KeyError, IndexError, ZeroDivisionError, FloatingPointError) as exc:
            why = _reason(exc)
            return {t: Unavailable(why) for t in tables}

    run.__name__ = run.__qualname__ = getattr(compute, "__name__", "section")
    return run


def _attempt(make: Callable[[], Any]) -> Any:
    """One table of a section: its value, or why it cannot be computed here."""
    try:
        return make()
    except Unavailable as why:
        return why
    except (ValueError, KeyError, IndexError, ZeroDivisionError, FloatingPointError) as exc:
        return Unavailable(_reason(exc))


def _common(ctx: Context) -> dict[str, Any]:
    return {"confidence": ctx.confidence, "n_resamples": ctx.n_resamples}


def _child_rng(seed: int | None, stream: int) -> np.random.Generator:
    """A generator of its own for one section, derived from the report's seed."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


def _plan(ctx: Context) -> Any:
    """The data directory's declared analysis plan (an :class:`evalstats.plan.Plan`), or None."""
    return getattr(ctx.extra.get("dataset"), "plan", None)


def _front(table: pd.DataFrame, col: str) -> pd.DataFrame:
    return table[[col, *(c for c in table.columns if c != col)]]

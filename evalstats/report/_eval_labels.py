"""The report page's section on people's labels: each judge against the people, the
PPI-corrected win rates beside the judges' own, and how many labels a sharper answer needs.

Computed only when the data directory has ``labels.jsonl`` (``Dataset.labels``); without it
the section is unavailable (``results.json``: its tables null, the reason under
``unavailable``) and draws nothing, so no other number of the page moves.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats

from ._eval_common import _child_rng, _common, _rubrics_in
from ._kinds import Context, Unavailable

#: What the headline's rates are, named in its ``estimate_source`` column when there are
#: labels (the PPI-corrected ones are in ``labels_ppi``).
HEADLINE_ESTIMATE = "judge-only"

#: Labels-needed target: the interval this many times narrower than now.
SHARPER = 2.0

# The section's own generator streams (other sections use 1-4).
_STREAM_GOLD, _STREAM_PPI = 11, 12


def labels_needed(
    half_width: float,
    n_labelled: int,
    *,
    target_half_width: float,
    n_pairs: int | None = None,
) -> int:
    """Labels for an interval of half-width ``target_half_width``, from one of ``half_width``.

    An interval from ``n`` labels has a half-width ``z * sigma / sqrt(n)`` (the PPI
    estimator's variance is ``sigma^2 / n`` up to the ``1/N`` term of the judged pairs), so
    ``n' = ceil(n * (half_width / target_half_width) ** 2)``: halving the width takes four
    times the labels. Capped at ``n_pairs`` (no more pairs than were judged can be labelled).
    For a labels-only proportion this is the textbook ``p (1 - p) (z / h) ** 2``
    (statsmodels' ``samplesize_confint_proportion``; the test checks it).

    Examples
    --------
    >>> labels_needed(0.2, 10, target_half_width=0.1)
    40
    >>> labels_needed(0.2, 10, target_half_width=0.1, n_pairs=30)
    30
    """
    if not (half_width > 0 and target_half_width > 0 and n_labelled >= 1):
        raise ValueError("half-widths must be > 0 and n_labelled >= 1")
    # The 1e-9 keeps a float product like 40.000000000000007 from asking for one more.
    n = math.ceil(n_labelled * (half_width / target_half_width) ** 2 - 1e-9)
    return min(n, n_pairs) if n_pairs is not None else n


def _labels(ctx: Context) -> dict[str, Any]:
    from ..records import EvalstatsWarning, has_provenance
    from ..stats.agreement import judge_vs_gold
    from ..stats.ppi import ppi_win_rates

    ds = ctx.extra.get("dataset")
    labels = getattr(ds, "labels", None)
    if labels is None or labels.empty:
        raise Unavailable("no labels.jsonl in the data directory (`evalstats label`)")
    frame = ctx.frame
    agreement, confusion, ppi, needed = [], [], [], []
    notes: list[str] = []
    gold_rng, ppi_rng = _child_rng(ctx.seed, _STREAM_GOLD), _child_rng(ctx.seed, _STREAM_PPI)
    z = float(scipy.stats.norm.ppf(0.5 + ctx.confidence / 2))
    for rubric in _rubrics_in(frame):
        f = frame.loc[frame["rubric"].astype(str) == rubric]
        g = judge_vs_gold(
            f, labels, rubric=rubric, rng=gold_rng, confidence=ctx.confidence,
            n_resamples=ctx.n_resamples,
        )  # fmt: skip
        if g.n_gold_pairs == 0:
            notes.append(f"{rubric}: no labelled pair has a majority label")
            continue
        agreement.append(g.judges.assign(rubric=rubric))
        confusion.append(g.confusion.assign(rubric=rubric))
        for judge in sorted(f["judge"].astype(str).unique()):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", EvalstatsWarning)
                r = ppi_win_rates(
                    f, labels, judge=judge, rubric=rubric, rng=ppi_rng, **_common(ctx)
                )
            notes.extend(f"{rubric} / {judge}: {w.message}" for w in caught)
            d = r.diagnostics
            r = r.assign(rubric=rubric)
            ppi.append(r)
            n_lab = int(d["n_labelled"].iloc[0]) if isinstance(d, pd.DataFrame) else 0
            half = (r["ci_high"] - r["ci_low"]).to_numpy(dtype=float) / 2
            for stat, h, n in zip(r["statistic"], half, r["n"], strict=True):
                ok = bool(np.isfinite(h) and h > 0 and n_lab >= 1)
                needed.append(
                    {
                        "rubric": rubric,
                        "judge": judge,
                        "statistic": stat,
                        "n_labelled": n_lab,
                        "n_pairs": int(n),
                        "half_width": h,
                        "target_half_width": h / SHARPER,
                        "labels_needed": labels_needed(
                            h, n_lab, target_half_width=h / SHARPER, n_pairs=int(n)
                        )
                        if ok
                        else None,
                    }
                )
    if not ppi:
        raise Unavailable("; ".join(notes) or "no labelled pair was judged")
    front = ["rubric", "judge"]
    out = {
        "labels_agreement": _front(pd.concat(agreement, ignore_index=True), front),
        "labels_confusion": _front(pd.concat(confusion, ignore_index=True), front),
        "labels_ppi": _front(pd.concat(ppi, ignore_index=True), front),
        "labels_needed": pd.DataFrame(needed),
    }
    head = ctx.tables.get("headline")
    if isinstance(head, pd.DataFrame):
        # The headline's rates stay the judges' own: the PPI guarantee needs a random sample
        # of at least 15 labelled pairs, and the plan's test is on the judges' verdicts. It
        # says so, and only with labels, so that a directory without any publishes the
        # same headline as before.
        out["headline"] = head.assign(estimate_source=HEADLINE_ESTIMATE)
    out["labels_ppi"].attrs["notes"] = notes
    out["labels_ppi"].attrs["random_sample"] = has_provenance(labels)
    out["labels_ppi"].attrs["z"] = z
    return out


def estimate_note(headline: pd.DataFrame) -> str:
    """The headline card's words on which estimate it shows; empty without labels.

    >>> estimate_note(pd.DataFrame({"estimate_source": ["judge-only"]}))
    " Estimate shown: judge-only (the people's PPI-corrected rates: 'Judges against people')."
    >>> estimate_note(pd.DataFrame({"estimate": [0.5]}))
    ''
    """
    if "estimate_source" not in headline.columns or not len(headline):
        return ""
    shown = ", ".join(sorted(set(headline["estimate_source"].astype(str))))
    return f" Estimate shown: {shown} (the people's PPI-corrected rates: 'Judges against people')."


def _front(table: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    return table[[*cols, *(c for c in table.columns if c not in cols)]]

"""Agent and judge spend: what each arm's runs cost, and what grading cost.

:func:`pair_costs` reduces a verdict frame to one row per pair with its agent costs (the
input of :func:`~evalstats.stats.cost_ratios`); :func:`agent_spend` totals them per arm and
:func:`judge_spend` totals the judge calls, which never enter the agent ratios.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalstats._schema import ARMS
from evalstats._validate import check_columns
from evalstats.errors import DataError

__all__ = ["MEASURES", "PAIR", "agent_spend", "judge_spend", "pair_costs"]

PAIR = ("task_id", "replicate")
#: measure -> (WITH column, WITHOUT column)
MEASURES = {
    "tokens": ("tokens_with", "tokens_without"),
    "wall": ("wall_with_s", "wall_without_s"),
}


def agent_spend(frame: pd.DataFrame, *, include_no_answer: bool = True) -> pd.DataFrame:
    """Agent spend per arm: total and mean tokens and wall-clock over pairs.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame; reduced to one row per pair (``task_id``, ``replicate``).
    include_no_answer : bool
        Keep ``no_answer`` pairs (default True).

    Returns
    -------
    DataFrame
        One row per arm (``with``, ``without``): ``arm, n_pairs, tokens, tokens_per_pair,
        wall_s, wall_s_per_pair, n_missing_tokens, n_missing_wall``. Totals skip missing
        values; the means are over pairs with a value.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.spend import agent_spend
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b"], "replicate": [1, 1, 1], "status": "ok",
    ...     "judge": ["j1", "j2", "j1"],
    ...     "tokens_with": [800, 800, 1500], "tokens_without": [1000, 1000, 2000],
    ...     "wall_with_s": [10.0, 10.0, 30.0], "wall_without_s": [12.0, 12.0, 40.0]})
    >>> agent_spend(frame)[["arm", "n_pairs", "tokens"]]
           arm  n_pairs  tokens
    0     with        2  2300.0
    1  without        2  3000.0
    """
    pairs = pair_costs(frame, cluster="task_id", include_no_answer=include_no_answer)
    rows = []
    for i, arm in enumerate(ARMS):
        tok = pairs[MEASURES["tokens"][i]].to_numpy(dtype=float)
        wall = pairs[MEASURES["wall"][i]].to_numpy(dtype=float)
        rows.append(
            {
                "arm": arm,
                "n_pairs": len(pairs),
                "tokens": np.nansum(tok),
                "tokens_per_pair": _nanmean(tok),
                "wall_s": np.nansum(wall),
                "wall_s_per_pair": _nanmean(wall),
                "n_missing_tokens": int(np.isnan(tok).sum()),
                "n_missing_wall": int(np.isnan(wall).sum()),
            }
        )
    return pd.DataFrame(rows)


def judge_spend(frame: pd.DataFrame, *, by: str | Sequence[str] = "judge") -> pd.DataFrame:
    """What the judges cost: calls, tokens and USD per judge, apart from agent spend.

    Every row of the verdict frame is one judge call, except ``no_answer`` rows with no usage
    recorded (an over-budget pair is normally never sent to a judge; the frame still lists it
    once per judge). A ``no_answer`` row that does carry tokens or USD (the judge was asked
    before the budget was applied) was paid for and is counted. Sums skip unknown values; the
    ``n_unpriced`` and ``n_unknown_tokens`` columns say how many calls they skipped, so a total
    is a lower bound whenever those are non-zero.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status``, ``judge_input_tokens``, ``judge_output_tokens``,
        ``judge_usd`` and the ``by`` columns.
    by : str or list of str
        Grouping columns (default ``"judge"``; e.g. ``["judge", "rubric"]``).

    Returns
    -------
    DataFrame
        One row per group: the ``by`` columns, ``calls, n_errors, input_tokens, output_tokens,
        usd, n_unpriced, n_unknown_tokens``.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.spend import judge_spend
    >>> frame = pd.DataFrame({
    ...     "judge": ["a:x", "a:x", "b:y"], "status": ["ok", "error", "ok"],
    ...     "judge_input_tokens": [1000, 900, 1200], "judge_output_tokens": [200, None, 150],
    ...     "judge_usd": [0.01, None, 0.02]})
    >>> judge_spend(frame)[["judge", "calls", "input_tokens", "usd", "n_unpriced"]]
      judge  calls  input_tokens   usd  n_unpriced
    0   a:x      2        1900.0  0.01           1
    1   b:y      1        1200.0  0.02           0
    """
    by_cols = [by] if isinstance(by, str) else list(by)
    cols = ["status", "judge_input_tokens", "judge_output_tokens", "judge_usd"]
    check_columns(frame, [*by_cols, *cols])
    status = frame["status"].astype(object).to_numpy()
    inp = _numeric(frame["judge_input_tokens"], "judge_input_tokens")
    out = _numeric(frame["judge_output_tokens"], "judge_output_tokens")
    usd = _numeric(frame["judge_usd"], "judge_usd")
    no_usage = np.isnan(inp) & np.isnan(out) & np.isnan(usd)
    is_call = ~((status == "no_answer") & no_usage)
    calls = frame.loc[is_call]
    inp, out, usd = inp[is_call], out[is_call], usd[is_call]
    work = pd.DataFrame(
        {
            **{c: calls[c].to_numpy() for c in by_cols},
            "calls": 1,
            "n_errors": (calls["status"].astype(object) == "error").to_numpy().astype(int),
            "input_tokens": inp,
            "output_tokens": out,
            "usd": usd,
            "n_unpriced": np.isnan(usd).astype(int),
            "n_unknown_tokens": (np.isnan(inp) | np.isnan(out)).astype(int),
        }
    )
    # sum() skips NaN; min_count=0 keeps an all-unknown group at 0 with its count reported.
    res = work.groupby(by_cols, sort=True, observed=True, dropna=False).sum(min_count=0)
    return res.reset_index()


def pair_costs(
    frame: pd.DataFrame, *, cluster: str = "task_id", include_no_answer: bool = True
) -> pd.DataFrame:
    """One row per pair with its agent cost, its cluster and whether it is ``no_answer``.

    Raises :class:`~evalstats.errors.DataError` when rows of the same pair disagree on a cost
    or on the cluster, or a cost is negative.
    """
    value_cols = [c for pair in MEASURES.values() for c in pair]
    keys = list(PAIR)
    extra = [] if cluster in keys else [cluster]
    check_columns(frame, [*keys, *extra, "status", *value_cols])
    if frame.empty:
        raise DataError("verdict frame has no rows")
    for k in [*keys, cluster]:
        miss = frame[k].isna().to_numpy()
        if miss.any():
            raise DataError("missing pair or cluster id", line=int(np.argmax(miss)), field=k)
    work = pd.DataFrame({k: frame[k].to_numpy() for k in dict.fromkeys([*keys, cluster])})
    for c in value_cols:
        v = _numeric(frame[c], c)
        if np.any(v < 0):
            raise DataError("negative cost", line=int(np.argmax(v < 0)), field=c)
        work[c] = v
    work["_no_answer"] = (frame["status"].astype(object) == "no_answer").to_numpy()
    work["_row"] = np.arange(len(frame))

    grouped = work.groupby(keys, sort=True, observed=True)
    first = grouped.first()  # first non-null per column
    # Judgments of one pair must carry the same run costs; NaN-aware (max == min, counts agree).
    for c in [*value_cols, *extra]:
        g = grouped[c]
        if c in extra:
            bad = g.nunique(dropna=True) > 1
        else:
            bad = (g.max() != g.min()) & g.max().notna()
            bad |= (g.count() > 0) & (g.count() < g.size())
        if bad.any():
            key = bad.index[bad.to_numpy()][0]
            row = int(work.set_index(keys).loc[[key], "_row"].iloc[0])
            raise DataError(f"rows of pair {key} disagree on {c}", line=row, field=c)
    pairs = first.reset_index()
    pairs["_no_answer"] = grouped["_no_answer"].any().to_numpy()
    if not include_no_answer:
        pairs = pairs.loc[~pairs["_no_answer"]].reset_index(drop=True)
    pairs["_cluster_code"] = pd.factorize(pairs[cluster], sort=True)[0]
    return pairs


def _nanmean(v: np.ndarray) -> float:
    ok = ~np.isnan(v)
    return float(v[ok].mean()) if ok.any() else np.nan


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _numeric(series: pd.Series, field: str) -> np.ndarray:
    """Float array with NaN for missing values (nullable Int64, None, NA all accepted)."""
    try:
        return pd.to_numeric(series, errors="raise").astype("float64").to_numpy(na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise DataError(f"non-numeric value: {exc}", field=field) from None

"""The one result shape: grouping columns, :data:`TIDY_COLUMNS`, a few extras; one row per
statistic and group, per-group diagnostics on :attr:`ResultFrame.diagnostics`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "MAX_COLUMNS", "TIDY_COLUMNS", "WIDE_SUFFIXES", "ResultFrame", "concat_results", "is_long",
    "refuse_pooled_rubrics", "result_by", "stack_statistics", "tidy_frame", "wide", "with_detail",
    "with_diagnostics",
]  # fmt: skip

#: The columns every result frame has, in this order, after its grouping columns.
TIDY_COLUMNS = (
    "statistic", "estimate", "se", "ci_low", "ci_high", "p_value", "df", "n", "n_tasks", "method",
    "confidence",
)  # fmt: skip
#: Inside a notebook's 20 columns, with room for the arm_a, arm_b keys of a K-arm result.
MAX_COLUMNS = 18


class ResultFrame(pd.DataFrame):
    """A long tidy result with ``diagnostics`` (one row per group) and ``by`` (the grouping).

    >>> rows = pd.DataFrame({"judge": ["a"], "statistic": ["win_rate"], "estimate": [0.52],
    ...                      "ci_low": [0.41], "ci_high": [0.63]})
    >>> print(tidy_frame(rows, by=["judge"]).summary().to_string())
    judge  statistic
    a      win_rate     0.52 [0.41, 0.63]
    """

    _metadata = ["diagnostics", "by"]

    @property
    def _constructor(self) -> type[ResultFrame]:
        return ResultFrame

    def summary(self, digits: int = 2) -> pd.Series:
        """One line per row, ``0.52 [0.41, 0.63]`` (``, p = 0.031``), by group and statistic."""
        by = [c for c in (getattr(self, "by", None) or ()) if c in self.columns]
        keys = [*by, "statistic"] if "statistic" in self.columns else by
        nan = pd.Series(np.nan, index=self.index)
        cols = [self.get(c, nan) for c in ("estimate", "ci_low", "ci_high", "p_value")]
        lines = [_line(*v, digits) for v in zip(*cols, strict=True)]
        index = pd.MultiIndex.from_frame(self[keys]) if keys else self.index
        if len(keys) == 1:
            index = pd.Index(self[keys[0]])
        return pd.Series(lines, index=index, name="summary", dtype=object)

    def wide(self) -> pd.DataFrame:
        """One row per group, a column per statistic and field (``net_win_ci_low``), diagnostics
        beside: the view a report's table shows."""
        return wide(self)


def _number(v: Any, digits: int) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return str(v)
    return "NaN" if np.isnan(x) else f"{x:.{digits}f}"


def _line(est: Any, lo: Any, hi: Any, p: Any, digits: int) -> str:
    text = _number(est, digits)
    if not (pd.isna(lo) and pd.isna(hi)):
        text += f" [{_number(lo, digits)}, {_number(hi, digits)}]"
    if not pd.isna(p):
        text += f", p = {float(p):.3g}"
    return text


def tidy_frame(
    rows: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    diagnostics: pd.DataFrame | None = None,
    extra: Sequence[str] = (),
) -> ResultFrame:
    """``rows`` in the one result shape: ``by``, then :data:`TIDY_COLUMNS` (missing ones filled with
    NaN), then ``extra`` columns present in ``rows``; anything else is refused."""
    by = list(by)
    keep = [*by, *TIDY_COLUMNS, *[c for c in extra if c in rows.columns]]
    unknown = [c for c in rows.columns if c not in keep]
    if unknown:
        raise ValueError(f"result columns outside the tidy shape: {unknown}")
    if len(keep) > MAX_COLUMNS:
        raise ValueError(f"a result frame has at most {MAX_COLUMNS} columns, not {len(keep)}")
    out = ResultFrame(rows.reindex(columns=keep).reset_index(drop=True))
    out.diagnostics = None if diagnostics is None else diagnostics.reset_index(drop=True)
    out.by = tuple(by)
    return out


def stack_statistics(
    groups: pd.DataFrame,
    statistics: Sequence[tuple[str, dict[str, Any]]],
    *,
    diagnostics: pd.DataFrame | None = None,
    extra: Sequence[str] = (),
) -> ResultFrame:
    """One row per group and statistic, from ``groups`` (the grouping columns) and
    ``statistics`` ``[(name, {column: array or scalar}), ...]``: the builder of every result.

    >>> g = pd.DataFrame({"judge": ["a", "b"]})
    >>> r = stack_statistics(g, [("win_rate", {"estimate": [0.5, 0.6], "n": [10, 12]}),
    ...                          ("net_win", {"estimate": [0.1, 0.2], "n": [10, 12]})])
    >>> r[["judge", "statistic", "estimate", "n"]]
      judge statistic  estimate   n
    0     a  win_rate       0.5  10
    1     a   net_win       0.1  10
    2     b  win_rate       0.6  12
    3     b   net_win       0.2  12
    """
    n_groups, n_stats = len(groups), len(statistics)
    rows = groups.iloc[np.repeat(np.arange(n_groups), n_stats)].reset_index(drop=True)
    rows["statistic"] = np.tile(np.array([s for s, _ in statistics], dtype=object), n_groups)
    columns = dict.fromkeys(c for _, cols in statistics for c in cols)
    for col in columns:
        values = [
            np.broadcast_to(np.asarray(cols.get(col, np.nan), dtype=object), (n_groups,))
            for _, cols in statistics
        ]
        stacked = np.stack(values, axis=1).reshape(-1)
        rows[col] = pd.Series(stacked).infer_objects()
    return tidy_frame(rows, by=list(groups.columns), diagnostics=diagnostics, extra=extra)


def result_by(result: pd.DataFrame) -> list[str]:
    """The grouping columns of a long result (those before ``statistic``)."""
    by = getattr(result, "by", None)
    if by:
        return [c for c in by if c in result.columns]
    cols = list(result.columns)
    return cols[: cols.index("statistic")] if "statistic" in cols else []


def is_long(table: Any) -> bool:
    """True for a table with :data:`TIDY_COLUMNS` in order after its grouping columns."""
    if not isinstance(table, pd.DataFrame) or "statistic" not in table.columns:
        return False
    cols = list(table.columns)
    at = cols.index("statistic")
    return tuple(cols[at : at + len(TIDY_COLUMNS)]) == TIDY_COLUMNS


#: How the columns of a statistic's row are named in the wide view, ``<statistic><suffix>``.
WIDE_SUFFIXES = {
    "estimate": "",
    "se": "_se",
    "ci_low": "_ci_low",
    "ci_high": "_ci_high",
    "p_value": "_p",
    "df": "_df",
}


def wide(result: pd.DataFrame, diagnostics: pd.DataFrame | None = None) -> pd.DataFrame:
    """A long result pivoted to one row per group (columns ``<statistic><suffix>``), for display.

    >>> g = pd.DataFrame({"judge": ["a"]})
    >>> r = stack_statistics(g, [("win_rate", {"estimate": 0.5, "ci_low": 0.3, "n": 9}),
    ...                          ("net_win", {"estimate": 0.1, "p_value": 0.4, "n": 9})],
    ...                      diagnostics=g.assign(wins=4))
    >>> wide(r)[["judge", "wins", "n", "win_rate", "win_rate_ci_low", "net_win_p"]]
      judge  wins  n  win_rate  win_rate_ci_low  net_win_p
    0     a     4  9       0.5              0.3        0.4
    """
    if not is_long(result):
        return result
    by = result_by(result)
    if diagnostics is None:
        diagnostics = getattr(result, "diagnostics", None)
    frame = pd.DataFrame(result)
    groups = frame.groupby(by or np.zeros(len(frame)), sort=False, dropna=False)
    gid = groups.ngroup().to_numpy()
    first = ~pd.Series(gid).duplicated().to_numpy()
    out = frame.loc[first, by].reset_index(drop=True)
    stats = list(dict.fromkeys(frame["statistic"]))
    per_stat = [c for c in frame.columns if c not in (*by, "statistic")]
    same = groups[per_stat].nunique(dropna=False).le(1).all()
    shared = [c for c in per_stat if same[c] and c not in WIDE_SUFFIXES]
    spread = [c for c in per_stat if c not in shared]
    for c in shared:
        out[c] = frame.loc[first, c].to_numpy()
    n_groups = len(out)
    # Per statistic, which columns are empty (one pass, not a look per statistic and column).
    by_stat = frame["statistic"].to_numpy()
    empty = frame.isna().groupby(by_stat, sort=False).all()
    arrays = {c: frame[c].to_numpy() for c in spread}
    new: dict[str, Any] = {}
    for s in stats:
        hit = by_stat == s
        pos = np.full(n_groups, -1)
        pos[gid[hit]] = np.flatnonzero(hit)
        # No confidence level anywhere: no empty interval, SE, p-value or df columns.
        bare = "confidence" in frame and empty.at[s, "confidence"]
        for c in spread:
            # An extra only some statistics have, or an interval column of no interval.
            interval = c in WIDE_SUFFIXES and c != "estimate"
            if empty.at[s, c] and (c not in TIDY_COLUMNS or bare and interval):
                continue
            name = s + WIDE_SUFFIXES.get(c, f"_{c}")
            values = arrays[c]
            if (pos >= 0).all():  # every group has the statistic: its values, its dtype
                new[name] = values[pos]
                continue
            col = pd.Series(np.where(pos >= 0, values[np.maximum(pos, 0)], np.nan)).infer_objects()
            if c in ("n", "n_tasks"):
                col = col.astype("Int64")  # a count, absent for a group without the statistic
            new[name] = col
    for name in [n for n in new if n in out.columns]:  # replaced in place, as assigned
        out[name] = new.pop(name)
    out = pd.concat([out, pd.DataFrame(new, index=out.index)], axis=1)
    if diagnostics is not None and len(diagnostics.columns):
        diag = pd.DataFrame(diagnostics).reset_index(drop=True)
        add = [c for c in diag.columns if c not in out.columns]
        if by and all(c in diag.columns for c in by):
            out = out.merge(diag[[*by, *add]], on=by, how="left", sort=False)
        elif len(diag) == len(out):
            out = pd.concat([out, diag[add]], axis=1)
        order = [*by, *add, *[c for c in out.columns if c not in by and c not in add]]
        out = out[order]
    out.attrs.update(result.attrs)
    return out


def refuse_pooled_rubrics(frame: pd.DataFrame, by: Sequence[str], what: str) -> None:
    """Raise ``DataError`` when ``by`` would pool several rubrics (different measurements).

    >>> f = pd.DataFrame({"rubric": ["a", "b"], "judge": "j"})
    >>> refuse_pooled_rubrics(f, ["rubric", "judge"], "win_rates")
    """
    if "rubric" not in frame.columns or "rubric" in by:
        return
    names = pd.unique(frame["rubric"].dropna().astype(str))
    if len(names) > 1:
        from .errors import DataError

        shown = ", ".join(sorted(names)[:4]) + (", ..." if len(names) > 4 else "")
        raise DataError(
            f"{what}: the frame mixes {len(names)} rubrics ({shown}); group by rubric "
            '(by=["rubric", ...]) or select one, rates are never pooled across rubrics',
            field="rubric",
        )


def with_detail(result: ResultFrame) -> pd.DataFrame:
    """``result`` with its diagnostics joined onto every row (a plain frame)."""
    diag = getattr(result, "diagnostics", None)
    by = result_by(result)
    plain = pd.DataFrame(result)
    if diag is None:
        return plain
    add = [c for c in diag.columns if c not in plain.columns]
    if by:
        return plain.merge(diag[[*by, *add]], on=by, how="left", sort=False)
    return plain.assign(**{c: diag[c].iloc[0] for c in add})


def concat_results(
    results: Sequence[ResultFrame] | Mapping[str, ResultFrame], key: str | None = None
) -> ResultFrame:
    """Results with the same grouping columns, one after the other (diagnostics alike); a
    mapping's results under a new leading grouping column ``key`` holding their names.

    >>> g = pd.DataFrame({"judge": ["a"]})
    >>> r = {v: stack_statistics(g, [("win_rate", {"estimate": e})], diagnostics=g.assign(n=3))
    ...      for v, e in (("exclude", 0.5), ("loss", 0.4))}
    >>> s = concat_results(r, "no_answer_as")
    >>> s.by, len(s.diagnostics)
    (('no_answer_as', 'judge'), 2)
    """

    def tagged(frame: pd.DataFrame, name: str) -> pd.DataFrame:
        frame = pd.DataFrame(frame)
        if key is None:
            return frame
        return frame.assign(**{key: name})[[key, *(c for c in frame.columns if c != key)]]

    items = list(results.items()) if isinstance(results, Mapping) else [("", r) for r in results]
    by = [*([key] if key is not None else []), *result_by(items[0][1])]
    rows = pd.concat([tagged(r, n) for n, r in items], ignore_index=True)
    diags = [
        tagged(r.diagnostics, n) for n, r in items if getattr(r, "diagnostics", None) is not None
    ]
    diagnostics = pd.concat(diags, ignore_index=True) if diags else None
    extra = [c for c in rows.columns if c not in (*by, *TIDY_COLUMNS)]
    return tidy_frame(rows, by=by, diagnostics=diagnostics, extra=extra)


def with_diagnostics(tables: Mapping[str, Any]) -> dict[str, Any]:
    """``tables`` plus ``<name>_diagnostics`` for each long result that has diagnostics.

    >>> g = pd.DataFrame({"judge": ["a"]})
    >>> r = stack_statistics(g, [("win_rate", {"estimate": 0.5})], diagnostics=g.assign(n=3))
    >>> sorted(with_diagnostics({"headline": r, "audit": pd.DataFrame()}))
    ['audit', 'headline', 'headline_diagnostics']
    """
    out = dict(tables)
    for name, value in tables.items():
        diag = getattr(value, "diagnostics", None)
        if isinstance(value, ResultFrame) and isinstance(diag, pd.DataFrame):
            out[f"{name}_diagnostics"] = diag
    return out

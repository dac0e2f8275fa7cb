"""Any table of pairwise verdicts as a verdict frame (WITH's point of view) and a labels table.

The AlpacaEval, LLMBar and PandaLM adapters are configurations of it (docs/methods.md).
"""

from __future__ import annotations

import gzip
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._schema import (
    BLIND_DIMENSIONS,
    ORDER_DTYPE,
    ORDERS,
    OUTCOME_DTYPE,
    OUTCOMES,
    OVER_BUDGET_DTYPE,
    STATUS_DTYPE,
    VERDICT_COLUMNS,
)
from ..errors import DataError
from ..records import EvalstatsWarning, is_missing

__all__ = ["PairwiseColumns", "PairwiseData", "from_table", "labels_table"]

# How a verdict reads: a mapping value -> outcome (missing keys are invalid) or a function
# returning (outcome or None, parse error or None).
OutcomeRule = Mapping[Any, str | None] | Callable[[Any], tuple[str | None, str | None]]
_TEXT_COLUMNS = ("prompt_sha256", "reasoning", "raw")
_FLOAT_COLUMNS = ("judge_cost_ratio", "cost_ratio", "wall_with_s", "wall_without_s", "judge_usd")
_INT_COLUMNS = (
    *(f"{arm}_{dim}" for arm in ("with", "without") for dim in BLIND_DIMENSIONS),
    *"tokens_with tokens_without judge_input_tokens judge_output_tokens prompt_revision".split(),
)


@dataclass(frozen=True)
class PairwiseColumns:
    """Which columns of a table of pairwise verdicts hold what.

    ``item`` is the task (the unit of independence); ``sides`` name the WITH and WITHOUT
    systems (copied as ``side_names``); without ``replicate``, repeats are numbered with a
    warning; ``fields`` maps verdict-frame columns to input columns; ``extra`` adds output
    columns (input column, or (input column, dtype)).
    """

    item: str
    judge: str
    verdict: str
    sides: tuple[str, str] | None = None
    side_names: tuple[str, str] = ("with_system", "without_system")
    order: str | None = None
    replicate: str | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, str | tuple[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class PairwiseData:
    """A verdict frame and the labels of the same pairs (None without a gold column)."""

    frame: pd.DataFrame
    labels: pd.DataFrame | None


def read_text(p: Path) -> str:
    """The text of ``p`` (gzipped when named ``.gz``), or a DataError."""
    if not p.exists():
        raise DataError("file not found", path=p)
    try:
        if p.name.lower().endswith(".gz"):
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                return fh.read()
        return p.read_text(encoding="utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DataError(f"unreadable file: {exc}", path=p) from None


def read_json(p: Path, *, array: bool = False) -> Any:
    """The JSON document in ``p`` (gzipped when named ``.gz``); a DataError names the line."""
    try:
        data = json.loads(read_text(p))
    except json.JSONDecodeError as exc:
        raise DataError(
            f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=exc.lineno
        ) from None
    if array and not isinstance(data, list):
        raise DataError("expected a JSON array of records", path=p)
    return data


def _require(table: pd.DataFrame, cols: Sequence[str | None], source: str | None) -> None:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    missing = [c for c in cols if c is not None and c not in table.columns]
    if missing:
        raise DataError(f"table lacks column(s) {missing}", path=source, field=missing[0])


def _read_outcomes(values: pd.Series, rule: OutcomeRule) -> tuple[list, list]:
    outcomes: list[str | None] = []
    errors: list[str | None] = []
    for v in values.tolist():
        if callable(rule):
            o, e = rule(v)
        else:
            o = None if is_missing(v) else rule.get(v)
            e = "missing verdict" if is_missing(v) else f"unmapped verdict {v!r}"
        outcomes.append(o)
        errors.append(e if o is None else None)
    bad = [o for o in outcomes if o is not None and o not in OUTCOMES]
    if bad:
        raise ValueError(f"the outcome rule gave {bad[0]!r}; it must give win, tie, loss or None")
    return outcomes, errors


def _check_text(table: pd.DataFrame, col: str, source: str | None) -> pd.Series:
    values = table[col]
    bad = values.map(lambda v: is_missing(v) or str(v) == "").to_numpy(dtype=bool)
    if bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1
        raise DataError(f"row {row}: missing value", path=source, field=col)
    return values.astype(str).reset_index(drop=True)


def from_table(
    table: pd.DataFrame,
    columns: PairwiseColumns,
    *,
    outcome: OutcomeRule,
    order_map: Mapping[Any, str] | None = None,
    rubric: str = "pairwise",
    sort_by: Sequence[str] | None = None,
    source: str | None = None,
) -> pd.DataFrame:
    """Map a table of pairwise verdicts (one row per judgment) onto a verdict frame.

    Parameters
    ----------
    table : DataFrame
        One row per judgment; ``columns`` says which column holds what.
    outcome : mapping or callable
        ``{value: "win" | "tie" | "loss"}`` for WITH (other values: ``status="invalid"``), or
        ``f(value) -> (outcome | None, reason)``.
    order_map : mapping, optional
        Shown-order value -> ``with_first`` / ``without_first`` (default: identity).
    rubric, sort_by, source : optional
        Every row's rubric; sort keys (default task_id, replicate, judge, order); the name
        in ``judgment_id`` (``<source>:<row>``) and errors.

    Returns
    -------
    DataFrame
        The verdict-frame columns, then the side columns and ``extra``.

    Examples
    --------
    >>> table = pd.DataFrame({"q": ["q1", "q2", "q3"], "who": "gpt", "pick": ["A", "tie", "?"]})
    >>> f = from_table(table, PairwiseColumns(item="q", judge="who", verdict="pick"),
    ...                outcome={"A": "win", "B": "loss", "tie": "tie"}, source="demo")
    >>> f[["task_id", "judge", "status", "outcome", "judgment_id"]]
      task_id judge   status outcome judgment_id
    0      q1   gpt       ok     win      demo:1
    1      q2   gpt       ok     tie      demo:2
    2      q3   gpt  invalid     NaN      demo:3
    >>> f["parse_error"].iloc[2]
    "unmapped verdict '?'"
    """
    c = columns
    extra_src = {k: (v if isinstance(v, str) else v[0]) for k, v in c.extra.items()}
    needed = [c.item, c.judge, c.verdict, c.order, c.replicate, *(c.sides or ())]
    _require(table, [*needed, *c.fields.values(), *extra_src.values()], source)
    unknown = [k for k in c.fields if k not in VERDICT_COLUMNS]
    if unknown:
        raise ValueError(f"columns names {unknown}, which are not verdict-frame columns")
    t = table.reset_index(drop=True)
    n = len(t)
    task = _check_text(t, c.item, source)
    judge = _check_text(t, c.judge, source)
    outcomes, errors = _read_outcomes(t[c.verdict], outcome)

    order: list[Any] = [None] * n
    if c.order is not None:
        raw_order = t[c.order].tolist()
        order = [
            None if is_missing(v) else v if order_map is None else order_map.get(v, "?")
            for v in raw_order
        ]
        bad = [i for i, v in enumerate(order) if v is not None and v not in ORDERS]
        if bad:
            raise DataError(
                f"row {bad[0] + 1}: order {raw_order[bad[0]]!r} does not map to one of "
                f"{', '.join(ORDERS)}",
                path=source,
                field=c.order,
            )
    order_values = pd.Categorical(order, dtype=ORDER_DTYPE)
    sides = dict(zip(c.side_names, c.sides, strict=True)) if c.sides is not None else {}
    side_cols = {name: _check_text(t, col, source).astype("str") for name, col in sides.items()}
    if c.replicate is not None:
        try:
            rep = pd.to_numeric(t[c.replicate], errors="raise").astype(np.int64).to_numpy()
        except (ValueError, TypeError):
            raise DataError(
                "replicate must be an integer", path=source, field=c.replicate
            ) from None
        if (rep < 1).any():
            i = int(np.flatnonzero(rep < 1)[0])
            raise DataError(f"row {i + 1}: replicate must be >= 1", path=source, field=c.replicate)
    else:
        shown = pd.Series(order_values).astype(object).fillna("")
        key = pd.DataFrame({**side_cols, "_j": judge, "_t": task, "_o": shown})
        rep = key.groupby(list(key.columns), sort=False).cumcount().to_numpy() + 1
        if (rep > 1).any():
            i = int(np.flatnonzero(rep > 1)[0])
            warnings.warn(
                f"{source or 'table'}: item {task[i]!r} judged again by {judge[i]!r} at row "
                f"{i + 1}; {int((rep > 1).sum())} repeated row(s) kept as replicates 2, 3, ...",
                EvalstatsWarning,
                stacklevel=2,
            )

    def mapped(col: str, default: list[Any]) -> list[Any]:
        return t[c.fields[col]].tolist() if col in c.fields else default

    def floats(col: str) -> np.ndarray:
        return pd.to_numeric(pd.Series(mapped(col, [np.nan] * n)), errors="coerce").to_numpy(float)

    none = [None] * n
    verdict_text = [None if is_missing(v) else str(v) for v in t[c.verdict]]
    row_ids = [f"{source or 'table'}:{i}" for i in range(1, n + 1)]
    status = ["ok" if o is not None else "invalid" for o in outcomes]
    data: dict[str, Any] = {
        "task_id": task.astype("str"),
        "replicate": rep.astype(np.int64),
        # One pair of arms (the verdict frame's arm_a / arm_b): the candidate and the other.
        "arm_a": pd.Series(["with"] * n, dtype="str"),
        "arm_b": pd.Series(["without"] * n, dtype="str"),
        "judge": judge.astype("category"),
        "rubric": pd.Categorical([rubric] * n),
        "order": order_values,
        "status": pd.Categorical(status, dtype=STATUS_DTYPE),
        # Other tools' verdicts carry no agent budgets: no pair is over budget.
        "over_budget_arm": pd.Categorical(none, dtype=OVER_BUDGET_DTYPE),
        "outcome": pd.Categorical(outcomes, dtype=OUTCOME_DTYPE),
        "label": pd.Series(mapped("label", verdict_text), dtype="str"),
        "uncertainty": pd.Categorical(none, categories=["low", "medium", "high"], ordered=True),
        **{col: pd.array(mapped(col, [pd.NA] * n), dtype="Int64") for col in _INT_COLUMNS},
        **{col: floats(col) for col in _FLOAT_COLUMNS},
        **{col: pd.Series(mapped(col, none), dtype="str") for col in _TEXT_COLUMNS},
        "parse_error": pd.Series(mapped("parse_error", errors), dtype="str"),
        "judgment_id": pd.Series(mapped("judgment_id", row_ids), dtype=object).astype(str),
    }
    out = pd.DataFrame(data, index=pd.RangeIndex(n))[list(VERDICT_COLUMNS)]
    for name, series in side_cols.items():
        out[name] = series
    for name, spec in c.extra.items():
        src, dtype = (spec, None) if isinstance(spec, str) else spec
        out[name] = t[src].astype(dtype) if dtype is not None else t[src].to_numpy()
    keys = list(sort_by) if sort_by is not None else ["task_id", "replicate", "judge", "order"]
    return out.sort_values(keys, kind="stable", na_position="first").reset_index(drop=True)


def labels_table(
    table: pd.DataFrame,
    *,
    item: str,
    gold: str,
    outcome: OutcomeRule,
    labeler: str = "gold",
    labeler_column: str | None = None,
    created_at: str | pd.Timestamp = "1970-01-01T00:00:00Z",
    note: str | None = None,
    source: str | None = None,
) -> pd.DataFrame:
    """People's verdicts of a table as a ``labels`` table, one row per (item, labeler).

    Parameters
    ----------
    table : DataFrame
        One row per item (a repeat with the same labeler: the first is kept).
    item, gold, labeler_column : str
        Columns of the item, the verdict and the labeler (else ``labeler``); replicate 1.
    outcome : mapping or callable
        As in :func:`from_table`; an unreadable gold value is a ``DataError``.
    created_at, note, source : optional
        When the labels were made (default: the epoch = unknown); a note; the name in errors.

    Returns
    -------
    DataFrame
        ``task_id, replicate, labeler, outcome, created_at, order, note``.

    Examples
    --------
    >>> table = pd.DataFrame({"q": ["q1", "q2"], "best": [1, 2]})
    >>> labels_table(table, item="q", gold="best", outcome={1: "win", 2: "loss"})[
    ...     ["task_id", "replicate", "labeler", "outcome"]]
      task_id  replicate labeler outcome
    0      q1          1    gold     win
    1      q2          1    gold    loss
    """
    _require(table, [item, gold, labeler_column], source)
    t = table.reset_index(drop=True)
    n = len(t)
    task = _check_text(t, item, source)
    outcomes, errors = _read_outcomes(t[gold], outcome)
    bad = [i for i, o in enumerate(outcomes) if o is None]
    if bad:
        raise DataError(f"row {bad[0] + 1}: {errors[bad[0]]}", path=source, field=gold)
    who = _check_text(t, labeler_column, source) if labeler_column else pd.Series([labeler] * n)
    when = pd.Timestamp(created_at)
    when = when.tz_localize("UTC") if when.tzinfo is None else when.tz_convert("UTC")
    out = pd.DataFrame(
        {
            "task_id": task.astype("str"),
            "replicate": np.ones(n, dtype=np.int64),
            "labeler": who.astype("str"),
            "outcome": pd.Categorical(outcomes, dtype=OUTCOME_DTYPE),
            "created_at": pd.Series([when] * n, dtype="datetime64[ns, UTC]"),
            "order": pd.Categorical([None] * n, dtype=ORDER_DTYPE),
            "note": pd.Series([note] * n, dtype="str"),
        }
    )
    keys = ["task_id", "replicate", "labeler"]
    out = out.drop_duplicates(keys, keep="first")
    return out.sort_values(keys, kind="stable").reset_index(drop=True)

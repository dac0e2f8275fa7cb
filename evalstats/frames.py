"""Judgments + runs -> the long verdict frame, and the per-judge wide frame."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import rubrics as _rubrics
from ._schema import (
    ARM_DTYPE,
    ARMS,
    BLIND_DIMENSIONS,
    ORDER_DTYPE,
    OUTCOME_DTYPE,
    OVER_BUDGET_DTYPE,
    STATUS_DTYPE,
    VERDICT_COLUMNS,
)
from ._validate import check_choice
from .errors import DataError, ParseError
from .records import EvalstatsWarning, answers_sha256, load_dir, pair_runs, pair_token_sources

__all__ = [
    "load_frame", "resolve_rubrics", "rubric_dir", "select_rubric", "verdict_frame",
    "wide_by_judge",
]  # fmt: skip

_PAIR = ["task_id", "replicate"]
_AB = ("arm_a", "arm_b")
_SCORE_COLS = [f"{arm}_{dim}" for arm in ("with", "without") for dim in BLIND_DIMENSIONS]


def _current(judgments: pd.DataFrame, runs: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The judgments of the runs' answers as they are now; stale verdicts per rubric, judge, pair."""
    j = judgments.reset_index(drop=True).copy()
    j["_line"] = j.attrs.get("lines", list(range(1, len(j) + 1)))
    j.attrs = {k: v for k, v in judgments.attrs.items() if k != "lines"}
    if "runs_sha256" not in j.columns or j["runs_sha256"].isna().all():
        return j, {}
    named = "arm_a" in j.columns and j["arm_a"].notna().any()
    arms = [j[c].astype(str) for c in _AB] if named else [pd.Series(x, j.index) for x in ARMS]
    answer = runs.assign(arm=runs["arm"].astype(str)).set_index([*_PAIR, "arm"])["answer"]
    keys = [j["task_id"].astype(str), j["replicate"].astype("int64")]
    a, b = (answer.reindex(pd.MultiIndex.from_arrays([*keys, arm])).to_numpy() for arm in arms)
    now = map(answers_sha256, a, b)
    stale = np.array(
        [isinstance(s, str) and s != n for s, n in zip(j["runs_sha256"], now, strict=True)]
    )
    gone = stale & j["error"].isna().to_numpy()
    keys = [j["rubric"].astype(str), j["judge"].astype(str), *arms]
    counts = pd.Series(1, j.index).loc[gone].groupby([k.loc[gone] for k in keys]).size()
    return j.loc[~stale].reset_index(drop=True), {k: int(n) for k, n in counts.items()}


def _latest_per_call(j: pd.DataFrame, on_conflict: str) -> pd.DataFrame:
    """One line per call (pair, order, judge, rubric revision): its latest success, else failure."""
    j, source = j.copy(), j.attrs.get("source")
    j["_ok"] = j["error"].isna()
    order = j["order"].astype(object).fillna("").astype(str)
    if "arm_a" in j.columns and j["arm_a"].notna().any():
        # Either orientation of a pair, by the arm shown first: a reordered arms.toml is one pair.
        a, b = j["arm_a"].astype(str), j["arm_b"].astype(str)
        j["_pair"] = np.where(a < b, a + "\0" + b, b + "\0" + a)
        j["_first"] = np.where(order == "a_first", a, np.where(order == "b_first", b, ""))
    else:
        j["_pair"], j["_first"] = "", order
    ident = ["task_id", "replicate", "judge", "rubric", "prompt_revision", "_pair", "_first"]
    group = ["call_key"] if "call_key" in j.columns and j["call_key"].notna().all() else ident
    j = j.sort_values(["_ok", "created_at", "_line"], kind="stable")
    j["_conflict"] = None
    ok = j.loc[j["_ok"]]
    answers = ok.assign(_raw=ok["raw"].astype(object).fillna("")).groupby(group, sort=False)
    distinct = answers["_raw"].transform("nunique")
    clashing = ok.loc[distinct > 1]
    if len(clashing):
        key = clashing.groupby(group, sort=False).ngroup()
        where = [
            f"line {int(n)} (judgment_id {i})" for n, i in clashing[["_line", "judgment_id"]].values
        ]
        ids = pd.Series(where, clashing.index).groupby(key).agg("; ".join)
        if on_conflict == "error":
            first = clashing.iloc[0]
            raise DataError(
                f"different successful answers for one judge call (task_id={first['task_id']!r}, "
                f"replicate={first['replicate']}, judge={first['judge']!r}): {ids.iloc[0]}; both "
                "are kept in the journal: pass on_conflict='first', 'last' or 'conflict' to build "
                "the frame anyway",
                path=source,
                line=int(clashing.loc[key == 0, "_line"].iloc[1]),
                field="raw",
            )
        firsts = clashing.index[~key.duplicated()]
        if on_conflict == "conflict":  # only the first line of a call stays, flagged
            j.loc[firsts, "_conflict"] = ids.loc[key.loc[firsts]].to_numpy()
        if on_conflict != "last":
            j = j.drop(index=clashing.index.difference(firsts))
    kept = j.drop_duplicates(ident, keep="last")
    return kept.sort_values("_line", kind="stable").drop(columns=["_ok", "_pair", "_first"])


RubricsArg = Any  # a Rubric, a path or name, or an iterable / mapping of them


def rubric_dir(judgments: pd.DataFrame) -> Path | None:
    """``<directory of the judgments file>/rubrics``, when the judgments came from a file."""
    source = judgments.attrs.get("source")
    return Path(source).parent / "rubrics" if source else None


def _explicit(rubrics: RubricsArg) -> list[_rubrics.Rubric]:
    if rubrics is None:
        return []
    if isinstance(rubrics, Mapping):
        rubrics = list(rubrics.values())
    elif isinstance(rubrics, str | os.PathLike | _rubrics.Rubric):
        rubrics = [rubrics]
    try:
        return [r if isinstance(r, _rubrics.Rubric) else _rubrics.get(r) for r in rubrics]
    except KeyError as exc:
        raise ValueError(f"rubrics=: {exc.args[0]}") from None


def _pick(
    candidates: list[_rubrics.Rubric], name: str, revision: Any, sha: Any
) -> _rubrics.Rubric | None:
    same = [r for r in candidates if r.name == name]
    rev = None if pd.isna(revision) else int(revision)
    # The exact text, else the same revision, else the newest (a mismatch is the audit's).
    return max(same, key=lambda r: (r.sha256 == sha, r.revision == rev, r.revision), default=None)


def resolve_rubrics(
    judgments: pd.DataFrame, rubrics: RubricsArg = None
) -> dict[tuple[str, Any, Any], _rubrics.Rubric]:
    """The rubric of each distinct (``rubric``, ``prompt_revision``, ``prompt_sha256``).

    Built-in, then ``rubrics``, then the data directory's ``rubrics/``; ``DataError`` names the
    first judgment of a rubric found nowhere.

    >>> import evalstats
    >>> ds = evalstats.load_dir("data/sample")
    >>> found = resolve_rubrics(ds.judgments)
    >>> sorted({r.name for r in found.values()})
    ['blind-pair', 'with-without']
    """
    distinct = judgments[["rubric", "prompt_revision", "prompt_sha256"]].astype(object)
    builtins = [_rubrics.get(n) for n in _rubrics.names()]
    explicit = _explicit(rubrics)
    on_disk: list[_rubrics.Rubric] | None = None
    out: dict[tuple[str, Any, Any], _rubrics.Rubric] = {}
    for name, revision, sha in distinct.drop_duplicates().itertuples(index=False):
        name = str(name)
        found = _pick(builtins, name, revision, sha) or _pick(explicit, name, revision, sha)
        if found is None:
            if on_disk is None:
                d = rubric_dir(judgments)
                on_disk = [_rubrics.load(p) for p in sorted(d.glob("*.toml"))] if d else []
            found = _pick(on_disk, name, revision, sha)
        if found is None:
            hit = np.flatnonzero(judgments["rubric"].astype(str).to_numpy() == name)[0]
            lines = judgments.attrs.get("lines")
            where = rubric_dir(judgments)
            raise DataError(
                f"unknown rubric {name!r}; known: {', '.join(_rubrics.names())}, the rubrics= "
                f"given and the rubric files in {where if where is not None else 'rubrics/'}",
                path=judgments.attrs.get("source"),
                line=int(lines[hit]) if lines is not None else int(hit) + 1,
                field="rubric",
            )
        out[(name, _key(revision), _key(sha))] = found
    return out


def _key(v: Any) -> Any:
    return None if v is None or (not isinstance(v, str) and pd.isna(v)) else v


def _parse_rows(
    j: pd.DataFrame, found: Mapping[tuple[str, Any, Any], _rubrics.Rubric], score_cols: list[str]
) -> dict[str, list]:
    """Parse every successful judgment's raw text with its rubric."""
    names = "status outcome label uncertainty judge_cost_ratio reasoning parse_error".split()
    cols: dict[str, list] = {c: [None] * len(j) for c in [*names, *score_cols]}
    keys = ["rubric", "prompt_revision", "prompt_sha256", "order", "raw", "error", "_no_answer"]
    rows = zip(*(j[k].astype(object) for k in [*keys, "_conflict"]), strict=True)
    for i, (name, revision, sha, order, raw, error, no_answer, conflict) in enumerate(rows):
        status, why, order = "ok", None, None if pd.isna(order) else order
        rubric = found.get((str(name), _key(revision), _key(sha)))
        if no_answer:
            status = "no_answer"
        elif isinstance(conflict, str):
            status = "conflict"
            why = (
                f"different successful answers for this call: {conflict}; pick one with "
                "verdict_frame(..., on_conflict='first'|'last')"
            )
        elif isinstance(error, str):
            status = "error"
        elif rubric.needs_order and order is None:
            status, why = "invalid", "blind-pair judgment without an order: cannot de-blind"
        else:
            try:
                v = rubric.parse(raw if isinstance(raw, str) else "", order=order)
            except ParseError as exc:
                status, why = "invalid", exc.reason
        cols["status"][i], cols["parse_error"][i] = status, why
        if status == "ok":
            got = {n: getattr(v, n) for n in names[1:6]} | v.scores
            for c in got.keys() & cols.keys():
                cols[c][i] = got[c]
    return cols


def _missing_no_answer_rows(j: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """One no_answer row per (over-budget pair, judge, rubric) that has no judgment."""
    over = pairs.loc[pairs["over_budget"], _PAIR]
    combos = j[["judge", "rubric", "prompt_revision", "prompt_sha256"]].drop_duplicates(
        ["judge", "rubric"]
    )
    if over.empty or combos.empty:
        return pd.DataFrame()
    grid = over.merge(combos, how="cross")
    seen = j[[*_PAIR, "judge", "rubric"]].drop_duplicates()
    grid = grid.merge(seen, how="left", indicator=True)
    grid = grid.loc[grid["_merge"] == "left_only"].drop(columns="_merge")
    return grid.assign(
        order=pd.Series(pd.NA, index=grid.index, dtype=object),
        raw=None,
        error=None,
        _no_answer=True,
    )


def verdict_frame(
    judgments: pd.DataFrame,
    runs: pd.DataFrame,
    tasks: pd.DataFrame | None = None,
    *,
    on_conflict: str = "conflict",
    rubrics: RubricsArg = None,
) -> pd.DataFrame:
    """Build the long verdict frame: one verdict per (pair, order, judge, rubric), arm_a's view.

    Parameters
    ----------
    judgments, runs, tasks : DataFrame
        As loaded; ``tasks`` is needed when the runs have no ``tokens``.
    on_conflict : {"conflict", "error", "first", "last"}, default "conflict"
        Two answers for one call: a ``conflict`` row, a ``DataError``, the earlier or later.
    rubrics : Rubric, path, or a list of them, optional
        Besides the built-in ones and the data directory's ``rubrics/``.

    Returns
    -------
    DataFrame
        ``VERDICT_COLUMNS`` (``with_*``, ``*_with``, ``with_first``: arm_a's side; outcome NA
        unless ok), a rubric file's other dimensions, the runs' token sources. The latest
        success per call wins; verdicts on answers changed since are left out, counted in
        ``attrs["stale"]`` per (rubric, judge, arm_a, arm_b).

    >>> import evalstats
    >>> ds = evalstats.load_dir("data/sample")
    >>> frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    >>> frame["status"].value_counts().to_dict()
    {'ok': 491, 'no_answer': 20, 'invalid': 17, 'error': 2, 'conflict': 0}
    """
    if "tokens" not in runs.columns:
        if tasks is None:
            raise ValueError("runs have no 'tokens' column: pass tasks so they can be counted")
        from .tokens import annotate_runs

        runs = annotate_runs(runs, tasks)
    check_choice(on_conflict, "on_conflict", ("conflict", "error", "first", "last"))
    found = resolve_rubrics(judgments, rubrics)
    current, stale = _current(judgments, runs)
    latest = _latest_per_call(current, on_conflict)
    parts = [_pair_frame(j, r, found, (a, b)) for a, b, j, r in by_pair_of_arms(latest, runs)]
    out = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    for col in ("judge", "rubric"):
        out[col] = out[col].astype(str).astype("category")
    out = out.sort_values(
        ["task_id", "replicate", "judge", "rubric", "arm_a", "arm_b", "order"],
        kind="stable",
        na_position="first",
    ).reset_index(drop=True)
    out.attrs["superseded_failures"] = len(current) - len(latest)
    out.attrs["stale"] = stale
    out.attrs["conflicts"] = int((out["status"] == "conflict").sum())
    return out


_ROLE_ORDER = {"a_first": "with_first", "b_first": "without_first"}


def by_pair_of_arms(judgments: pd.DataFrame, runs: pd.DataFrame):
    """Per pair of arms judged: ``(arm_a, arm_b, judgments, runs)`` in the WITH / WITHOUT roles."""
    arm, pairs = runs["arm"].astype(str), None
    if "arm_a" not in judgments.columns or judgments["arm_a"].isna().all():
        other = sorted(set(arm) - set(ARMS))
        if other and not len(judgments):  # every verdict stale: an empty frame of one pair
            pairs, judgments = [tuple(sorted(set(arm))[:2])], judgments.assign(arm_a="", arm_b="")
        elif other:
            raise DataError(
                f"the judgments name no pair of arms (arm_a, arm_b) but the runs have the "
                f"arms {sorted(set(arm))}: judge them with `evalstats judge --pairs`",
                path=judgments.attrs.get("source"),
                line=1,
                field="arm_a",
            )
        else:
            yield "with", "without", judgments, runs
            return
    lines = judgments.attrs.get("lines")
    named = judgments[["arm_a", "arm_b"]].astype(str)
    for a, b in pairs or named.drop_duplicates().itertuples(index=False):
        pick = ((named["arm_a"] == a) & (named["arm_b"] == b)).to_numpy()
        j = judgments.loc[pick].reset_index(drop=True)
        j["order"] = j["order"].astype(object).map(_ROLE_ORDER).astype(ORDER_DTYPE)
        j.attrs = dict(judgments.attrs)
        if lines is not None:
            j.attrs["lines"] = [lines[i] for i in np.flatnonzero(pick)]
        both = arm.isin((a, b)).to_numpy()
        r = runs.loc[both].copy()
        r["arm"] = arm[both].map({a: "with", b: "without"}).astype(ARM_DTYPE)
        yield a, b, j, r


def _pair_frame(
    judgments: pd.DataFrame,
    runs: pd.DataFrame,
    found: Mapping[tuple[str, Any, Any], _rubrics.Rubric],
    arms: tuple[str, str],
) -> pd.DataFrame:
    """The verdict frame of one pair of arms, ``runs`` labelled with / without."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalstatsWarning)  # load_runs already reported them
        pairs = pair_runs(runs)
    dims = dict.fromkeys(d for r in found.values() for d in r.dimensions)
    extra_scores = [f"{a}_{d}" for a in ARMS for d in dims if d not in BLIND_DIMENSIONS]
    j = judgments
    known = j[_PAIR].merge(pairs[_PAIR], how="left", indicator=True)["_merge"].to_numpy()
    unknown = np.flatnonzero(known == "left_only")
    if unknown.size:
        row = j.iloc[int(unknown[0])]
        which = "WITH/WITHOUT" if arms == ARMS else f"{arms[0]!r} and {arms[1]!r}"
        raise DataError(
            f"judgment for pair (task_id={row['task_id']!r}, replicate={row['replicate']}) "
            f"that has no {which} runs",
            path=judgments.attrs.get("source"),
            line=int(row["_line"]),
            field="task_id",
        )

    over = j[_PAIR].merge(pairs[[*_PAIR, "over_budget"]], how="left")["over_budget"]
    j = j.assign(_no_answer=over.to_numpy(dtype=bool))
    extra = _missing_no_answer_rows(j, pairs)
    if len(extra):
        j = pd.concat([j, extra], ignore_index=True)
    j = j.reset_index(drop=True)

    parsed = _parse_rows(j, found, [*_SCORE_COLS, *extra_scores])
    w, wo = (pairs[f"{arm}_over_budget"].to_numpy(dtype=bool) for arm in ARMS)
    over_arm = np.where(w & wo, "both", np.where(w, "with", np.where(wo, "without", None)))
    pairs = pairs.assign(_over_arm=over_arm.astype(object))
    sides = [f"{arm}_{c}" for c in ("tokens", "wall_s") for arm in ARMS]
    sources = [f"{a}_{c}" for c in ("reported_tokens", "tokens_source") for a in ARMS]
    sources = [c for c in sources if c in pairs.columns]
    j = j.merge(
        pairs[[*_PAIR, *sides, "_over_arm", *sources]], on=_PAIR, how="left", validate="many_to_one"
    )
    n = len(j)
    tw, two = (j[f"{a}_tokens"].astype("float64").to_numpy() for a in ARMS)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(two > 0, tw / two, np.nan)
    out = pd.DataFrame(
        {
            "task_id": j["task_id"].astype("str"),
            "replicate": j["replicate"].astype("int64"),
            "arm_a": pd.Series([arms[0]] * n, dtype="str"),
            "arm_b": pd.Series([arms[1]] * n, dtype="str"),
            "judge": j["judge"].astype("category"),
            "rubric": j["rubric"].astype("category"),
            "order": j["order"].astype(ORDER_DTYPE),
            "status": pd.Categorical(parsed["status"], dtype=STATUS_DTYPE),
            "over_budget_arm": pd.Categorical(j["_over_arm"], dtype=OVER_BUDGET_DTYPE),
            "outcome": pd.Categorical(parsed["outcome"], dtype=OUTCOME_DTYPE),
            "label": pd.Series(parsed["label"], dtype="str"),
            "uncertainty": pd.Categorical(
                parsed["uncertainty"], categories=["low", "medium", "high"], ordered=True
            ),
            **{c: pd.array(parsed[c], dtype="Int64") for c in _SCORE_COLS},
            "judge_cost_ratio": pd.array(parsed["judge_cost_ratio"], dtype="float64"),
            "cost_ratio": ratio,
            "tokens_with": j["with_tokens"].astype("Int64"),
            "tokens_without": j["without_tokens"].astype("Int64"),
            "wall_with_s": j["with_wall_s"].astype("float64"),
            "wall_without_s": j["without_wall_s"].astype("float64"),
            "judge_input_tokens": j["input_tokens"].astype("Int64"),
            "judge_output_tokens": j["output_tokens"].astype("Int64"),
            "judge_usd": j["usd"].astype("float64"),
            "judgment_id": j["judgment_id"].astype("str"),
            "prompt_revision": j["prompt_revision"].astype("Int64"),
            "prompt_sha256": j["prompt_sha256"].astype("str"),
            "reasoning": pd.Series(parsed["reasoning"], dtype="str"),
            "raw": j["raw"].astype("str"),
            "parse_error": pd.Series(parsed["parse_error"], dtype="str"),
            **{c: pd.array(parsed[c], dtype="Int64") for c in extra_scores},
        }
    )
    return out[[*VERDICT_COLUMNS, *extra_scores]].assign(**pair_token_sources(j))


def wide_by_judge(
    frame: pd.DataFrame, *, value: str = "outcome", rubric: str | None = None
) -> pd.DataFrame:
    """One row per (task_id, replicate[, arm_a, arm_b][, order]), one ``value`` column per judge.

    ``order`` is a key when the frame has orders; ``rubric`` is required when it holds several.

    >>> import evalstats
    >>> frame = evalstats.load_frame("data/sample")
    >>> wide = evalstats.wide_by_judge(frame, rubric="with-without")
    >>> wide.columns.tolist()[:4], len(wide)
    (['task_id', 'replicate', 'arm_a', 'arm_b'], 90)
    """
    f, _ = select_rubric(frame, rubric)
    keys = [*_PAIR, *(c for c in ("arm_a", "arm_b") if c in f.columns)]
    if f["order"].notna().any():
        keys.append("order")
    f = f.assign(judge=f["judge"].astype(str))
    if f.duplicated([*keys, "judge"]).any():
        raise ValueError("several rows per (pair, judge): the frame is not one judgment per call")
    wide = f.pivot(index=keys, columns="judge", values=value).reset_index()
    wide.columns.name = None
    for col in wide.columns[len(keys) :]:
        if isinstance(f[value].dtype, pd.CategoricalDtype):
            wide[col] = wide[col].astype(f[value].dtype)
    return wide


def select_rubric(frame: pd.DataFrame, rubric: str | None = None) -> tuple[pd.DataFrame, str]:
    """The rows of one rubric and its name (``None``: the only one; ``ValueError`` otherwise).

    >>> import pandas as pd
    >>> f = pd.DataFrame({"rubric": ["with-without", "blind-pair"], "x": [1, 2]})
    >>> select_rubric(f, "blind-pair")[0]["x"].tolist()
    [2]
    """
    present = frame["rubric"].astype(str).unique().tolist()
    if rubric is None:
        if len(present) != 1:
            raise ValueError(f"the frame holds several rubrics {sorted(present)}: pass rubric=")
        rubric = present[0]
    rows = frame.loc[frame["rubric"].astype(str) == str(rubric)]
    if rows.empty:
        raise ValueError(f"no rows for rubric {rubric!r}; present: {sorted(present)}")
    return rows, str(rubric)


def load_frame(data_dir: str | os.PathLike[str], *, rubrics: RubricsArg = None) -> pd.DataFrame:
    """The verdict frame of a data directory (``DataError`` when it has no judgments)."""
    ds = load_dir(data_dir)
    if ds.judgments is None:
        raise DataError("no judgments file: run `evalstats judge` first", path=Path(data_dir))
    return verdict_frame(ds.judgments, ds.runs, ds.tasks, rubrics=rubrics)

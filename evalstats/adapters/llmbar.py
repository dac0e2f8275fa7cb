"""LLMBar (Zeng et al., ICLR 2024): judges on instruction-following pairs with gold labels.

LLMBar's ``Dataset/<subset>`` folders hold ``dataset.json`` (``input``, ``output_1``,
``output_2``, ``label`` = the better output, 1 or 2) and, per judge and prompting strategy,
``evaluators/<judge>/<strategy>/result.json``: the same records plus ``results``, whose LAST
element holds the verdict in both orders, ``{"swap = False": {"winner": ...}, "swap = True":
{...}}``. In ``swap = True`` the outputs were shown reversed and ``winner`` is already mapped
back to the original numbering. :func:`load` maps a subset through
:mod:`evalstats.adapters.pairwise`:

* ``output_1`` is the WITH side by convention, ``output_2`` the WITHOUT side: winner "1" is a
  win, "2" a loss, anything else (``None``, unparsed) ``invalid``;
* ``swap = False`` is ``order = "with_first"``, ``swap = True`` ``"without_first"``; both orders
  of an item are one pair (replicate 1) and the item is the task (the cluster);
* ``judge`` is ``"<judge>/<strategy>"`` with ``evaluator`` and ``strategy`` beside it, and
  ``len_with`` / ``len_without`` the characters of ``output_1`` / ``output_2``;
* the gold label becomes the labels table (labeler ``"gold"``).

:func:`accuracy_table` recomputes LLMBar's published figures from those verdicts, never from
``statistics.json`` (which is only the answer a test checks against): ``acc`` is the mean of
the accuracies in the two orders, ``(correct_False + correct_True) / (2 n) * 100``, an
unparsed verdict counting as wrong; ``agr`` (positional agreement) is the share of items whose
two winners are the same, ``equal / n * 100``, where two unparsed verdicts count as the same,
as LLMBar's script compares them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._tidy import concat_results, stack_results
from ..errors import DataError
from ..stats.agreement import judge_agreement, judge_vs_gold
from ..stats.rates import position_bias, win_rates
from . import pairwise

__all__ = [
    "ACCURACY_COLUMNS",
    "RUBRIC",
    "accuracy_table",
    "case_study",
    "length_bias",
    "load",
    "published_table",
    "result_files",
]

RUBRIC = "llmbar"
ACCURACY_COLUMNS = ("judge", "strategy", "n", "acc", "agr")
_SWAPS = (("swap = False", "with_first"), ("swap = True", "without_first"))
_OUTCOME = {"1": "win", "2": "loss"}


def _read_json(p: Path) -> Any:
    if not p.exists():
        raise DataError("file not found", path=p)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(
            f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=exc.lineno
        ) from None


def result_files(subset_dir: str | os.PathLike[str]) -> list[tuple[str, str, Path]]:
    """(judge, strategy, path) of every ``evaluators/<judge>/<strategy>/result.json``, sorted."""
    d = Path(subset_dir) / "evaluators"
    found = sorted(d.glob("*/*/result.json"))
    return [(p.parent.parent.name, p.parent.name, p) for p in found]


def _dataset(subset_dir: Path) -> list[dict[str, Any]]:
    p = subset_dir / "dataset.json"
    data = _read_json(p)
    if not isinstance(data, list):
        raise DataError("expected a JSON array of records", path=p)
    for i, rec in enumerate(data):
        for field in ("input", "output_1", "output_2", "label"):
            if not isinstance(rec, dict) or field not in rec:
                raise DataError(f"record {i + 1}: missing required field", path=p, field=field)
        if str(rec["label"]) not in _OUTCOME:
            raise DataError(
                f"record {i + 1}: label must be 1 or 2, got {rec['label']!r}", path=p, field="label"
            )
    return data


def _verdict_rows(subset_dir: Path, data: list[dict[str, Any]]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    subset = subset_dir.name
    for judge, strategy, p in result_files(subset_dir):
        recs = _read_json(p)
        if not isinstance(recs, list) or len(recs) != len(data):
            raise DataError(
                f"expected {len(data)} records as in dataset.json, got "
                f"{len(recs) if isinstance(recs, list) else type(recs).__name__}",
                path=p,
            )
        for i, (rec, ref) in enumerate(zip(recs, data, strict=True)):
            if rec.get("input") != ref["input"] or rec.get("output_1") != ref["output_1"]:
                raise DataError(
                    f"record {i + 1} is not dataset.json's record {i + 1}", path=p, field="input"
                )
            results = rec.get("results")
            if not isinstance(results, list) or not results:
                raise DataError(f"record {i + 1}: no results", path=p, field="results")
            last = results[-1]
            for key, order in _SWAPS:
                entry = last.get(key) if isinstance(last, dict) else None
                if not isinstance(entry, dict):
                    raise DataError(f"record {i + 1}: no {key!r} entry", path=p, field="results")
                winner = entry.get("winner")
                rows.append(
                    {
                        "item": f"{subset}/{i + 1:04d}",
                        "evaluator": judge,
                        "strategy": strategy,
                        "judge": f"{judge}/{strategy}",
                        "order": order,
                        "winner": None if winner is None else str(winner),
                        "raw": json.dumps(entry, ensure_ascii=False),
                        "len_with": len(ref["output_1"]),
                        "len_without": len(ref["output_2"]),
                        "subset": subset,
                        "jid": f"{p}:{i + 1}:{key}",
                    }
                )
    return pd.DataFrame(rows)


def _winner_rule(value: Any) -> tuple[str | None, str | None]:
    if value in _OUTCOME:
        return _OUTCOME[value], None
    return None, f"winner {value!r} is neither '1' nor '2'"


def load(subset_dir: str | os.PathLike[str]) -> pairwise.PairwiseData:
    """Read one LLMBar subset (``Dataset/<...>/<subset>``) into a verdict frame and labels.

    Parameters
    ----------
    subset_dir : path-like
        A folder with ``dataset.json`` and ``evaluators/<judge>/<strategy>/result.json``.

    Returns
    -------
    PairwiseData
        ``frame``: one row per (item, judge/strategy, order), the verdict-frame columns plus
        ``evaluator``, ``strategy``, ``len_with``, ``len_without``, ``subset``; ``labels``:
        the gold label of every item (labeler ``"gold"``).

    Raises
    ------
    DataError
        Missing or malformed files, a result.json whose records are not dataset.json's.
    """
    d = Path(subset_dir)
    data = _dataset(d)
    table = _verdict_rows(d, data)
    if table.empty:
        raise DataError("no evaluators/<judge>/<strategy>/result.json here", path=d)
    frame = pairwise.verdict_frame(
        table,
        item="item",
        judge="judge",
        verdict="winner",
        outcome=_winner_rule,
        order="order",
        rubric=RUBRIC,
        columns={"raw": "raw", "judgment_id": "jid"},
        extra={
            "evaluator": ("evaluator", "str"),
            "strategy": ("strategy", "str"),
            "len_with": ("len_with", "Int64"),
            "len_without": ("len_without", "Int64"),
            "subset": ("subset", "str"),
        },
        source=str(d),
    )
    gold = pd.DataFrame(
        {
            "item": [f"{d.name}/{i + 1:04d}" for i in range(len(data))],
            "label": [str(r["label"]) for r in data],
        }
    )
    mtime = pd.Timestamp((d / "dataset.json").stat().st_mtime, unit="s", tz="UTC")
    labels = pairwise.labels_table(
        gold,
        item="item",
        gold="label",
        outcome=_OUTCOME,
        labeler="gold",
        created_at=mtime,
        note="LLMBar gold label (output_1 = WITH)",
        source=str(d / "dataset.json"),
    )
    return pairwise.PairwiseData(frame=frame, labels=labels)


def accuracy_table(
    subset_dir: str | os.PathLike[str] | None = None, *, data: pairwise.PairwiseData | None = None
) -> pd.DataFrame:
    """LLMBar's Acc and Agr per (judge, strategy), recomputed from the verdicts.

    Parameters
    ----------
    subset_dir : path-like, optional
        The subset folder (read with :func:`load`), unless ``data`` is given.
    data : PairwiseData, optional
        What :func:`load` returned.

    Returns
    -------
    DataFrame
        ``judge``, ``strategy``, ``n`` (items), ``acc`` and ``agr`` (percent, as LLMBar
        publishes them), then ``acc_with_first``, ``acc_without_first`` (LLMBar's
        ``correct_False`` / ``correct_True``), ``both_correct``, ``n_invalid``.

    Examples
    --------
    A two-item subset in LLMBar's layout (the shared subsets are read the same way):

    >>> import json, tempfile
    >>> d = Path(tempfile.mkdtemp()) / "Tiny"
    >>> (d / "evaluators" / "J" / "Vanilla").mkdir(parents=True)
    >>> items = [{"input": "q1", "output_1": "a", "output_2": "bb", "label": 1},
    ...          {"input": "q2", "output_1": "c", "output_2": "dd", "label": 2}]
    >>> _ = (d / "dataset.json").write_text(json.dumps(items))
    >>> def verdict(first, swapped):
    ...     return [{"swap = False": {"winner": first}, "swap = True": {"winner": swapped}}]
    >>> results = [dict(items[0], results=verdict("1", "1")),
    ...            dict(items[1], results=verdict("1", None))]
    >>> _ = (d / "evaluators" / "J" / "Vanilla" / "result.json").write_text(json.dumps(results))
    >>> accuracy_table(d)[["judge", "strategy", "n", "acc", "agr", "n_invalid"]]
      judge strategy  n   acc   agr  n_invalid
    0     J  Vanilla  2  50.0  50.0          1
    """
    if data is None:
        if subset_dir is None:
            raise ValueError("pass subset_dir or data")
        data = load(subset_dir)
    f = data.frame
    gold = data.labels[["task_id", "outcome"]].rename(columns={"outcome": "gold"})
    m = f[["task_id", "evaluator", "strategy", "order", "status", "outcome", "label"]].merge(
        gold, on="task_id", how="left"
    )
    m["correct"] = (m["status"].astype(str) == "ok").to_numpy() & (
        m["outcome"].astype(object) == m["gold"].astype(object)
    ).to_numpy()
    m["winner"] = m["label"].astype(object).fillna("<none>")
    wide = m.pivot_table(
        index=["evaluator", "strategy", "task_id"],
        columns="order",
        values=["correct", "winner"],
        aggfunc="first",
        observed=True,
    )
    cf = wide[("correct", "with_first")].astype(bool)
    ct = wide[("correct", "without_first")].astype(bool)
    same = wide[("winner", "with_first")] == wide[("winner", "without_first")]
    parts = pd.DataFrame({"cf": cf, "ct": ct, "both": cf & ct, "same": same})
    g = parts.groupby(level=["evaluator", "strategy"], sort=True)
    counts = g.sum().astype(np.int64)
    n = g.size()
    invalid = (
        m.assign(bad=m["status"].astype(str) != "ok")
        .groupby(["evaluator", "strategy"], sort=True)["bad"]
        .sum()
    )
    out = pd.DataFrame(
        {
            "n": n,
            # LLMBar's own arithmetic, so the floats equal the published ones bit for bit.
            "acc": (counts["cf"] + counts["ct"]) / (2 * n) * 100,
            "agr": counts["same"] / n * 100,
            "acc_with_first": counts["cf"] / n * 100,
            "acc_without_first": counts["ct"] / n * 100,
            "both_correct": counts["both"] / n * 100,
            "n_invalid": invalid.astype(np.int64),
        }
    )
    out = out.reset_index().rename(columns={"evaluator": "judge"})
    return out[[*ACCURACY_COLUMNS, *out.columns[5:]]]


def published_table(subset_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The paper's figures from every ``statistics.json`` (for comparison only).

    ``judge``, ``strategy``, ``acc`` (``correct_average``) and ``agr`` (``equal``), percent,
    parsed from LLMBar's strings (``"93.5%"``, ``"97 / 100 = 97.0%"``).
    """
    rows = []
    for judge, strategy, p in result_files(subset_dir):
        s = _read_json(p.with_name("statistics.json"))
        rows.append(
            {
                "judge": judge,
                "strategy": strategy,
                "acc": float(str(s["correct_average"]).rstrip("%")),
                "agr": float(str(s["equal"]).split("=")[-1].strip().rstrip("%")),
            }
        )
    return pd.DataFrame(rows, columns=["judge", "strategy", "acc", "agr"])


def length_bias(frame: pd.DataFrame, labels: pd.DataFrame | None = None) -> pd.DataFrame:
    """P(the longer output wins) per judge (and for the gold labels), with a clustered CI.

    Among ``ok`` verdicts on items whose outputs differ in length, the share won by the
    longer one; 0.5 is no length preference. The interval is :func:`evalstats.win_rates`'
    task-clustered Wilson interval on the frame re-oriented so that WITH is the longer output.
    With ``labels``, a row ``judge="gold"`` gives the same share for the people's labels.
    Columns: ``judge``, ``n``, ``n_clusters``, ``longer_wins``, ``ci_low``, ``ci_high``.
    """
    lw = frame["len_with"].astype("float64").to_numpy()
    lo = frame["len_without"].astype("float64").to_numpy()
    keep = lw != lo
    f = frame.loc[keep, ["task_id", "replicate", "judge", "status", "outcome"]].copy()
    flip = (lw < lo)[keep]
    swap = {"win": "loss", "loss": "win", "tie": "tie"}
    out = f["outcome"].astype(object)
    f["outcome"] = np.where(flip, out.map(swap), out)
    f["judge"] = f["judge"].astype(str)
    parts = [f]
    if labels is not None:
        lens = frame.drop_duplicates("task_id")[["task_id", "len_with", "len_without"]]
        g = labels.merge(lens, on="task_id")
        g = g.loc[g["len_with"] != g["len_without"]]
        gflip = (g["len_with"] < g["len_without"]).to_numpy()
        go = g["outcome"].astype(object)
        parts.append(
            pd.DataFrame(
                {
                    "task_id": g["task_id"],
                    "replicate": g["replicate"],
                    "judge": "gold",
                    "status": "ok",
                    "outcome": np.where(gflip, go.map(swap), go),
                }
            )
        )
    rates = win_rates(pd.concat(parts, ignore_index=True), by="judge")
    longer = pd.DataFrame(rates.loc[rates["statistic"] == "win_rate"]).reset_index(drop=True)
    longer = longer.rename(columns={"estimate": "longer_wins", "n_tasks": "n_clusters"})
    return longer[["judge", "n", "n_clusters", "longer_wins", "ci_low", "ci_high"]]


def case_study(
    subset_dirs: Sequence[str | os.PathLike[str]],
    *,
    strategy: str = "Vanilla_NoRules",
    n_resamples: int = 2_000,
    rng: int = 0,
) -> dict[str, pd.DataFrame]:
    """Every table of the LLMBar case study, as tidy frames a page only has to display.

    Parameters
    ----------
    subset_dirs : sequence of path-like
        LLMBar subset folders.
    strategy : str, default "Vanilla_NoRules"
        The prompting strategy compared across judges (cross-judge kappa).
    n_resamples : int
        Bootstrap resamples of the kappa intervals.
    rng : int
        Seed.

    Returns
    -------
    dict of DataFrame
        ``accuracy`` (recomputed Acc / Agr beside the published ones, with ``match``),
        ``kappa_vs_gold`` (:func:`evalstats.stats.agreement.judge_vs_gold` per judge/strategy:
        kappa with a task-clustered CI, accuracy per order, positional agreement),
        ``position_bias`` (P(first-shown output wins) with a clustered CI), ``cross_judge``
        (kappa between the judges under ``strategy``), ``length_bias`` (P(longer output
        wins), judges and gold). Every table has a ``subset`` column.
    """
    acc, kappa, pos, cross, length = [], [], [], [], []
    for sd in subset_dirs:
        d = Path(sd)
        data = load(d)
        name = d.name
        table = accuracy_table(data=data)
        pub = published_table(d).rename(columns={"acc": "published_acc", "agr": "published_agr"})
        table = table.merge(pub, on=["judge", "strategy"], how="left")
        table["match"] = (table["acc"] == table["published_acc"]) & (
            table["agr"] == table["published_agr"]
        )
        acc.append(table.assign(subset=name))
        res = judge_vs_gold(data.frame, data.labels, n_resamples=n_resamples, rng=rng)
        kappa.append(stack_results({name: res.judges}, "subset"))
        pos.append(stack_results({name: position_bias(data.frame, by="judge")}, "subset"))
        sub = data.frame.loc[data.frame["strategy"] == strategy]
        if sub["judge"].astype(str).nunique() >= 2:
            sub = sub.assign(judge=sub["evaluator"].astype("category"))
            agr = judge_agreement(sub, n_resamples=n_resamples, rng=rng)
            cross.append(stack_results({name: agr}, "subset"))
        length.append(length_bias(data.frame, data.labels).assign(subset=name))
    return {
        "accuracy": pd.concat(acc, ignore_index=True),
        "kappa_vs_gold": concat_results(kappa),
        "position_bias": concat_results(pos),
        # under ``strategy``, the one compared across judges
        "cross_judge": concat_results(cross) if cross else pd.DataFrame(),
        "length_bias": pd.concat(length, ignore_index=True),
    }

"""LLMBar's ``Dataset/<subset>`` folders (Zeng et al., ICLR 2024) as a verdict frame and labels.

Every pair has a gold label and six judges' verdicts under several prompting strategies, in
both orders; output_1 is WITH. The mapping: ``docs/methods.md`` ("Case studies").
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError
from . import pairwise

__all__ = ["RUBRIC", "load", "result_files"]

RUBRIC = "llmbar"
_SWAPS = (("swap = False", "with_first"), ("swap = True", "without_first"))
_OUTCOME = {"1": "win", "2": "loss"}
_FIELDS = {"raw": "raw", "judgment_id": "jid"}
_EXTRA = ("evaluator", "strategy", "len_with", "len_without", "subset")


def result_files(subset_dir: str | os.PathLike[str]) -> list[tuple[str, str, Path]]:
    """(judge, strategy, path) of every ``evaluators/<judge>/<strategy>/result.json``, sorted."""
    d = Path(subset_dir) / "evaluators"
    found = sorted(d.glob("*/*/result.json"))
    return [(p.parent.parent.name, p.parent.name, p) for p in found]


def _dataset(subset_dir: Path) -> list[dict[str, Any]]:
    p = subset_dir / "dataset.json"
    data = pairwise.read_json(p, array=True)
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
        recs = pairwise.read_json(p)
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
            item = {"item": f"{subset}/{i + 1:04d}", "evaluator": judge, "strategy": strategy}
            item |= {"judge": f"{judge}/{strategy}", "subset": subset}
            item |= {"len_with": len(ref["output_1"]), "len_without": len(ref["output_2"])}
            for key, order in _SWAPS:
                entry = last.get(key) if isinstance(last, dict) else None
                if not isinstance(entry, dict):
                    raise DataError(f"record {i + 1}: no {key!r} entry", path=p, field="results")
                won = None if entry.get("winner") is None else str(entry["winner"])
                more = {"order": order, "winner": won, "jid": f"{p}:{i + 1}:{key}"}
                rows.append({**item, **more, "raw": json.dumps(entry, ensure_ascii=False)})
    return pd.DataFrame(rows)


def _winner(v: Any) -> tuple[str | None, str | None]:
    return (_OUTCOME[v], None) if v in _OUTCOME else (None, f"winner {v!r} is neither '1' nor '2'")


def load(subset_dir: str | os.PathLike[str]) -> pairwise.PairwiseData:
    """Read one LLMBar subset (``Dataset/<...>/<subset>``) into a verdict frame and labels.

    Returns
    -------
    PairwiseData
        ``frame``: one row per (item, judge/strategy, order), plus ``evaluator``,
        ``strategy``, ``len_with``, ``len_without``, ``subset``; ``labels``: the gold labels.
    """
    d = Path(subset_dir)
    data = _dataset(d)
    table = _verdict_rows(d, data)
    if table.empty:
        raise DataError("no evaluators/<judge>/<strategy>/result.json here", path=d)
    extra = {k: (k, "Int64" if k.startswith("len_") else "str") for k in _EXTRA}
    columns = pairwise.PairwiseColumns(
        item="item", judge="judge", verdict="winner", order="order", fields=_FIELDS, extra=extra
    )
    frame = pairwise.from_table(table, columns, outcome=_winner, rubric=RUBRIC, source=str(d))
    items = [f"{d.name}/{i + 1:04d}" for i in range(len(data))]
    gold = pd.DataFrame({"item": items, "label": [str(r["label"]) for r in data]})
    mtime = pd.Timestamp((d / "dataset.json").stat().st_mtime, unit="s", tz="UTC")
    labels = pairwise.labels_table(
        gold,
        item="item",
        gold="label",
        outcome=_OUTCOME,
        created_at=mtime,
        note="LLMBar gold label (output_1 = WITH)",
        source=str(d / "dataset.json"),
    )
    return pairwise.PairwiseData(frame=frame, labels=labels)

"""PandaLM's test set (Wang et al., ICLR 2024) as a verdict frame and a labels table.

Three annotators and two judges on the same 999 pairs; response1 is WITH. The files and the
mapping: ``docs/methods.md`` ("Case studies").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError
from . import pairwise

__all__ = ["JUDGES", "RUBRIC", "load"]

RUBRIC = "pandalm"
JUDGES = ("gpt-3.5-turbo", "pandalm-7b")
_FILES = {"testset": "testset-v1.json", **{j: f"{j}-testset-v1.json" for j in JUDGES}}
_RESULT_FIELD = {"gpt-3.5-turbo": "gpt_result", "pandalm-7b": "pandalm_result"}
_FIELDS = {"raw": "raw", "judgment_id": "jid"}
_VERDICT = {"1": "win", "2": "loss", "0": "tie", "tie": "tie"}


def _find(data_dir: Path, name: str) -> Path:
    for candidate in (data_dir / f"{name}.gz", data_dir / name):
        if candidate.exists():
            return candidate
    raise DataError(f"no {name} (or {name}.gz) in this directory", path=data_dir)


def _verdict(value: Any) -> tuple[str | None, str | None]:
    key = str(value).strip().lower()
    if key in _VERDICT:
        return _VERDICT[key], None
    return None, f"unparsable verdict {value!r}"


def _tables(data_dir: str | os.PathLike[str]) -> tuple[pd.DataFrame, pd.DataFrame, Path]:
    d = Path(data_dir)
    tpath = _find(d, _FILES["testset"])
    test = pd.DataFrame(pairwise.read_json(tpath, array=True))
    need = ["idx", "cmp_key", "annotator1", "annotator2", "annotator3"]
    missing = [c for c in need if c not in test.columns]
    if missing:
        raise DataError(f"records lack field(s) {missing}", path=tpath, field=missing[0])
    test["idx"] = test["idx"].astype(str)
    sides = test["cmp_key"].astype(str).str.split("_", n=1, expand=True).reindex(columns=[0, 1])
    bad = np.flatnonzero(sides.isna().any(axis=1).to_numpy())
    if bad.size:
        msg = f"record {bad[0] + 1}: cmp_key is not '<model1>_<model2>'"
        raise DataError(msg, path=tpath, field="cmp_key")
    test["model1"], test["model2"] = sides[0], sides[1]
    rows = []
    for judge in JUDGES:
        p = _find(d, _FILES[judge])
        recs = pd.DataFrame(pairwise.read_json(p, array=True))
        field = _RESULT_FIELD[judge]
        if field not in recs.columns or "idx" not in recs.columns:
            raise DataError("records lack the verdict field", path=p, field=field)
        recs["idx"] = recs["idx"].astype(str)
        if recs["idx"].tolist() != test["idx"].tolist():
            raise DataError("records are not aligned with the test set by idx", path=p, field="idx")
        text = recs[field].astype(str)
        one = {"idx": recs["idx"], "judge": judge, "verdict": text, "raw": text}
        one |= {"model1": test["model1"], "model2": test["model2"]}
        rows.append(pd.DataFrame({**one, "jid": [f"{p}:{i}" for i in recs["idx"]]}))
    return test, pd.concat(rows, ignore_index=True), tpath


def load(data_dir: str | os.PathLike[str]) -> pairwise.PairwiseData:
    """Read PandaLM's test set and both judges into a verdict frame and labels.

    Returns
    -------
    PairwiseData
        ``frame``: one row per (item, judge), plus ``with_system`` / ``without_system``;
        ``labels``: the three annotators' verdicts.
    """
    test, verdicts, tpath = _tables(data_dir)
    columns = pairwise.PairwiseColumns(
        item="idx", judge="judge", verdict="verdict", sides=("model1", "model2"), fields=_FIELDS
    )
    frame = pairwise.from_table(
        verdicts,
        columns,
        outcome=_verdict,
        rubric=RUBRIC,
        sort_by=["judge", "task_id"],
        source=str(Path(data_dir)),
    )
    long = test.melt(["idx"], ["annotator1", "annotator2", "annotator3"], "labeler", "label")
    mtime = pd.Timestamp(tpath.stat().st_mtime, unit="s", tz="UTC")
    labels = pairwise.labels_table(
        long.assign(label=long["label"].astype(str)),
        item="idx",
        gold="label",
        outcome=_verdict,
        labeler_column="labeler",
        created_at=mtime,
        source=str(tpath),
    )
    return pairwise.PairwiseData(frame=frame, labels=labels)

"""PandaLM (Wang et al., ICLR 2024): three annotators and two judges on the same 999 pairs.

Files (PandaLM's ``data/``, gzipped or not, lists aligned by ``idx``):

* ``testset-v1.json``: ``idx``, ``cmp_key`` (``"<model of response1>_<model of response2>"``),
  ``instruction``, ``input``, ``response1``, ``response2``, ``annotator1..3`` (0 = tie,
  1 = response1 better, 2 = response2 better);
* ``gpt-3.5-turbo-testset-v1.json``: ``gpt_result`` ("1" / "2" / "Tie" / unparsable text);
* ``pandalm-7b-testset-v1.json``: ``pandalm_result`` (0 / 1 / 2).

:func:`load` maps them through :mod:`evalstats.adapters.pairwise`: response1 is the WITH side by
convention (1 = win, 2 = loss, 0 / "Tie" = tie), the item is the task, one order only (no
position-swap data), an unparsable verdict is ``invalid`` with its text kept in ``raw``; the
three annotators become the labels table. The published figures need the unparsable verdicts
counted as ties (``unparsable="tie"``); :func:`judge_accuracy` also gives them kept as a wrong
fourth answer (``"invalid"``) and left out (``"exclude"``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._schema import OUTCOMES
from .._tidy import wide
from ..errors import DataError
from ..stats.agreement import gold_labels, labeler_agreement
from ..stats.ppi import ppi_win_rates
from ..stats.rates import win_rates
from . import pairwise

__all__ = [
    "JUDGES",
    "MODELS",
    "PUBLISHED",
    "RUBRIC",
    "UNPARSABLE",
    "annotator_kappas",
    "case_study",
    "judge_accuracy",
    "label_counts",
    "load",
    "ppi_demo",
    "win_lose_tie",
]

RUBRIC = "pandalm"
JUDGES = ("gpt-3.5-turbo", "pandalm-7b")
# The row model of a pair is the earlier of these (PandaLM's table order).
MODELS = ("llama-7b", "bloom-7b", "cerebras-gpt-6.7B", "opt-7b", "pythia-6.9b")
UNPARSABLE = ("tie", "invalid", "exclude")
# PandaLM's README, to the printed precision.
PUBLISHED = {
    "annotator_kappa": {
        ("annotator1", "annotator2"): 0.85,
        ("annotator1", "annotator3"): 0.88,
        ("annotator2", "annotator3"): 0.86,
    },
    "label_counts": {"tie": 105, "1": 422, "2": 472},
    "judge_accuracy": {
        "gpt-3.5-turbo": (71.07, 58.79, 57.36, 57.55),
        "pandalm-7b": (66.77, 57.38, 57.50, 57.43),
    },
}
_FILES = {
    "testset": "testset-v1.json",
    "gpt-3.5-turbo": "gpt-3.5-turbo-testset-v1.json",
    "pandalm-7b": "pandalm-7b-testset-v1.json",
}
_RESULT_FIELD = {"gpt-3.5-turbo": "gpt_result", "pandalm-7b": "pandalm_result"}
_VERDICT = {"1": "win", "2": "loss", "0": "tie", "tie": "tie"}
# Outcome (WITH = response1) -> PandaLM's label, for the tables that use its names.
_PANDA_LABEL = {"win": "1", "loss": "2", "tie": "tie"}


def _find(data_dir: Path, name: str) -> Path:
    for candidate in (data_dir / f"{name}.gz", data_dir / name):
        if candidate.exists():
            return candidate
    raise DataError(f"no {name} (or {name}.gz) in this directory", path=data_dir)


def _read(p: Path) -> list[dict[str, Any]]:
    try:
        if p.name.endswith(".gz"):
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                data = json.load(fh)
        else:
            data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON ({exc.msg})", path=p, line=exc.lineno) from None
    except (OSError, EOFError) as exc:
        raise DataError(f"unreadable file: {exc}", path=p) from None
    if not isinstance(data, list):
        raise DataError("expected a JSON array of records", path=p)
    return data


def _verdict(value: Any) -> tuple[str | None, str | None]:
    key = str(value).strip().lower()
    if key in _VERDICT:
        return _VERDICT[key], None
    return None, f"unparsable verdict {value!r}"


def _tables(data_dir: str | os.PathLike[str]) -> tuple[pd.DataFrame, pd.DataFrame, Path]:
    d = Path(data_dir)
    tpath = _find(d, _FILES["testset"])
    test = pd.DataFrame(_read(tpath))
    need = ["idx", "cmp_key", "annotator1", "annotator2", "annotator3"]
    missing = [c for c in need if c not in test.columns]
    if missing:
        raise DataError(f"records lack field(s) {missing}", path=tpath, field=missing[0])
    test["idx"] = test["idx"].astype(str)
    sides = test["cmp_key"].astype(str).str.split("_", n=1, expand=True)
    if sides.shape[1] != 2 or sides.isna().any().any():
        bad = (
            int(np.flatnonzero(sides.isna().any(axis=1).to_numpy())[0])
            if sides.shape[1] == 2
            else 0
        )
        raise DataError(
            f"record {bad + 1}: cmp_key is not '<model1>_<model2>'", path=tpath, field="cmp_key"
        )
    test["model1"], test["model2"] = sides[0], sides[1]
    rows = []
    for judge in JUDGES:
        p = _find(d, _FILES[judge])
        recs = pd.DataFrame(_read(p))
        field = _RESULT_FIELD[judge]
        if field not in recs.columns or "idx" not in recs.columns:
            raise DataError("records lack the verdict field", path=p, field=field)
        recs["idx"] = recs["idx"].astype(str)
        if recs["idx"].tolist() != test["idx"].tolist():
            raise DataError("records are not aligned with the test set by idx", path=p, field="idx")
        rows.append(
            pd.DataFrame(
                {
                    "idx": recs["idx"],
                    "judge": judge,
                    "verdict": recs[field].astype(str),
                    "raw": recs[field].astype(str),
                    "model1": test["model1"],
                    "model2": test["model2"],
                    "jid": [f"{p}:{i}" for i in recs["idx"]],
                }
            )
        )
    return test, pd.concat(rows, ignore_index=True), tpath


def load(data_dir: str | os.PathLike[str]) -> pairwise.PairwiseData:
    """Read PandaLM's test set and both judges into a verdict frame and labels.

    Returns
    -------
    PairwiseData
        ``frame``: one row per (item, judge), response1 = WITH, extra columns
        ``with_system`` / ``without_system`` (the two models); ``labels``: the three
        annotators' verdicts (labelers ``annotator1..3``).
    """
    test, verdicts, tpath = _tables(data_dir)
    frame = pairwise.verdict_frame(
        verdicts,
        item="idx",
        judge="judge",
        verdict="verdict",
        outcome=_verdict,
        sides=("model1", "model2"),
        rubric=RUBRIC,
        columns={"raw": "raw", "judgment_id": "jid"},
        sort_by=["judge", "task_id"],
        source=str(Path(data_dir)),
    )
    long = test.melt(
        id_vars=["idx"],
        value_vars=["annotator1", "annotator2", "annotator3"],
        var_name="labeler",
        value_name="label",
    )
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


def annotator_kappas(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    data: pairwise.PairwiseData | None = None,
    n_resamples: int = 2_000,
    rng: int = 0,
) -> pd.DataFrame:
    """Cohen's kappa between every two annotators: ``a``, ``b``, ``kappa``, ``ci_low``,
    ``ci_high`` (bootstrap over items), ``n``."""
    data = load(data_dir) if data is None else data
    t = labeler_agreement(data.labels, n_resamples=n_resamples, rng=rng)
    return t[["a", "b", "kappa", "ci_low", "ci_high", "n"]]


def label_counts(
    data_dir: str | os.PathLike[str] | None = None, *, data: pairwise.PairwiseData | None = None
) -> pd.DataFrame:
    """Majority-vote label counts: ``label`` (tie / 1 / 2, PandaLM's names), ``n``;
    ``attrs["no_majority"]`` counts items without one."""
    data = load(data_dir) if data is None else data
    g = gold_labels(data.labels)
    counts = g["gold"].astype(object).map(_PANDA_LABEL).value_counts()
    out = pd.DataFrame({"label": ["tie", "1", "2"]})
    out["n"] = [int(counts.get(k, 0)) for k in out["label"]]
    out.attrs["no_majority"] = int(g["gold"].isna().sum())
    return out


def _scores(y: np.ndarray, p: np.ndarray, k: int = 3) -> tuple[float, float, float, float]:
    """Accuracy and macro P/R/F1 over classes 0..k-1; predictions of -1 are always wrong."""
    valid = p >= 0
    table = np.bincount(y[valid] * k + p[valid], minlength=k * k).reshape(k, k)
    rows = np.bincount(y, minlength=k)  # every gold item, invalid predictions included
    cols, diag = table.sum(axis=0), np.diag(table)
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(cols > 0, diag / cols, 0.0)
        rec = np.where(rows > 0, diag / rows, 0.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
    return float(diag.sum() / len(y)), float(prec.mean()), float(rec.mean()), float(f1.mean())


def judge_accuracy(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    unparsable: str = "tie",
    data: pairwise.PairwiseData | None = None,
) -> pd.DataFrame:
    """Each judge against the annotators' majority vote, as PandaLM reports it.

    Parameters
    ----------
    data_dir : path-like, optional
    unparsable : {"tie", "invalid", "exclude"}, default "tie"
        An unparsable verdict: a tie (what reproduces the published figures), a fourth answer
        that is always wrong (kept invalid; no class gains precision from it), or left out.
    data : PairwiseData, optional
        What :func:`load` returned.

    Returns
    -------
    DataFrame
        ``judge``, ``acc``, ``precision``, ``recall``, ``f1`` (percent; macro over tie, 1, 2),
        ``n``, ``n_unparsable``, ``unparsable``.

    Examples
    --------
    Three items in PandaLM's layout (the shared ``pandalm/`` folder is read the same way):

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> test = [{"idx": i, "cmp_key": "llama-7b_opt-7b", "annotator1": a, "annotator2": a,
    ...          "annotator3": 0} for i, a in enumerate([1, 2, 0])]
    >>> gpt = [{"idx": str(i), "gpt_result": v} for i, v in enumerate(["1", "garbage", "Tie"])]
    >>> panda = [{"idx": str(i), "pandalm_result": v} for i, v in enumerate(["1", "2", "1"])]
    >>> for name, recs in (("testset-v1.json", test), ("gpt-3.5-turbo-testset-v1.json", gpt),
    ...                    ("pandalm-7b-testset-v1.json", panda)):
    ...     _ = (d / name).write_text(json.dumps(recs))
    >>> judge_accuracy(d, unparsable="invalid")[["judge", "acc", "n_unparsable"]].round(2)
               judge    acc  n_unparsable
    0  gpt-3.5-turbo  66.67             1
    1     pandalm-7b  66.67             0
    """
    if unparsable not in UNPARSABLE:
        raise ValueError(f"unparsable must be one of {UNPARSABLE}, got {unparsable!r}")
    data = load(data_dir) if data is None else data
    g = gold_labels(data.labels)
    g = g.loc[g["gold"].notna(), ["task_id", "gold"]]
    rows = []
    for judge in JUDGES:
        f = data.frame.loc[
            data.frame["judge"].astype(str) == judge, ["task_id", "status", "outcome"]
        ]
        m = f.merge(g, on="task_id", how="inner")
        bad = (m["status"].astype(str) != "ok").to_numpy()
        code = {o: i for i, o in enumerate(OUTCOMES)}
        y = m["gold"].astype(object).map(code).to_numpy(dtype=np.int64)
        p = m["outcome"].astype(object).map(code).fillna(-1).to_numpy(dtype=np.int64)
        if unparsable == "tie":
            p = np.where(bad, code["tie"], p)
        elif unparsable == "exclude":
            y, p = y[~bad], p[~bad]
        acc, prec, rec, f1 = _scores(y, p)
        rows.append(
            {
                "judge": judge,
                "acc": 100 * acc,
                "precision": 100 * prec,
                "recall": 100 * rec,
                "f1": 100 * f1,
                "n": len(y),
                "n_unparsable": int(bad.sum()),
                "unparsable": unparsable,
            }
        )
    return pd.DataFrame(rows)


def win_lose_tie(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    unparsable: str = "tie",
    data: pairwise.PairwiseData | None = None,
) -> pd.DataFrame:
    """Wins, losses and ties of the row model against the column model, per source.

    ``source`` is ``human`` (majority vote), ``gpt-3.5-turbo`` or ``pandalm-7b``; the row
    model is the earlier of :data:`MODELS`. Unparsable verdicts count as ties
    (``unparsable="tie"``) or are left out (``"invalid"``; then ``invalid`` counts them).
    Columns: ``source``, ``row_model``, ``col_model``, ``win``, ``lose``, ``tie``, ``invalid``.
    """
    if unparsable not in ("tie", "invalid"):
        raise ValueError(f"unparsable must be 'tie' or 'invalid', got {unparsable!r}")
    data = load(data_dir) if data is None else data
    f = data.frame
    sides = f.drop_duplicates("task_id")[["task_id", "with_system", "without_system"]]
    g = gold_labels(data.labels)
    parts = [
        g.assign(source="human", status="ok", outcome=g["gold"])[
            ["task_id", "source", "status", "outcome"]
        ]
    ]
    for judge in JUDGES:
        j = f.loc[f["judge"].astype(str) == judge, ["task_id", "status", "outcome"]]
        parts.append(j.assign(source=judge))
    long = pd.concat(parts, ignore_index=True).merge(sides, on="task_id")
    rank = {m: i for i, m in enumerate(MODELS)}
    r1 = long["with_system"].map(rank)
    r2 = long["without_system"].map(rank)
    if r1.isna().any() or r2.isna().any():
        unknown = sorted(
            set(long.loc[r1.isna(), "with_system"]) | set(long.loc[r2.isna(), "without_system"])
        )
        raise DataError(f"models {unknown} are not among {list(MODELS)}", field="cmp_key")
    first_is_row = (r1 < r2).to_numpy()
    out = long["outcome"].astype(object).to_numpy()
    bad = (long["status"].astype(str) != "ok").to_numpy()
    out = np.where(bad, "tie" if unparsable == "tie" else "invalid", out)
    flip = {"win": "lose", "loss": "win", "tie": "tie", "invalid": "invalid"}
    same = {"win": "win", "loss": "lose", "tie": "tie", "invalid": "invalid"}
    result = [same[o] if fr else flip[o] for o, fr in zip(out, first_is_row, strict=True)]
    long = long.assign(
        row_model=np.where(first_is_row, long["with_system"], long["without_system"]),
        col_model=np.where(first_is_row, long["without_system"], long["with_system"]),
        result=result,
    )
    table = (
        long.groupby(["source", "row_model", "col_model", "result"]).size().unstack(fill_value=0)
    )
    for col in ("win", "lose", "tie", "invalid"):
        if col not in table.columns:
            table[col] = 0
    table = table[["win", "lose", "tie", "invalid"]].reset_index()
    table.columns.name = None
    order = {"human": 0, **{j: i + 1 for i, j in enumerate(JUDGES)}}
    table = table.assign(
        _s=table["source"].map(order),
        _r=table["row_model"].map(rank),
        _c=table["col_model"].map(rank),
    )
    return (
        table.sort_values(["_s", "_r", "_c"])
        .drop(columns=["_s", "_r", "_c"])
        .reset_index(drop=True)
    )


def ppi_demo(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    judge: str = "gpt-3.5-turbo",
    fraction: float = 0.10,
    seed: int = 0,
    n_resamples: int = 4_000,
    data: pairwise.PairwiseData | None = None,
) -> pd.DataFrame:
    """A judge's win rates corrected with a random ``fraction`` of the human majority labels.

    Win rates are of response1 (WITH) against response2 over all items. Rows (``estimate``):
    ``all human`` (the majority vote on every item: the answer to recover, with the
    task-clustered Wilson interval of :func:`evalstats.win_rates`), ``judge only`` (the judge
    on every item), ``labels only`` (the sampled labels alone) and ``PPI++`` (the judge
    corrected by the sample, :func:`evalstats.stats.ppi.ppi_win_rates`). Columns:
    ``estimate``, ``n``, then for each rate the value and ``_ci_low`` / ``_ci_high``;
    ``covers_human`` says whether the interval holds the all-human win rate.
    """
    data = load(data_dir) if data is None else data
    g = gold_labels(data.labels)
    g = g.loc[g["gold"].notna()].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    k = max(1, int(round(fraction * len(g))))
    pick = np.sort(rng.choice(len(g), size=k, replace=False))
    digest = hashlib.sha256(
        json.dumps(g[["task_id"]].assign(gold=g["gold"].astype(str)).values.tolist()).encode()
    ).hexdigest()
    sample = g.iloc[pick]
    labels = pd.DataFrame(
        {
            "task_id": sample["task_id"],
            "replicate": sample["replicate"],
            "labeler": "majority",
            "outcome": sample["gold"],
            "sample_seed": seed,
            "frame_sha256": digest,
        }
    )
    human = g.assign(judge="all human", status="ok", outcome=g["gold"])
    rates = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")
    frame = data.frame
    rows = []
    for name, part in (
        ("all human", human),
        ("judge only", frame.loc[frame["judge"].astype(str) == judge].assign(judge="judge only")),
        ("labels only", labels.assign(judge="labels only", status="ok")),
    ):
        # The demonstration's table sets the estimators side by side: one row each.
        r = wide(win_rates(part, by="judge")).iloc[0]
        rows.append({"estimate": name, "n": int(r["n"]), **_rate_cols(r, rates)})
    ppi = wide(ppi_win_rates(frame, labels, judge=judge, n_resamples=n_resamples, rng=seed))
    ppi = ppi.iloc[0]
    rows.append({"estimate": "PPI++", "n": int(ppi["n"]), **_rate_cols(ppi, rates)})
    rows[-1]["n_labelled"] = int(ppi["n_labelled"])
    rows[-1]["ess_gain"] = float(ppi["win_rate_ess_gain"])
    out = pd.DataFrame(rows)
    truth = out.loc[0, "win_rate"]
    out["covers_human"] = (out["win_rate_ci_low"] <= truth) & (truth <= out["win_rate_ci_high"])
    out.attrs.update(judge=judge, fraction=fraction, seed=seed)
    return out


def _rate_cols(row: pd.Series, rates: tuple[str, ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in rates:
        out[r] = float(row[r])
        out[f"{r}_ci_low"] = float(row[f"{r}_ci_low"])
        out[f"{r}_ci_high"] = float(row[f"{r}_ci_high"])
    return out


def case_study(data_dir: str | os.PathLike[str], *, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Every table of the PandaLM case study, beside the published figures.

    Returns ``annotator_kappas`` (with ``published``), ``label_counts`` (with
    ``published``), ``judge_accuracy`` (one block per ``unparsable`` rule, the ``tie`` one
    with the published figures), ``win_lose_tie`` and ``ppi_demo``.
    """
    data = load(data_dir)
    kap = annotator_kappas(data=data, rng=seed)
    kap["published"] = [
        PUBLISHED["annotator_kappa"].get((a, b)) for a, b in zip(kap["a"], kap["b"], strict=True)
    ]
    kap["match"] = kap["kappa"].round(2) == kap["published"]
    counts = label_counts(data=data)
    counts["published"] = counts["label"].map(PUBLISHED["label_counts"])
    acc = pd.concat(
        [judge_accuracy(data=data, unparsable=u) for u in UNPARSABLE], ignore_index=True
    )
    pub = pd.DataFrame(
        [(j, *v) for j, v in PUBLISHED["judge_accuracy"].items()],
        columns=[
            "judge",
            "published_acc",
            "published_precision",
            "published_recall",
            "published_f1",
        ],
    ).assign(unparsable="tie")
    acc = acc.merge(pub, on=["judge", "unparsable"], how="left")
    return {
        "annotator_kappas": kap,
        "label_counts": counts,
        "judge_accuracy": acc,
        "win_lose_tie": win_lose_tie(data=data),
        "ppi_demo": ppi_demo(data=data, seed=seed),
    }

"""A labelling sheet: draw a blinded random sample of pairs for people, read their verdicts
back into labels. Details: docs/data.md (Labelling sheets)."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._atomic import atomic_write, locked
from ._csvsafe import restore_frame, safe_csv
from ._schema import ORDERS
from ._validate import check_positive_int
from .errors import DataError
from .records import (
    LABEL_FIELDS,
    LABEL_KEYS,
    EvalstatsWarning,
    find_file,
    load_dir,
    load_labels,
    pair_runs,
    write_labels,
)

__all__ = [
    "SHEET_COLUMNS", "VERDICTS", "draw_sample", "draw_sheet", "key_path", "merge_labels",
    "pairs_sha256", "read_sheet",
]  # fmt: skip

SHEET_COLUMNS = (
    "item", "task_id", "replicate", "prompt", "canonical_answer", "answer_a", "answer_b",
    "verdict", "allowed_verdicts", "labeler", "note",
)  # fmt: skip
VERDICTS = ("a", "b", "tie")
# verdict -> outcome from WITH's point of view, per shown order.
_DEBLIND = {
    "with_first": {"a": "win", "b": "loss", "tie": "tie"},
    "without_first": {"a": "loss", "b": "win", "tie": "tie"},
}


def key_path(sheet: str | os.PathLike[str]) -> Path:
    """Where the blinding key of ``sheet`` lives: ``<sheet>.key.json``."""
    p = Path(sheet)
    return p.with_name(p.name + ".key.json")


def _eligible_pairs(data_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Every within-budget pair of every two arms."""
    ds = load_dir(data_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalstatsWarning)
        pairs = pair_runs(ds.runs, ds.arms)
    if "over_budget" in pairs.columns:
        pairs = pairs.loc[~pairs["over_budget"].astype(bool)]
    tasks = ds.tasks[["task_id", "prompt", "canonical_answer"]]
    pairs = pairs.merge(tasks, on="task_id", how="left")
    return pairs.sort_values(["task_id", "replicate"], kind="stable").reset_index(drop=True)


def _seeds_pair(pairs: pd.DataFrame) -> bool:
    """True when every pair is the seeds' WITH against WITHOUT (or names no arms)."""
    if "arm_a" not in pairs.columns:
        return True
    return bool(((pairs["arm_a"] == "with") & (pairs["arm_b"] == "without")).all())


def pairs_sha256(pairs: pd.DataFrame) -> str:
    """sha256 of the pairs a sample is drawn from: ids (and K arms' names) and both answers."""
    rows = pairs.sort_values(["task_id", "replicate"], kind="stable")
    cols = ["task_id", "replicate", "with_answer", "without_answer"]
    if not _seeds_pair(rows):
        cols[2:2] = ["arm_a", "arm_b"]
    table = rows[cols].map(str).assign(replicate=rows["replicate"].astype("int64"))
    payload = json.dumps(table.to_numpy(dtype=object).tolist(), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def draw_sample(pairs: pd.DataFrame, n: int, *, seed: int) -> pd.DataFrame:
    """The stratified random sample (``task_id``, ``replicate``[, arms], ``order``), in sheet order.

    Each task gets ``n * m_t / M`` pairs by largest remainders; a uniform draw inside a task;
    each shown order a fair coin.

    >>> pairs = pd.DataFrame({"task_id": list("aaabbb"), "replicate": [1, 2, 3] * 2})
    >>> s = draw_sample(pairs, 4, seed=0)
    >>> s["task_id"].value_counts().sort_index().tolist()
    [2, 2]
    """
    n = check_positive_int(n, "n")
    if n > len(pairs):
        raise ValueError(f"cannot draw {n} pairs: only {len(pairs)} are eligible")
    rng = np.random.default_rng(check_positive_int(seed, "seed", minimum=0))
    pairs = pairs.sort_values(["task_id", "replicate"], kind="stable").reset_index(drop=True)
    keys = [c for c in ("task_id", "replicate", "arm_a", "arm_b") if c in pairs.columns]
    codes, tasks = pd.factorize(pairs["task_id"], sort=True)
    m = np.bincount(codes, minlength=len(tasks))
    share = n * m / m.sum()
    k = np.floor(share).astype(np.int64)
    left = n - int(k.sum())
    if left:
        # Largest remainders first, random among equal remainders.
        order = np.lexsort((rng.random(len(tasks)), -(share - k)))
        k[order[:left]] += 1
    key = rng.random(len(pairs))
    # Rank of each pair inside its task by a random key: the first k_t are drawn.
    rank = pd.Series(key).groupby(codes).rank(method="first").to_numpy() - 1
    chosen = pairs.loc[rank < k[codes], keys].reset_index(drop=True)
    chosen = chosen.iloc[rng.permutation(len(chosen))].reset_index(drop=True)
    chosen["order"] = np.asarray(ORDERS, dtype=object)[rng.integers(0, 2, len(chosen))]
    return chosen


def draw_sheet(
    data_dir: str | os.PathLike[str], n: int, *, seed: int, path: str | os.PathLike[str]
) -> pd.DataFrame:
    """Draw ``n`` pairs of ``data_dir`` for people to label; write the sheet and its key.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "sheet.csv"
    >>> sheet = draw_sheet("data/sample", 6, seed=1, path=out)
    >>> sheet.columns.tolist()[:4], len(sheet), key_path(out).exists()
    (['item', 'task_id', 'replicate', 'prompt'], 6, True)
    """
    pairs = _eligible_pairs(data_dir)
    keys = ["task_id", "replicate", "arm_a", "arm_b"]
    sample = draw_sample(pairs[keys], n, seed=seed)
    rows = sample.merge(pairs, on=keys, how="left", validate="one_to_one")
    first = rows["order"].to_numpy() == "with_first"
    sheet = rows[["task_id", "replicate", "prompt", "canonical_answer"]].assign(
        answer_a=np.where(first, rows["with_answer"], rows["without_answer"]),
        answer_b=np.where(first, rows["without_answer"], rows["with_answer"]),
        verdict="",
        allowed_verdicts="A (answer_a better), B (answer_b better) or tie",
        labeler="",
        note="",
    )
    sheet.insert(0, "item", np.arange(1, len(rows) + 1))
    cols = ["task_id", "replicate", "order", *([] if _seeds_pair(pairs) else ["arm_a", "arm_b"])]
    items = rows[cols].astype(str).assign(item=sheet["item"], replicate=sheet["replicate"])
    key = {
        "seed": int(seed),
        "n": int(len(sheet)),
        "frame_sha256": pairs_sha256(pairs),
        "data_dir": str(data_dir),
        "drawn_at": pd.Timestamp.now(tz="UTC").isoformat(),
        "items": items[["item", *cols]].astype({"replicate": "int64"}).to_dict(orient="records"),
    }
    out = Path(path)
    text = safe_csv(sheet, index=False)
    atomic_write(out, lambda fh: fh.write(text.encode("utf-8")))
    atomic_write(
        key_path(out), lambda fh: fh.write(json.dumps(key, indent=1, ensure_ascii=False).encode())
    )
    return sheet


def read_sheet(
    path: str | os.PathLike[str],
    data_dir: str | os.PathLike[str],
    *,
    labeler: str | None = None,
    created_at: str | pd.Timestamp | None = None,
    key: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Turn a filled sheet into de-blinded ``labels`` rows with the sample's provenance.

    ``data_dir``: where the sheet was drawn from (its pairs must hash as recorded);
    ``labeler``: for rows whose cell is empty; ``created_at``: default now (UTC); ``key``:
    default :func:`key_path` of ``path``. Returns labels with ``sample_seed`` and
    ``frame_sha256``, empty verdicts left out (``attrs["unlabelled"]``); ``DataError`` when the
    key does not match the data or its draw, or a row is wrong (naming its line and field).
    """
    p = Path(path)
    kp = key_path(p) if key is None else Path(key)
    if not kp.exists():
        raise DataError("the sheet's blinding key is missing (cannot de-blind)", path=kp)
    text = kp.read_text(encoding="utf-8")
    try:
        key = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON ({exc.msg})", path=kp, line=exc.lineno) from None
    for field, kind in {"seed": int, "n": int, "frame_sha256": str, "items": list}.items():
        value = key.get(field) if isinstance(key, dict) else None
        if not isinstance(value, kind) or isinstance(value, bool):
            line = next((i for i, t in enumerate(text.splitlines(), 1) if f'"{field}"' in t), None)
            why = f"expected {kind.__name__}, got {value!r:.40}"
            raise DataError(why, path=kp, line=line, field=field)
    pairs = _eligible_pairs(data_dir)
    digest = pairs_sha256(pairs)
    if digest != key["frame_sha256"]:
        raise DataError(
            f"the pairs of {data_dir} (sha256 {digest[:12]}…) are not the ones this sheet was "
            f"drawn from ({str(key['frame_sha256'])[:12]}…)",
            path=kp,
            field="frame_sha256",
        )
    keys = ["task_id", "replicate", "arm_a", "arm_b"]
    redraw = draw_sample(pairs[keys], int(key["n"]), seed=int(key["seed"]))
    recorded = pd.DataFrame(key["items"], columns=[*keys, "order"], dtype=object)
    recorded = recorded.fillna({"arm_a": "with", "arm_b": "without"})
    if not recorded.astype(str).equals(redraw[[*keys, "order"]].astype(str)):
        raise DataError(
            f"the key's items are not the draw of seed {key['seed']}: not a random sample",
            path=kp,
            field="items",
        )
    try:
        sheet = restore_frame(pd.read_csv(p, dtype=str, keep_default_na=False))
    except (pd.errors.ParserError, UnicodeDecodeError, FileNotFoundError) as exc:
        raise DataError(f"unreadable CSV: {exc}", path=p) from None
    missing = [c for c in ("item", "task_id", "replicate", "verdict") if c not in sheet.columns]
    if missing:
        raise DataError(f"sheet lacks column(s) {missing}", path=p, field=missing[0])
    by_item = {int(it["item"]): it for it in key["items"]}
    when = pd.Timestamp.now(tz="UTC") if created_at is None else pd.Timestamp(created_at)
    when = when.tz_localize("UTC") if when.tzinfo is None else when.tz_convert("UTC")
    out: list[dict[str, Any]] = []
    unlabelled = 0
    for i, row in enumerate(sheet.to_dict(orient="records")):
        line = i + 2  # header is line 1

        def fail(field: str, reason: str, line: int = line) -> DataError:
            return DataError(reason, path=p, line=line, field=field)

        try:
            item = int(row["item"])
        except ValueError:
            raise fail("item", f"expected an integer, got {row['item']!r}") from None
        entry = by_item.get(item)
        if entry is None:
            raise fail("item", f"item {item} is not in the sheet's key")
        for field in ("task_id", "replicate"):
            if str(row[field]).strip() != str(entry[field]):
                raise fail(field, f"{row[field]!r} differs from the key's {entry[field]!r}")
        verdict = str(row["verdict"]).strip().lower()
        if verdict == "":
            unlabelled += 1
            continue
        if verdict not in VERDICTS:
            raise fail("verdict", f"expected A, B or tie, got {row['verdict']!r}")
        who = str(row.get("labeler", "")).strip() or labeler
        if not who:
            raise fail("labeler", "missing labeler (fill the column or pass labeler=)")
        note = str(row.get("note", "")).strip() or None
        out.append(
            {
                "task_id": entry["task_id"],
                "replicate": int(entry["replicate"]),
                "labeler": who,
                "outcome": _DEBLIND[entry["order"]][verdict],
                "created_at": when,
                "order": entry["order"],
                "note": note,
                "sample_seed": int(key["seed"]),
                "frame_sha256": str(key["frame_sha256"]),
                "arm_a": entry.get("arm_a", "with"),
                "arm_b": entry.get("arm_b", "without"),
            }
        )
    labels = pd.DataFrame(out, columns=list(LABEL_FIELDS))
    labels.attrs |= {"unlabelled": unlabelled, "source": str(p)}
    return labels


def merge_labels(data_dir: str | os.PathLike[str], new: pd.DataFrame) -> Path:
    """Add ``new`` labels to ``DATA_DIR/labels.*`` (a label already present is an error)."""
    d = Path(data_dir)
    with locked(d / "labels"):  # two readers of sheets in turn: neither loses the other's
        existing_path = find_file(d, "labels", required=False)
        target = existing_path if existing_path is not None else d / "labels.jsonl"
        frames = [new] if existing_path is None else [load_labels(existing_path), new]
        merged = pd.concat(frames, ignore_index=True)
        key = merged.assign(order=merged["order"].astype(object).fillna(""))
        dup = key.duplicated(LABEL_KEYS, keep="first").to_numpy()
        if dup.any():
            r = key.loc[dup].iloc[0]
            raise DataError(
                f"label for (task_id={r['task_id']!r}, replicate={r['replicate']}, "
                f"{r['arm_a']} vs {r['arm_b']}, labeler={r['labeler']!r}, order={r['order']!r}) "
                "already present",
                path=target,
                field="labeler",
            )
        write_labels(merged, target)
    load_labels(target)  # what was written must read back
    return target

"""Checks of the judgments: pinned prompts, disagreement, coverage, blind order, failures."""

from __future__ import annotations

import pandas as pd

from .._disagreement import disagreement_counts
from ..errors import DataError
from ..stats.rates import sign_test_p
from ._rows import _frame_str, _listed, _pct, _row


def _resolve_each(j: pd.DataFrame, rubrics_arg: object) -> dict[tuple, object]:
    """(rubric, revision, sha) -> its Rubric, or None when it is found nowhere.

    Resolved one identity at a time so an unknown rubric is a finding of the check rather
    than an exception that hides every other finding.
    """
    from ..frames import resolve_rubrics

    cols = ["rubric", "prompt_revision", "prompt_sha256"]
    ids = j[cols].astype(object).drop_duplicates()
    out: dict[tuple, object] = {}
    for row in ids.itertuples(index=False):
        sub = j.loc[
            (j["rubric"].astype(str) == str(row[0]))
            & (_frame_str(j["prompt_revision"]) == _frame_str(pd.Series([row[1]])).iloc[0])
            & (_frame_str(j["prompt_sha256"]) == _frame_str(pd.Series([row[2]])).iloc[0])
        ]
        key = (str(row[0]), _none(row[1]), _none(row[2]))
        try:
            found = resolve_rubrics(sub, rubrics_arg)
        except DataError:
            out[key] = None
            continue
        out[key] = next(iter(found.values()))
    return out


def _none(v: object) -> object:
    return None if v is None or (not isinstance(v, str) and pd.isna(v)) else v


def _check_hashes(j: pd.DataFrame, rubrics_arg: object = None) -> dict[str, str]:
    check = "prompt_hash_pinned"
    problems: list[str] = []
    n_bad = 0
    resolved = _resolve_each(j, rubrics_arg)
    used: dict[str, object] = {}
    for (rubric, revision), grp in j.groupby(
        ["rubric", "prompt_revision"], observed=True, dropna=False
    ):
        rev = _none(revision)
        shas = _frame_str(grp["prompt_sha256"])
        distinct = sorted(set(shas))
        if len(distinct) > 1:
            # One name and revision, several texts: a word changed without a revision bump.
            problems.append(
                f"{rubric} r{rev} changed text under the same name and revision: its "
                f"{len(grp)} judgments carry {len(distinct)} prompt_sha256 values "
                f"({_listed([s[:12] + '...' for s in distinct])})"
            )
        for sha in distinct:
            sub = grp.loc[shas == sha]
            known = resolved.get((str(rubric), rev, _none(sub["prompt_sha256"].iloc[0])))
            if known is None:
                problems.append(f"{len(sub)} judgments of unknown rubric {rubric!r}")
                n_bad += len(sub)
                continue
            where = "the packaged prompt" if known.path is None else f"the rubric file {known.path}"
            if rev is None or int(rev) != known.revision:
                problems.append(
                    f"{len(sub)} judgments of {rubric} at revision {revision}, but "
                    f"{where} is revision {known.revision}"
                )
                n_bad += len(sub)
                continue
            used[f"{rubric} r{known.revision}"] = known
            if sha != known.sha256:
                problems.append(
                    f"{len(sub)} of {len(grp)} {rubric} r{known.revision} "
                    f"judgments have prompt_sha256 {sha[:12]}..., not "
                    f"{known.sha256[:12]}... ({where})"
                )
                n_bad += len(sub)
    mixed = j.groupby("rubric", observed=True)["prompt_revision"].agg(
        lambda s: sorted(set(s.dropna().astype(int)))
    )
    mixing = [
        f"{rubric} mixes prompt revisions {revs}" for rubric, revs in mixed.items() if len(revs) > 1
    ]
    if problems:
        return _row(
            check,
            "fail",
            f"{n_bad} of {len(j)} judgments fail the pin: " + "; ".join(problems + mixing) + ".",
        )
    revs = ", ".join(
        f"{k} ({r.sha256[:12]}...{'' if r.path is None else ', ' + str(r.path)})"
        for k, r in sorted(used.items())
    )
    if mixing:
        return _row(
            check,
            "warn",
            f"Every judgment matches its prompt ({revs}), but "
            + "; ".join(mixing)
            + ": report each revision separately or rejudge with one.",
        )
    whose = (
        "the packaged prompt"
        if all(r.path is None for r in used.values())
        else "their rubric's prompt"
    )
    return _row(check, "pass", f"All {len(j)} judgments match {whose}: {revs}.")


def _disagreements(frame: pd.DataFrame) -> pd.DataFrame:
    """Per rubric and pair of judges: units both judged ok, and how many differ.

    The counting is the package's one disagreement rule (:mod:`evalstats._disagreement`),
    applied to one wide table (pair or pair-order x judge) per rubric. ``n`` counts those
    units (``unit``: pairs or pair-orders), ``n_pairs`` the distinct pairs among them.
    """
    ok = frame.loc[frame["status"].astype(str) == "ok"]
    keys = ["task_id", "replicate", "_order"]
    ok = ok.assign(
        _order=_frame_str(ok["order"]),
        _judge=ok["judge"].astype(str),
        _rubric=ok["rubric"].astype(str),
        _outcome=ok["outcome"].astype(str),
    )
    parts = []
    for rubric, grp in ok.groupby("_rubric"):
        wide = grp.drop_duplicates([*keys, "_judge"], keep="last").pivot(
            index=keys, columns="_judge", values="_outcome"
        )
        counts = disagreement_counts(wide)
        answered = wide.notna()
        pair_of = wide.index.droplevel("_order")
        n_pairs = [
            pair_of[(answered[a] & answered[b]).to_numpy()].nunique()
            for a, b in zip(counts["judge_a"], counts["judge_b"], strict=True)
        ]
        parts.append(
            counts.assign(
                rubric=rubric,
                unit="pair-orders" if (grp["_order"] != "").any() else "pairs",
                n_pairs=pd.Series(n_pairs, index=counts.index, dtype="int64"),
            )
        )
    columns = ["rubric", "judge_1", "judge_2", "n", "n_pairs", "disagree", "unit"]
    if not parts:
        return pd.DataFrame(columns=columns)
    both = pd.concat(parts, ignore_index=True)
    both = both.rename(columns={"judge_a": "judge_1", "judge_b": "judge_2"})
    return both.rename(columns={"disagreements": "disagree"})[columns]


def _check_disagreement(frame: pd.DataFrame, threshold: float) -> dict[str, str]:
    check = "judge_disagreement"
    d = _disagreements(frame)
    if d.empty:
        return _row(
            check,
            "warn",
            "No rubric has two judges with ok verdicts: disagreement cannot be measured.",
        )
    parts, status, failing = [], "pass", set()
    for r in d.itertuples():
        if r.n == 0:
            parts.append(f"{r.rubric}: {r.judge_1} vs {r.judge_2} share no ok pair")
            status = "warn" if status == "pass" else status
            continue
        rate = r.disagree / r.n
        flag = " > threshold" if rate > threshold else ""
        of_pairs = f" of {r.n_pairs} pairs" if r.unit == "pair-orders" else ""
        parts.append(
            f"{r.rubric}: {r.judge_1} vs {r.judge_2} disagree on {r.disagree} of "
            f"{r.n} {r.unit} ({_pct(rate)}){of_pairs}{flag}"
        )
        if rate > threshold:
            status = "fail"
            failing.add(str(r.rubric))
    lead = {
        "pass": f"Within the {_pct(threshold)} trigger",
        "warn": "Not measurable for every judge pair",
        "fail": f"Above the {_pct(threshold)} trigger (re-curate the tasks or add a third judge)",
    }[status]
    row = _row(check, status, f"{lead}: " + "; ".join(parts) + ".")
    # The rubrics it fails on: the report marks their headline rows (table.attrs["rubrics"]).
    return row | {"rubrics": sorted(failing)}


def _check_coverage(frame: pd.DataFrame, pairs: pd.DataFrame) -> dict[str, str]:
    check = "judgment_coverage"
    if "over_budget_with" in pairs.columns:
        keep = ~(
            pairs["over_budget_with"].to_numpy(dtype=bool)
            | pairs["over_budget_without"].to_numpy(dtype=bool)
        )
        pairs = pairs.loc[keep]
    want = pairs[["task_id", "replicate"]].drop_duplicates()
    f = frame.assign(_judge=frame["judge"].astype(str), _rubric=frame["rubric"].astype(str))
    # One merge for every (rubric, judge): the wanted pairs each has judged.
    combos = f[["_rubric", "_judge"]].drop_duplicates().sort_values(["_rubric", "_judge"])
    seen = f[["_rubric", "_judge", "task_id", "replicate"]].drop_duplicates()
    judged = seen.merge(want, on=["task_id", "replicate"]).groupby(["_rubric", "_judge"]).size()
    index = pd.MultiIndex.from_frame(combos)
    lack = len(want) - judged.reindex(index, fill_value=0)
    missing = [
        f"{judge} on {rubric}: {n} of {len(want)} pairs unjudged"
        for (rubric, judge), n in lack.items()
        if n
    ]
    if missing:
        return _row(
            check,
            "warn",
            "Some in-budget pairs were not judged by every judge: " + _listed(missing) + ".",
        )
    n_combo = f[["_rubric", "_judge"]].drop_duplicates().shape[0]
    return _row(
        check,
        "pass",
        f"All {len(want)} in-budget pairs were judged by each of the "
        f"{n_combo} (rubric, judge) combinations.",
    )


def _check_orders(
    j: pd.DataFrame, alpha: float, tolerance: float, rubrics_arg: object = None
) -> dict[str, str]:
    check = "blind_order_balance"
    resolved = _resolve_each(j, rubrics_arg)
    ordered = sorted(
        {name for (name, _, _), r in resolved.items() if r is not None and r.needs_order}
    )
    if not ordered:
        return _row(check, "pass", "No judgments of a rubric with a presentation order.")
    parts, status = [], "pass"
    for rubric in ordered:
        g = j.loc[j["rubric"].astype(str) == rubric]
        if "status" in g.columns:
            # A verdict frame's no_answer rows stand for pairs never shown to a judge.
            g = g.loc[g["status"].astype(str) != "no_answer"]
        order = _frame_str(g["order"])
        n_null = int((order == "").sum())
        shown = g.assign(_order=order).loc[order != "", ["task_id", "replicate", "_order"]]
        shown = shown.drop_duplicates()
        n_wf = int((shown["_order"] == "with_first").sum())
        n = len(shown)
        n_pairs = len(shown[["task_id", "replicate"]].drop_duplicates())
        if n == 0:
            parts.append(f"{rubric}: no judgment has an order")
            status = "warn"
            continue
        share = n_wf / n
        p = float(sign_test_p(n_wf, n - n_wf))
        off = p < alpha or abs(share - 0.5) > tolerance
        parts.append(
            f"{rubric}: WITH shown first in {n_wf} of {n} pair-orders "
            f"({_pct(share)}, exact binomial p = {p:.3g}) of {n_pairs} pairs"
            + (f", {n_null} judgments without an order" if n_null else "")
        )
        if off or n_null:
            status = "warn"
    lead = (
        "Orders balanced"
        if status == "pass"
        else "Orders unbalanced (show both orders per pair, or balance the seeded order)"
    )
    return _row(check, status, f"{lead}: " + "; ".join(parts) + ".")


def _check_failures(frame: pd.DataFrame, threshold: float) -> dict[str, str]:
    check = "judge_failure_rate"
    status = frame["status"].astype(str)
    judged = frame.loc[status != "no_answer"]
    if judged.empty:
        return _row(check, "warn", "No judged pairs.")
    st = judged["status"].astype(str)
    g = judged.assign(
        _bad=st.isin(["invalid", "error"]),
        _inv=st == "invalid",
        _err=st == "error",
        _judge=judged["judge"].astype(str),
        _rubric=judged["rubric"].astype(str),
    )
    agg = g.groupby(["_rubric", "_judge"])[["_bad", "_inv", "_err"]].agg(["sum", "size"])
    # A rubric whose judgments carry an order counts pair-orders; the pairs are named beside.
    g = g.assign(_ordered=_frame_str(g["order"]) != "")
    keys = ["_rubric", "_judge"]
    ordered = g.groupby(keys)["_ordered"].any()
    n_pairs = g.drop_duplicates([*keys, "task_id", "replicate"]).groupby(keys).size()
    parts, over = [], []
    for (rubric, judge), r in agg.iterrows():
        n, bad = int(r[("_bad", "size")]), int(r[("_bad", "sum")])
        is_ordered = bool(ordered[(rubric, judge)])
        of_pairs = f" of {int(n_pairs[(rubric, judge)])} pairs" if is_ordered else ""
        text = (
            f"{judge} on {rubric}: {bad} of {n} {'pair-orders' if is_ordered else 'pairs'} "
            f"({_pct(bad / n)}; {int(r[('_inv', 'sum')])} invalid, "
            f"{int(r[('_err', 'sum')])} error){of_pairs}"
        )
        parts.append(text)
        if bad / n > threshold:
            over.append(text)
    if over:
        return _row(
            check, "warn", f"Invalid + error above {_pct(threshold)}: " + "; ".join(over) + "."
        )
    return _row(
        check, "pass", f"Invalid + error at most {_pct(threshold)}: " + "; ".join(parts) + "."
    )

"""The LLMBar case study report kind: LLMBar's Acc / Agr recomputed beside the published
figures, kappa against gold, position bias, agreement between judges and length bias, from
the tarball (extracted to a temporary directory) or an extracted ``Dataset`` tree."""

from __future__ import annotations

import json
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._tidy import concat_results, tidy_frame, wide, with_diagnostics
from ..errors import DataError
from ._kinds import Context, Loaded, Section, Unavailable, base_parameters, findings

__all__ = ["check", "describe_parameters", "detect", "load", "sections"]

_TARBALLS = ("LLMBar*.tar.xz", "LLMBar*.tar.gz", "LLMBar*.tar")
_PAGE = "case_study_llmbar"


def _tarballs(data: Path) -> list[Path]:
    return sorted({p for pattern in _TARBALLS for p in data.glob(pattern) if p.is_file()})


def _subset_dirs(root: Path) -> list[Path]:
    """Every folder under ``root`` with a ``dataset.json`` and an ``evaluators/`` folder."""
    return sorted(
        p.parent for p in root.rglob("dataset.json") if (p.parent / "evaluators").is_dir()
    )


def detect(data: Path) -> bool:
    return bool(_tarballs(data)) or bool(_subset_dirs(data))


def check(data: Path) -> None:
    if not detect(data):
        what = "LLMBar*.tar.xz or Dataset/<subset>/dataset.json with evaluators/"
        raise DataError(f"no LLMBar data: expected {what}", path=data)


def _read_subsets(root: Path) -> list[tuple[str, Any, pd.DataFrame]]:
    from ..adapters import llmbar

    return [(d.name, llmbar.load(d), _published(d)) for d in _subset_dirs(root)]


def _published(subset_dir: Path) -> pd.DataFrame:
    """The paper's Acc and Agr (percent) from every ``statistics.json`` of a subset."""
    from ..adapters.llmbar import result_files

    rows = []
    for judge, strategy, p in result_files(subset_dir):
        q = p.with_name("statistics.json")
        try:
            s = json.loads(q.read_text(encoding="utf-8"))
            acc = float(str(s["correct_average"]).rstrip("%"))
            agr = float(str(s["equal"]).split("=")[-1].strip().rstrip("%"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DataError(f"unreadable statistics: {exc}", path=q) from None
        rows.append({"judge": judge, "strategy": strategy, "acc": acc, "agr": agr})
    return pd.DataFrame(rows, columns=["judge", "strategy", "acc", "agr"])


def load(d: Path, params: Mapping[str, Any], frame: pd.DataFrame | None) -> Loaded:
    """Every subset, read once (from the tarball via a temporary directory, or in place)."""
    tarballs = _tarballs(d)
    if tarballs:
        inputs: list[Path] = list(tarballs)
        subsets = []
        with tempfile.TemporaryDirectory(prefix="evalstats-llmbar-") as tmp:
            for k, tb in enumerate(tarballs):
                dest = Path(tmp) / str(k)
                try:
                    with tarfile.open(tb) as tar:
                        # The "data" filter refuses absolute paths, links out and device files.
                        tar.extractall(dest, filter="data")
                except (tarfile.TarError, OSError) as exc:
                    raise DataError(f"cannot extract the archive: {exc}", path=tb) from None
                subsets.extend(_read_subsets(dest))
    else:
        subsets = _read_subsets(d)
        inputs = sorted(
            p
            for sd in _subset_dirs(d)
            for p in [sd / "dataset.json", *sorted((sd / "evaluators").glob("*/*/*.json"))]
        )
    if not subsets:
        raise DataError("no LLMBar subset (dataset.json with evaluators/) in the data", path=d)
    names = [s[0] for s in subsets]
    if len(set(names)) != len(names):
        raise DataError(f"two subsets share a folder name: {names}", path=d)
    f = pd.concat([s[1].frame for s in subsets], ignore_index=True) if frame is None else frame
    return Loaded(
        frame=f,
        inputs=inputs,
        describe={
            "subsets": {
                name: {
                    "items": int(data.labels["task_id"].nunique()),
                    "judges": sorted(data.frame["evaluator"].astype(str).unique()),
                    "strategies": int(data.frame["strategy"].astype(str).nunique()),
                }
                for name, data, _ in subsets
            },
            "source": "princeton-nlp/LLMBar, Dataset/ (MIT)",
            "convention": "output_1 = WITH, output_2 = WITHOUT; swap = False is with_first",
        },
        extra={"subsets": subsets},
    )


def describe_parameters(p: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **base_parameters(p),
        "strategy": str(p["strategy"]),
        "match_rule": "exact float equality with statistics.json (correct_average, equal)",
    }


def _split_judge(t: pd.DataFrame) -> pd.DataFrame:
    """``judge`` is ``<evaluator>/<strategy>``: the two as their own columns, first."""
    parts = t["judge"].astype(str).str.split("/", n=1, expand=True)
    out = t.assign(evaluator=parts[0], strategy=parts[1])
    first = ["subset", "evaluator", "strategy"]
    return out[[*first, *[c for c in out.columns if c not in first]]]


def _accuracy_table(data: Any) -> pd.DataFrame:
    """LLMBar's Acc and Agr per (judge, strategy), recomputed from the verdicts."""
    f = data.frame
    gold = data.labels[["task_id", "outcome"]].rename(columns={"outcome": "gold"})
    m = f[["task_id", "evaluator", "strategy", "order", "status", "outcome", "label"]].merge(
        gold, on="task_id", how="left"
    )
    m["correct"] = (m["status"].astype(str) == "ok").to_numpy() & (
        m["outcome"].astype(object) == m["gold"].astype(object)
    ).to_numpy()
    m["winner"] = m["label"].astype(object).fillna("<none>")
    wide_ = m.pivot_table(index=["evaluator", "strategy", "task_id"], columns="order",
                          values=["correct", "winner"], aggfunc="first", observed=True)  # fmt: skip
    cf = wide_[("correct", "with_first")].astype(bool)
    ct = wide_[("correct", "without_first")].astype(bool)
    same = wide_[("winner", "with_first")] == wide_[("winner", "without_first")]
    parts = pd.DataFrame({"cf": cf, "ct": ct, "both": cf & ct, "same": same})
    g = parts.groupby(level=["evaluator", "strategy"], sort=True)
    counts = g.sum().astype(np.int64)
    n = g.size()
    bad = m.assign(bad=m["status"].astype(str) != "ok")
    invalid = bad.groupby(["evaluator", "strategy"], sort=True)["bad"].sum()
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
    return out.reset_index().rename(columns={"evaluator": "judge"})


def _accuracy(ctx: Context) -> dict[str, Any]:
    parts = []
    for name, data, pub in ctx.extra["subsets"]:
        t = _accuracy_table(data).merge(
            pub.rename(columns={"acc": "published_acc", "agr": "published_agr"}),
            on=["judge", "strategy"],
            how="left",
        )
        # Exact: LLMBar's own arithmetic on the same counts gives the same doubles.
        t["match"] = (t["acc"] == t["published_acc"]) & (t["agr"] == t["published_agr"])
        parts.append(t.assign(subset=name))
    t = pd.concat(parts, ignore_index=True).rename(columns={"judge": "evaluator"})
    first = ["subset", "evaluator", "strategy", "n", "acc", "published_acc", "agr"]
    return {"accuracy": t[[*first, *[c for c in t.columns if c not in first]]]}


def _kappa_vs_gold(ctx: Context) -> dict[str, Any]:
    from ..stats.agreement import judge_vs_gold

    # Each bootstrap section draws its own child of the one seed.
    rng = np.random.default_rng(np.random.SeedSequence(ctx.seed).spawn(1)[0])
    kw = {"confidence": ctx.confidence, "n_resamples": ctx.n_resamples, "rng": rng}
    per_subset = {
        name: judge_vs_gold(data.frame, data.labels, **kw).judges
        for name, data, _ in ctx.extra["subsets"]
    }
    return {"kappa_vs_gold": _per_subset(per_subset)}


def _position_bias(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import position_bias

    per_subset = {
        name: position_bias(data.frame, by="judge", confidence=ctx.confidence)
        for name, data, _ in ctx.extra["subsets"]
    }
    return {"position_bias": _per_subset(per_subset)}


def _per_subset(results: dict[str, Any]) -> Any:
    """Long results of each subset stacked, keyed by subset, evaluator and strategy."""
    stacked = concat_results(results, "subset")
    rows = _split_judge(pd.DataFrame(stacked)).drop(columns="judge")
    diag = _split_judge(stacked.diagnostics).drop(columns="judge")
    extra = [c for c in ("ci_note",) if c in rows.columns]
    return tidy_frame(rows, by=["subset", "evaluator", "strategy"], diagnostics=diag, extra=extra)


def _cross_judge(ctx: Context) -> dict[str, Any]:
    from ..stats.agreement import judge_agreement

    strategy = str(ctx.params["strategy"])
    rng = np.random.default_rng(np.random.SeedSequence(ctx.seed).spawn(2)[1])
    parts, skipped = [], []
    for name, data, _ in ctx.extra["subsets"]:
        sub = data.frame.loc[data.frame["strategy"].astype(str) == strategy]
        if sub["evaluator"].astype(str).nunique() < 2:
            skipped.append(name)
            continue
        sub = sub.assign(judge=sub["evaluator"].astype(str).astype("category"))
        kw = {"confidence": ctx.confidence, "n_resamples": ctx.n_resamples, "rng": rng}
        parts.append((name, judge_agreement(sub, **kw)))
    if not parts:
        raise Unavailable(f"fewer than two judges used strategy {strategy!r} on any subset")
    stacked = concat_results(dict(parts), "subset")
    # One strategy, named beside the subset: keyed by subset, strategy and the judge pair.
    rows = pd.DataFrame(stacked)
    rows.insert(1, "strategy", strategy)
    diag = stacked.diagnostics.copy()
    diag.insert(1, "strategy", strategy)
    by = ["subset", "strategy", *stacked.by[1:]]
    return {"cross_judge": tidy_frame(rows, by=by, diagnostics=diag)}


def _longer_wins(frame: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """P(the longer output wins) per judge and for the gold labels (``judge="gold"``)."""
    from ..stats.rates import win_rates

    swap = {"win": "loss", "loss": "win", "tie": "tie"}
    lens = frame.drop_duplicates("task_id")[["task_id", "len_with", "len_without"]]
    gold = labels.merge(lens, on="task_id").assign(judge="gold", status="ok")
    parts = []
    for f in (frame, gold):
        lw = f["len_with"].astype("float64").to_numpy()
        lo = f["len_without"].astype("float64").to_numpy()
        keep = lw != lo
        out = f.loc[keep, "outcome"].astype(object)
        part = {c: f.loc[keep, c].to_numpy() for c in ("task_id", "replicate")}
        part |= {c: f.loc[keep, c].astype(str).to_numpy() for c in ("judge", "status")}
        part["outcome"] = np.where((lw < lo)[keep], out.map(swap), out)
        parts.append(pd.DataFrame(part))
    rates = win_rates(pd.concat(parts, ignore_index=True), by="judge")
    longer = pd.DataFrame(rates.loc[rates["statistic"] == "win_rate"]).reset_index(drop=True)
    longer = longer.rename(columns={"estimate": "longer_wins", "n_tasks": "n_tasks"})
    return longer[["judge", "n", "n_tasks", "longer_wins", "ci_low", "ci_high"]]


def _length_bias(ctx: Context) -> dict[str, Any]:
    subsets = ctx.extra["subsets"]
    parts = [_longer_wins(data.frame, data.labels).assign(subset=n) for n, data, _ in subsets]
    t = pd.concat(parts, ignore_index=True)
    gold = t["judge"] == "gold"
    t.loc[gold, "judge"] = "gold/gold"  # the people's labels, as a row of their own
    t = _split_judge(t)
    t.loc[t["evaluator"] == "gold", "strategy"] = "—"
    return {"length_bias": t}


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _findings(ctx: Context) -> dict[str, Any]:
    """The page's conclusion: one Markdown sentence per finding, built from the tables."""
    strategy = str(ctx.params["strategy"])
    rows: list[tuple[str, str]] = []
    acc = ctx.tables["accuracy"]
    published = acc.loc[acc["published_acc"].notna()]
    rows.append(("reproduced", (
        f"* **Reproduced.** {int(published['match'].sum())} of {len(published)} published "
        f"(subset, judge, strategy) rows of LLMBar's Acc and Agr are reproduced exactly "
        f"from the verdicts in result.json (equal as floating-point numbers), over "
        f"{acc['subset'].nunique()} subsets."
    )))  # fmt: skip
    kap = wide(ctx.tables["kappa_vs_gold"])  # a sentence reads a judge's row across
    for r in kap.loc[kap["strategy"] == strategy].to_dict("records"):
        if r["evaluator"] != "GPT-4":
            continue
        rows.append(("kappa", (
            f"* **Kappa vs gold, GPT-4 · {strategy} · {r['subset']}.** kappa "
            f"{r['kappa']:.2f} [{r['kappa_ci_low']:.2f}, {r['kappa_ci_high']:.2f}] "
            f"(task-clustered bootstrap), accuracy {_pct(r['accuracy'])}."
        )))  # fmt: skip
    chosen = kap.loc[kap["strategy"] == strategy]
    for subset, g in chosen.groupby("subset", sort=False):
        worse = g.loc[g["kappa_ci_high"] < 0]
        below = worse["evaluator"].tolist()
        if below:
            rows.append(("kappa", (
                f"* **Worse than chance, {subset}.** Under {strategy}, {len(below)} of "
                f"{len(g)} judges agree with the gold label less than chance would "
                f"(kappa CI below 0: {', '.join(below)}; accuracy "
                f"{_pct(worse['accuracy'].min())}–{_pct(worse['accuracy'].max())}): they "
                "prefer the wrong output systematically."
            )))  # fmt: skip
    pb = wide(ctx.tables["position_bias"])
    lo = pb["first_shown_win_rate_ci_low"]
    hi = pb["first_shown_win_rate_ci_high"]
    for subset, g in pb.assign(first=lo > 0.5, second=hi < 0.5).groupby("subset", sort=False):
        worst = g.loc[(g["first_shown_win_rate"] - 0.5).abs().idxmax()]
        rows.append(("position", (
            f"* **Position bias, {subset}.** The first-shown output wins significantly "
            f"more often than half the time for {int(g['first'].sum())} of {len(g)} "
            f"judge/strategy combinations and less often for {int(g['second'].sum())} "
            f"(clustered {ctx.confidence:.0%} CI excludes 0.5); the largest: "
            f"{worst['evaluator']}/{worst['strategy']}, "
            f"{_pct(worst['first_shown_win_rate'])} "
            f"[{_pct(worst['first_shown_win_rate_ci_low'])}, "
            f"{_pct(worst['first_shown_win_rate_ci_high'])}]."
        )))  # fmt: skip
    cross = wide(ctx.tables.get("cross_judge"))
    if cross is not None and len(cross):
        pairs = cross.loc[cross["judge_b"].notna() & (cross["judge_a"] != "all judges")]
        if len(pairs):
            rows.append(("cross_judge", (
                f"* **Judges vs each other ({strategy}).** Cohen's kappa between two "
                f"judges ranges from {pairs['kappa'].min():.2f} to "
                f"{pairs['kappa'].max():.2f} over {len(pairs)} judge pairs and subsets."
            )))  # fmt: skip
    lb = ctx.tables["length_bias"]
    for r in lb.loc[lb["evaluator"] == "gold"].to_dict("records"):
        judges = lb.loc[(lb["subset"] == r["subset"]) & (lb["evaluator"] != "gold")]
        rows.append(("length", (
            f"* **Length, {r['subset']}.** The gold label prefers the longer output in "
            f"{_pct(r['longer_wins'])} [{_pct(r['ci_low'])}, {_pct(r['ci_high'])}] of "
            f"items; the judges, from {_pct(judges['longer_wins'].min())} to "
            f"{_pct(judges['longer_wins'].max())}."
        )))  # fmt: skip
    return findings(rows)


def sections() -> tuple[Section, ...]:
    return (
        Section("accuracy", _PAGE, _accuracy),
        Section("kappa_vs_gold", _PAGE, lambda ctx: with_diagnostics(_kappa_vs_gold(ctx))),
        Section("position_bias", _PAGE, lambda ctx: with_diagnostics(_position_bias(ctx))),
        Section("cross_judge", _PAGE, lambda ctx: with_diagnostics(_cross_judge(ctx))),
        Section("length_bias", _PAGE, _length_bias),
        Section("findings", _PAGE, _findings),
    )

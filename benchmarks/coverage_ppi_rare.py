"""Coverage of candidate PPI intervals when an outcome is rare among the labels (issue 23).

Each design draws people's and a judge's verdicts from the latent probit model of
:func:`evalstats.stats.models.draw_outcomes` (task ICC on the latent scale, the same
noise for people and judge; the judge's latent may be shifted, a judge leaning to WITH), labels
a uniformly random subset of pairs, and calls :func:`evalstats.stats.ppi.ppi_win_rates` as a
user does. The intervals compared are built from its estimate and bootstrap SE (the same
resamples for every candidate), so they differ only in how the interval is formed:

* ``t``: estimate +/- t(C - 1) x SE x sqrt(C / (C - 1)), clipped (the former default);
* ``wilson``: a Wilson score interval at ``n_eff = theta (1 - theta) / SE_cr1^2`` with the same
  t quantile (net win on the score scale ``(1 + net) / 2``);
* ``logit``: the t interval on the logit scale (delta-method SE), mapped back;

each joined with a labels-only bound (``cp``: Clopper-Pearson, ``midp``, ``wils``: Wilson)
where an outcome has fewer than ``k`` labelled pairs (or non-pairs), e.g. ``wilson+midp<3``.
Coverage is of the people's population rates (the estimand of a task bootstrap).

Run: ``python benchmarks/coverage_ppi_rare.py [N_EVALS] [N_RESAMPLES] [design substrings]``
(default 2000 and 1000: Monte Carlo SE of a 95 % coverage 0.0049).
"""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from agreement_study import proportion_bounds
from scipy import stats as sps

from evalstats.records import EvalstatsWarning
from evalstats.stats.ppi import ppi_win_rates
from evalstats.stats.rates import RATE_NAMES

OUT = np.array(["loss", "tie", "win"])


@dataclass(frozen=True)
class Design:
    name: str
    sizes: tuple[int, ...]  # pairs per task
    probs: tuple[float, float, float]  # people's win, tie, loss
    n_labels: int
    icc: float = 0.3
    noise: float = 0.5  # people's and the judge's latent noise (pair noise is 1)
    shift: float = 0.0  # the judge's latent shift toward WITH


DESIGNS = (
    Design("rare win 40x5, 20 labels", (5,) * 40, (0.08, 0.30, 0.62), 20),
    Design("rare win 40x5, 60 labels", (5,) * 40, (0.08, 0.30, 0.62), 60),
    # coverage_ppi.py's model: judge +10 pp wins (here a latent shift), 60 labels, 40x5.
    Design("biased judge 40x5, 60 labels", (5,) * 40, (0.30, 0.36, 0.34), 60, shift=0.35),
    # Not tuned on: a rare loss beside a common win, unequal tasks, a judge leaning to WITH.
    Design(
        "rare loss 30 unequal, 35 labels", (2, 4, 6, 8, 10) * 6, (0.50, 0.44, 0.06), 35, shift=0.25
    ),  # fmt: skip
    Design("rare tie 60x3, 40 labels, ICC .1", (3,) * 60, (0.45, 0.07, 0.48), 40, icc=0.1),
)


def simulate(d: Design, rng: np.random.Generator):
    sizes = np.array(d.sizes)
    task = np.repeat(np.arange(len(sizes)), sizes)
    rep = np.concatenate([np.arange(1, s + 1) for s in sizes])
    sigma = np.sqrt(d.icc / (1 - d.icc))
    base = rng.normal(0, sigma, len(sizes))[task] + rng.normal(0, 1, len(task))
    scale = np.sqrt(1 + sigma**2 + d.noise**2)
    cuts = scale * sps.norm.ppf([d.probs[2], d.probs[2] + d.probs[1]])
    human = np.digitize(base + d.noise * rng.normal(0, 1, len(task)), cuts)
    judged = np.digitize(base + d.noise * rng.normal(0, 1, len(task)) + d.shift, cuts)
    frame = pd.DataFrame(
        {"task_id": task, "replicate": rep, "judge": "j", "rubric": "r", "status": "ok",
         "outcome": OUT[judged]}
    )  # fmt: skip
    pick = rng.choice(len(task), size=d.n_labels, replace=False)
    labels = pd.DataFrame(
        {"task_id": task[pick], "replicate": rep[pick], "labeler": "ann",
         "outcome": OUT[human[pick]], "sample_seed": 0, "frame_sha256": "x"}
    )  # fmt: skip
    return frame, labels


def draws(d: Design, n_evals: int, n_resamples: int, rng: np.random.Generator) -> dict:
    """Estimates, bootstrap SEs (win, tie, loss, net, score), labelled counts and C."""
    est = np.zeros((n_evals, 5))
    se = np.zeros((n_evals, 5))
    counts = np.zeros((n_evals, 3))
    for e in range(n_evals):  # ppi_win_rates is the API, called as a user calls it
        frame, labels = simulate(d, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EvalstatsWarning)
            res = ppi_win_rates(frame, labels, judge="j", n_resamples=n_resamples, rng=rng)
        est[e], se[e] = res["estimate"].to_numpy(), res["se"].to_numpy()
        dg = res.diagnostics.iloc[0]
        counts[e] = [dg["n_labelled_win"], dg["n_labelled_tie"], dg["n_labelled_loss"]]
    return {"est": est, "se": se, "counts": counts, "n": d.n_labels, "c": len(d.sizes)}


def _wilson(theta, se, crit):
    with np.errstate(invalid="ignore", divide="ignore"):
        n = theta * (1 - theta) / se**2
        den = 1 + crit**2 / n
        centre = (theta + crit**2 / (2 * n)) / den
        half = crit * np.sqrt(theta * (1 - theta) / n + crit**2 / (4 * n**2)) / den
    return centre - half, centre + half


def _logit(theta, se, crit):
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        lg = np.log(theta / (1 - theta))
        s = se / (theta * (1 - theta))
        return 1 / (1 + np.exp(-(lg - crit * s))), 1 / (1 + np.exp(-(lg + crit * s)))


def candidate(r: dict, shape: str, bound: str, k: int, confidence: float = 0.95):
    """(evals, 5) low and high ends of one candidate."""
    est, c = r["est"], r["c"]
    se = r["se"] * np.sqrt(c / (c - 1))
    crit = sps.t.ppf(0.5 + confidence / 2, c - 1)
    # Rates on [0, 1]: the three rates and the score; net win from the score scale.
    theta = est.copy()
    theta[:, 3] = (1 + est[:, 3]) / 2
    s = se.copy()
    s[:, 3] = se[:, 3] / 2
    lo, hi = theta - crit * s, theta + crit * s
    flat = ~(s > 1e-12) | ~((theta > 0) & (theta < 1))
    if shape != "t":
        # Undefined at SE 0 or an estimate beyond (0, 1): the clipped t ends, then joined.
        w_lo, w_hi = (_wilson if shape == "wilson" else _logit)(np.clip(theta, 0, 1), s, crit)
        lo, hi = np.where(flat, lo, w_lo), np.where(flat, hi, w_hi)
    lo, hi = np.clip(lo, 0, 1), np.clip(hi, 0, 1)
    lo[:, 3], hi[:, 3] = 2 * lo[:, 3] - 1, 2 * hi[:, 3] - 1
    n, x = r["n"], r["counts"]
    rare = np.minimum(x, n - x) < k
    joined = np.column_stack([rare, rare[:, 0] | rare[:, 2], rare[:, 0] | rare[:, 2]]) | flat
    alpha = 1 - confidence
    b_lo, b_hi = proportion_bounds(x, n, alpha, bound)
    w_lo, w_hi = proportion_bounds(x[:, [0, 2]], n, alpha / 2, bound)
    net_lo, net_hi = w_lo[:, 0] - w_hi[:, 1], w_hi[:, 0] - w_lo[:, 1]
    ex_lo = np.column_stack([b_lo, net_lo, (1 + net_lo) / 2])
    ex_hi = np.column_stack([b_hi, net_hi, (1 + net_hi) / 2])
    lo = np.where(joined, np.fmin(np.nan_to_num(lo, nan=np.inf), ex_lo), lo)
    hi = np.where(joined, np.fmax(np.nan_to_num(hi, nan=-np.inf), ex_hi), hi)
    return lo, hi, joined


CANDIDATES = (
    ("t", "clopper_pearson", 1),
    ("wilson", "clopper_pearson", 1),
    ("wilson", "mid_p", 1),
    ("wilson", "mid_p", 2),
    ("wilson", "mid_p", 3),
    ("wilson", "wilson", 2),
    ("wilson", "wilson", 3),
    ("wilson", "clopper_pearson", 3),
    ("logit", "mid_p", 1),
    ("logit", "mid_p", 2),
)
SHORT = {"clopper_pearson": "cp", "mid_p": "midp", "wilson": "wils"}


def main() -> None:
    n_evals = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    n_res = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    wanted = sys.argv[3].lower().split(",") if len(sys.argv) > 3 else [""]
    pd.set_option("display.width", 200)
    seeds = np.random.SeedSequence(20261203).spawn(len(DESIGNS))
    for d, seed in zip(DESIGNS, seeds, strict=True):
        if not any(w in d.name.lower() for w in wanted):
            continue
        start = time.perf_counter()
        r = draws(d, n_evals, n_res, np.random.default_rng(seed))
        p = np.array(d.probs)
        truth = np.array([*p, p[0] - p[2], p[0] + p[1] / 2])
        rows, widths = {}, {}
        for shape, bound, k in CANDIDATES:
            lo, hi, joined = candidate(r, shape, bound, k)
            key = f"{shape}+{SHORT[bound]}<{k}"
            rows[key] = [*((lo <= truth) & (truth <= hi)).mean(axis=0), joined[:, :3].mean()]
            widths[key] = (hi - lo).mean(axis=0)
        mean_x = r["counts"].mean(axis=0)
        print(
            f"\n{d.name}: {n_evals} evals, B = {n_res}, {time.perf_counter() - start:.0f} s; "
            f"mean labelled win/tie/loss {mean_x.round(1).tolist()}; "
            f"MC SE at 0.95: {np.sqrt(0.95 * 0.05 / n_evals):.4f}"
        )
        tab = pd.DataFrame(rows, index=[*RATE_NAMES, "joined"]).T
        wid = pd.DataFrame(widths, index=[f"w_{n}" for n in RATE_NAMES]).T
        print(pd.concat([tab, wid[["w_win_rate", "w_net_win"]]], axis=1).round(3).to_string())


if __name__ == "__main__":
    main()

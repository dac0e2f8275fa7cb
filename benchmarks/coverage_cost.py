"""Coverage of candidate intervals for the two cost ratios at few tasks with skewed costs.

Each simulated evaluation has ``tasks x replicates`` pairs. Task size ``s_t ~ N(mu, sd^2)`` on
the log scale (``sd`` = the log-sd of task size, 1.0-1.5; the ``gamma`` family instead draws
a gamma task size with the same log-sd, to check the lognormal candidate off its own model),
the task's log saving is ``b_t = a + slope * (s_t - mu) + u_t`` (``slope`` != 0: savings correlated with task size) and a
pair's tokens are ``without = exp(s_t + e0)``, ``with = exp(s_t + b_t + e1)``. The two estimands
are known in closed form (lognormal or gamma moments; for lognormal sizes):

* ratio of means ``E[with] / E[without] = exp(a + ((1 + slope)^2 sd^2 + sd_u^2 - sd^2) / 2)``,
  estimated by the ratio of totals;
* geometric mean of per-pair ratios ``exp(E[log with - log without]) = exp(a)``.

Candidates (all task-clustered, intervals built on the log scale unless said otherwise):

* ``bca``       cluster bootstrap BCa (the old default);
* ``cr1_t``     CR1 delta-method SE, t(C - 1);
* ``cr2_t``     CR2 (Bell-McCaffrey) delta-method SE, t(C - 1);
* ``cr2_bm``    CR2 SE with the Bell-McCaffrey df (the geometric mean's default);
* ``jack_t``    cluster jackknife SE of the log statistic, t(C - 1);
* ``boot_t``    studentized cluster bootstrap (CR1 SE in each resample), equal-tailed;
* ``fieller``   Fieller interval for the ratio of means, CR1 variances, t(C - 1)  (total only);
* ``fieller_bm`` / ``_bmmin`` / ``_bmavg`` Fieller with the Bell-McCaffrey df of the WITHOUT
  arm's leverages / the smaller of both arms' df / of the mean leverage;
* ``jbc_cr2_bm`` CR2 + BM around the cluster-jackknife bias-corrected log ratio;
* ``cox_logn``  lognormal (Cox-type) interval on the task totals,
  :func:`lognormal_ratio_interval` (below), t(C - 1) (total only);
* ``cox_bmavg`` the same with the Bell-McCaffrey df of the mean cost share
  ``(X_c / X + Y_c / Y) / 2`` (total only; the former default);
* ``gpq``       generalized pivotal interval for a bivariate lognormal ratio of means on the task
  totals, :func:`evalstats.stats.cost.lognormal_ratio_gpq` (Bebu & Mathew 2008; total only);
* ``gpq_hull``  ``gpq``, widened to ``cr2_bm`` where the plain ratio lies outside the ``gpq``
  95 % interval (the model's first check; the default before issue 23);
* ``default``   the package's default for the total: ``gpq_hull``, except ``cr2_bm`` where the
  runs' lognormal check (Shapiro-Wilk on the within-task log run costs, the package's
  ``_lognormal_check``, per evaluation) rejects at 5 %;
* ``check_cox`` / ``check_hull`` / ``check_boot_t`` the alternatives on a rejection: ``cox_logn``,
  the hull of ``gpq`` and ``cr2_bm``, ``boot_t`` (``gpq_hull`` where the check passes).

``--outliers`` runs the designs of issue 23 instead: 6 or 8 tasks, a run of either arm ``factor``
times its cost with probability ``share`` (10 % x10, 10 % x30, 5 % x30, 20 % x10), and the same
designs without outliers for the check's level.

The last table gives, per design, the coverage of the defaults (total: ``default``; geometric
mean: ``cr2_bm``) and of the alternatives side by side, each with its Monte-Carlo SE
``sqrt(p (1 - p) / evaluations)``, flags every cell outside [0.93, 0.97], and gives the share of
evaluations where the lognormal check rejects. 2,000 evaluations (the default) take about a
minute on 2 cores, 4,000 about two.

Columns: coverage, the share of intervals wholly below / above the truth, the median width on
the log scale and the share of unbounded intervals (Fieller's, when the WITHOUT total is not
significantly above 0; they "cover" by being infinite).

Everything is vectorised over evaluations (and resamples, in chunks of evaluations).

Run: ``.venv/bin/python benchmarks/coverage_cost.py [--evals 2000] [--resamples 999] [--outliers]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import optimize, special
from scipy import stats as sps

from evalstats.stats.cost import (  # _lognormal_check: the default's own model check
    _lognormal_check,
    bm_df_from_leverage,
    gpq_interval,
    lognormal_ratio_gpq,
)


def lognormal_ratio_interval(
    x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre, SE and df of a lognormal (Cox-type) interval for ``log(E[x] / E[y])``.

    The cluster totals ``(log x_c, log y_c)`` are taken as bivariate normal, so with
    ``d = log x - log y`` and ``s = log x + log y``::

        log(E[x] / E[y]) = E[d] + (var(log x) - var(log y)) / 2 = E[d] + cov(d, s) / 2

    estimated by ``dbar + s_ds / 2`` with
    ``SE^2 = s_d^2 / C + (s_d^2 s_s^2 + s_ds^2) / (4 (C - 1))`` (the normal-theory variances of
    a mean and of a sample covariance, which are uncorrelated) and t(C - 1) quantiles. With
    ``y`` constant it is the modified Cox interval for a lognormal mean (Zhou & Gao 1997).
    Vectorised over leading axes. A candidate of this study (moved here from the package).

    Parameters
    ----------
    x, y : ndarray, shape (..., C)
        Positive per-cluster totals, C >= 2.

    Returns
    -------
    centre, se, df : ndarray, shape (...)
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    c = lx.shape[-1]
    d, s = lx - ly, lx + ly
    dm = d - d.mean(-1, keepdims=True)
    sm = s - s.mean(-1, keepdims=True)
    s_dd = (dm * dm).sum(-1) / (c - 1)
    s_ss = (sm * sm).sum(-1) / (c - 1)
    s_ds = (dm * sm).sum(-1) / (c - 1)
    centre = d.mean(-1) + s_ds / 2.0
    se = np.sqrt(s_dd / c + (s_dd * s_ss + s_ds**2) / (4.0 * (c - 1)))
    return centre, se, np.full(np.shape(centre), float(c - 1))


# (label, sd of log task size, slope of the log saving on log task size, family,
#  outlier runs (share, factor) or None, tasks or None for --tasks)
DESIGNS = tuple(
    (f"{family} size, log-sd {sd:.1f}, slope {slope:+.2f}", sd, slope, family, None, None)
    for family in ("lognormal", "gamma")
    for sd in (1.0, 1.5)
    for slope in (-0.3, -0.15, 0.0, 0.15, 0.3)
)
# Issue 23: outlier runs. A run of either arm is, independently with probability ``share``,
# ``factor`` times its cost (a run that loops or retries): both arms alike, so the ratio of
# means and the geometric mean keep their values without outliers.
OUTLIER_DESIGNS = tuple(
    (
        f"{tasks} tasks, log-sd {sd:.1f}, slope {slope:+.2f}, {share:.0%} of runs x{factor:g}",
        sd,
        slope,
        "lognormal",
        (share, factor),
        tasks,
    )  # fmt: skip
    for tasks, sd, slope, share, factor in (
        (8, 1.5, -0.15, 0.10, 10.0),
        (6, 1.5, -0.15, 0.10, 10.0),
        (8, 1.0, 0.15, 0.10, 10.0),
        (8, 1.5, -0.15, 0.10, 30.0),
        (6, 1.5, -0.15, 0.05, 30.0),
        (6, 1.5, -0.15, 0.20, 10.0),
        (8, 1.5, -0.15, 0.0, 1.0),  # no outliers: the check's level at these designs
        (6, 1.5, -0.15, 0.0, 1.0),
        (6, 1.0, 0.15, 0.0, 1.0),
    )
)
A_LOG = np.log(0.7)
SD_U = 0.25  # task-level spread of the saving beyond the size trend
SD_E = 0.4  # pair-level noise on each arm
MU = np.log(2000.0)


def _gamma_shape(sd):
    """Gamma shape whose log has standard deviation ``sd`` (trigamma(k) = sd^2)."""
    return optimize.brentq(lambda k: special.polygamma(1, k) - sd**2, 1e-3, 1e3)


def simulate(n_evals, n_tasks, n_reps, sd, slope, gen, family="lognormal", outliers=None):
    x, y, true_total, true_geo = _simulate(n_evals, n_tasks, n_reps, sd, slope, gen, family)
    if outliers is not None and outliers[0] > 0:
        share, factor = outliers
        x = x * np.where(gen.random(x.shape) < share, factor, 1.0)
        y = y * np.where(gen.random(y.shape) < share, factor, 1.0)
    return x, y, true_total, true_geo


def lognormal_checks(x, y):
    """The package's lognormal model check (``_lognormal_check``) per evaluation: rejected?"""
    e, c, r = x.shape
    g = np.repeat(np.arange(c), r)
    return np.array([_lognormal_check(x[i].ravel(), y[i].ravel(), g).rejected for i in range(e)])


def _simulate(n_evals, n_tasks, n_reps, sd, slope, gen, family="lognormal"):
    if family == "gamma":
        # Same log-sd, but a gamma task size: lighter right tail than the lognormal, so the
        # lognormal-based candidate is checked off its own model.
        k = _gamma_shape(sd)
        log_g = np.log(gen.gamma(k, size=(n_evals, n_tasks, 1))) - special.digamma(k)
        s = MU + log_g
        b = A_LOG + slope * (s - MU) + SD_U * gen.standard_normal((n_evals, n_tasks, 1))
        y = np.exp(s + SD_E * gen.standard_normal((n_evals, n_tasks, n_reps)))
        x = np.exp(s + b + SD_E * gen.standard_normal((n_evals, n_tasks, n_reps)))

        def log_moment(p):  # log E[exp(p * (log G - digamma(k)))]
            return special.gammaln(k + p) - special.gammaln(k) - p * special.digamma(k)

        true_total = A_LOG + SD_U**2 / 2 + log_moment(1 + slope) - log_moment(1.0)
        return x, y, true_total, A_LOG
    s = MU + sd * gen.standard_normal((n_evals, n_tasks, 1))
    b = A_LOG + slope * (s - MU) + SD_U * gen.standard_normal((n_evals, n_tasks, 1))
    y = np.exp(s + SD_E * gen.standard_normal((n_evals, n_tasks, n_reps)))
    x = np.exp(s + b + SD_E * gen.standard_normal((n_evals, n_tasks, n_reps)))
    true_total = A_LOG + ((1 + slope) ** 2 * sd**2 + SD_U**2 - sd**2) / 2
    return x, y, true_total, A_LOG


def _tq(conf, df):
    return sps.t.ppf(0.5 + conf / 2, df)


def total_intervals(xc, yc, conf, n_resamples, gen, check=None):
    """Log-scale intervals for log(sum x / sum y) from cluster totals (E, C).

    ``check``: the lognormal model check's rejections per evaluation (:func:`lognormal_checks`),
    for the default and its alternatives; None: never rejected (the designs before issue 23).
    """
    e, c = xc.shape
    X, Y = xc.sum(1, keepdims=True), yc.sum(1, keepdims=True)
    est = np.log(X[:, 0] / Y[:, 0])
    z = xc / X - yc / Y
    h = yc / Y
    out = {}
    se1 = np.sqrt(c / (c - 1) * (z**2).sum(1))
    se2 = np.sqrt((z**2 / (1 - h)).sum(1))
    q = _tq(conf, c - 1)
    df_bm = bm_df_from_leverage(h)
    out["cr1_t"] = (est - q * se1, est + q * se1)
    out["cr2_t"] = (est - q * se2, est + q * se2)
    qb = _tq(conf, df_bm)
    out["cr2_bm"] = (est - qb * se2, est + qb * se2)
    # jackknife
    Xj, Yj = X - xc, Y - yc
    tj = np.log(Xj / Yj)
    sej = np.sqrt((c - 1) / c * ((tj - tj.mean(1, keepdims=True)) ** 2).sum(1))
    out["jack_t"] = (est - q * sej, est + q * sej)
    # Fieller on the cluster totals (the classic ratio-of-means interval): R is inside when
    # (xbar - R ybar)^2 <= q^2 * var(x_c - R y_c) / C, with centred (co)variances.
    xm, ym = xc - xc.mean(1, keepdims=True), yc - yc.mean(1, keepdims=True)
    df_min = np.minimum(df_bm, bm_df_from_leverage(xc / X))
    df_avg = bm_df_from_leverage((xc / X + yc / Y) / 2)
    for name, qq in (
        ("fieller", q),
        ("fieller_bm", qb),
        ("fieller_bmmin", _tq(conf, df_min)),
        ("fieller_bmavg", _tq(conf, df_avg)),
    ):
        sxx, syy, sxy = (xm * xm).sum(1), (ym * ym).sum(1), (xm * ym).sum(1)
        k = qq**2 * c / (c - 1)  # on totals: Var(X - R Y) = C/(C-1) * sum (centred)^2
        A = Y[:, 0] ** 2 - k * syy
        B = -2 * (X[:, 0] * Y[:, 0] - k * sxy)
        Cq = X[:, 0] ** 2 - k * sxx
        disc = B**2 - 4 * A * Cq
        ok = (A > 0) & (disc >= 0)
        root = np.sqrt(np.where(ok, disc, 0))
        r1 = np.where(ok, (-B - root) / (2 * np.where(ok, A, 1)), np.nan)
        r2 = np.where(ok, (-B + root) / (2 * np.where(ok, A, 1)), np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            lo = np.where(ok & (r1 > 0), np.log(r1), -np.inf)
            hi = np.where(ok, np.log(r2), np.inf)
        out[name] = (lo, hi)
    # Lognormal (Cox-type) interval on the task totals: the package's implementation.
    centre, se_cox, df_cox = lognormal_ratio_interval(xc, yc)
    qc = _tq(conf, df_cox)
    out["cox_logn"] = (centre - qc * se_cox, centre + qc * se_cox)
    # The former default: the same interval on the Bell-McCaffrey df of the mean cost share.
    qd = _tq(conf, bm_df_from_leverage((xc / X + yc / Y) / 2))
    out["cox_bmavg"] = (centre - qd * se_cox, centre + qd * se_cox)
    # The generalized pivotal interval (Bebu & Mathew 2008), with the package's own draws, in chunks of evaluations (each row holds 8,192 draws).
    lo_g, hi_g = np.empty(e), np.empty(e)
    for s0 in range(0, e, 256):
        sl = slice(s0, min(e, s0 + 256))
        lo_g[sl], hi_g[sl] = gpq_interval(lognormal_ratio_gpq(xc[sl], yc[sl]), conf)
    out["gpq"] = (lo_g, hi_g)
    # The package's default: the pivot's interval, widened to the CR2 + BM one where the plain
    # ratio falls outside the pivot's 95 % interval (the lognormal model disagrees with the data).
    lo95, hi95 = (lo_g, hi_g) if conf == 0.95 else (np.nan, np.nan)
    rejected = (est < lo95) | (est > hi95)
    lo2, hi2 = out["cr2_bm"]
    out["gpq_hull"] = (
        np.where(rejected, np.minimum(lo_g, lo2), lo_g),
        np.where(rejected, np.maximum(hi_g, hi2), hi_g),
    )
    out["_hull_share"] = np.mean(rejected)
    # Issue 23: where the runs' lognormal check rejects, the default is CR2 + BM (check_cr2);
    # the alternatives measured beside it: the Cox interval, or the hull of the pivot's
    # interval with CR2 + BM, or the studentized bootstrap (filled in below).
    chk = np.zeros(e, bool) if check is None else np.asarray(check)
    out["_check_share"] = np.mean(chk)
    lo_d, hi_d = out["gpq_hull"]
    for name, (alo, ahi) in (
        ("default", (lo2, hi2)),
        ("check_cox", out["cox_logn"]),
        ("check_hull", (np.minimum(lo_g, lo2), np.maximum(hi_g, hi2))),
    ):
        out[name] = (np.where(chk, alo, lo_d), np.where(chk, ahi, hi_d))
    out["_cox_excl"] = np.mean(np.abs(est - centre) > qc * se_cox)
    # jackknife bias-corrected centre with the CR2 SE and BM df
    bc = c * est - (c - 1) * tj.mean(1)
    out["jbc_cr2_bm"] = (bc - qb * se2, bc + qb * se2)
    # bootstrap: BCa and studentized, in chunks of evaluations
    lo_b, hi_b = np.empty(e), np.empty(e)
    lo_t, hi_t = np.empty(e), np.empty(e)
    alpha = (1 - conf) / 2
    chunk = max(1, 4_000_000 // (n_resamples * c))
    for s0 in range(0, e, chunk):
        sl = slice(s0, min(e, s0 + chunk))
        m = sl.stop - sl.start
        idx = gen.integers(0, c, (m, n_resamples, c))
        xb = np.take_along_axis(xc[sl][:, None, :], idx, 2)
        yb = np.take_along_axis(yc[sl][:, None, :], idx, 2)
        Xb, Yb = xb.sum(2), yb.sum(2)
        tb = np.log(Xb / Yb)
        zb = xb / Xb[..., None] - yb / Yb[..., None]
        seb = np.sqrt(c / (c - 1) * (zb**2).sum(2))
        # BCa
        th = est[sl]
        p0 = (tb < th[:, None]).mean(1) + 0.5 * (tb == th[:, None]).mean(1)
        z0 = special.ndtri(np.clip(p0, 1 / n_resamples, 1 - 1 / n_resamples))
        d = tj[sl].mean(1, keepdims=True) - tj[sl]
        acc = (d**3).sum(1) / (6 * ((d**2).sum(1)) ** 1.5)
        zl, zh = special.ndtri(alpha), special.ndtri(1 - alpha)
        a1 = special.ndtr(z0 + (z0 + zl) / (1 - acc * (z0 + zl)))
        a2 = special.ndtr(z0 + (z0 + zh) / (1 - acc * (z0 + zh)))
        srt = np.sort(tb, 1)
        k1 = np.clip((a1 * (n_resamples - 1)).round().astype(int), 0, n_resamples - 1)
        k2 = np.clip((a2 * (n_resamples - 1)).round().astype(int), 0, n_resamples - 1)
        lo_b[sl] = srt[np.arange(m), k1]
        hi_b[sl] = srt[np.arange(m), k2]
        # studentized
        with np.errstate(divide="ignore", invalid="ignore"):
            tstat = (tb - th[:, None]) / seb
        tstat = np.where(np.isfinite(tstat), tstat, np.nan)
        qlo = np.nanquantile(tstat, alpha, axis=1)
        qhi = np.nanquantile(tstat, 1 - alpha, axis=1)
        lo_t[sl] = th - qhi * se1[sl]
        hi_t[sl] = th - qlo * se1[sl]
    out["bca"] = (lo_b, hi_b)
    out["boot_t"] = (lo_t, hi_t)
    out["check_boot_t"] = (np.where(chk, lo_t, lo_d), np.where(chk, hi_t, hi_d))
    return est, out


def geomean_intervals(lr, conf, n_resamples, gen):
    """Log-scale intervals for the mean log ratio; lr is (E, C, R) (balanced design)."""
    e, c, r = lr.shape
    sc = lr.sum(2)
    n = c * r
    est = sc.sum(1) / n
    resid = sc - r * est[:, None]
    h = np.full((e, c), r / n)
    se1 = np.sqrt(c / (c - 1) * (resid**2).sum(1)) / n
    se2 = np.sqrt((resid**2 / (1 - h)).sum(1)) / n
    q = _tq(conf, c - 1)
    out = {"cr1_t": (est - q * se1, est + q * se1), "cr2_t": (est - q * se2, est + q * se2)}
    qb = _tq(conf, bm_df_from_leverage(h))
    out["cr2_bm"] = (est - qb * se2, est + qb * se2)
    tj = (sc.sum(1, keepdims=True) - sc) / (n - r)
    sej = np.sqrt((c - 1) / c * ((tj - tj.mean(1, keepdims=True)) ** 2).sum(1))
    out["jack_t"] = (est - q * sej, est + q * sej)
    lo_b, hi_b = np.empty(e), np.empty(e)
    lo_t, hi_t = np.empty(e), np.empty(e)
    alpha = (1 - conf) / 2
    chunk = max(1, 4_000_000 // (n_resamples * c))
    cm = sc / r  # cluster means (balanced)
    for s0 in range(0, e, chunk):
        sl = slice(s0, min(e, s0 + chunk))
        m = sl.stop - sl.start
        idx = gen.integers(0, c, (m, n_resamples, c))
        mb = np.take_along_axis(cm[sl][:, None, :], idx, 2)
        tb = mb.mean(2)
        seb = np.sqrt(c / (c - 1) * ((mb - tb[..., None]) ** 2).sum(2)) / c
        th = est[sl]
        p0 = (tb < th[:, None]).mean(1) + 0.5 * (tb == th[:, None]).mean(1)
        z0 = special.ndtri(np.clip(p0, 1 / n_resamples, 1 - 1 / n_resamples))
        d = tj[sl].mean(1, keepdims=True) - tj[sl]
        acc = (d**3).sum(1) / (6 * ((d**2).sum(1)) ** 1.5)
        zl, zh = special.ndtri(alpha), special.ndtri(1 - alpha)
        a1 = special.ndtr(z0 + (z0 + zl) / (1 - acc * (z0 + zl)))
        a2 = special.ndtr(z0 + (z0 + zh) / (1 - acc * (z0 + zh)))
        srt = np.sort(tb, 1)
        k1 = np.clip((a1 * (n_resamples - 1)).round().astype(int), 0, n_resamples - 1)
        k2 = np.clip((a2 * (n_resamples - 1)).round().astype(int), 0, n_resamples - 1)
        lo_b[sl] = srt[np.arange(m), k1]
        hi_b[sl] = srt[np.arange(m), k2]
        with np.errstate(divide="ignore", invalid="ignore"):
            tstat = (tb - th[:, None]) / seb
        tstat = np.where(np.isfinite(tstat), tstat, np.nan)
        lo_t[sl] = th - np.nanquantile(tstat, 1 - alpha, axis=1) * se1[sl]
        hi_t[sl] = th - np.nanquantile(tstat, alpha, axis=1) * se1[sl]
    out["bca"] = (lo_b, hi_b)
    out["boot_t"] = (lo_t, hi_t)
    return est, out


CANDIDATES = (
    "bca", "cr1_t", "cr2_t", "cr2_bm", "jack_t", "boot_t", "fieller", "fieller_bm",
    "fieller_bmmin", "fieller_bmavg", "jbc_cr2_bm", "cox_logn", "cox_bmavg", "gpq",
    "gpq_hull", "check_cox", "check_hull", "check_boot_t", "default",
)  # fmt: skip
# The summary's columns: (heading, total or geomean, candidate).
SUMMARY = (
    ("total: default", "total", "default"),
    ("total: gpq_hull (old)", "total", "gpq_hull"),
    ("total: gpq alone", "total", "gpq"),
    ("total: check_cox", "total", "check_cox"),
    ("total: check_hull", "total", "check_hull"),
    ("total: check_boot_t", "total", "check_boot_t"),
    ("total: cr2_bm alone", "total", "cr2_bm"),
    ("geomean: cr2_bm", "geo", "cr2_bm"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--replicates", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument(
        "--outliers", action="store_true", help="the outlier-run designs (issue 23) instead"
    )
    args = parser.parse_args()
    gen = np.random.default_rng(args.seed)
    conf = 0.95
    t0 = time.perf_counter()
    mcse = np.sqrt(conf * (1 - conf) / args.evals)
    print(
        f"{args.tasks} tasks (unless the design says) x {args.replicates} replicates, "
        f"{args.evals} evaluations, {args.resamples} resamples, nominal {conf}, "
        f"Monte-Carlo SE at nominal {mcse:.4f}"
    )
    summary = []
    for label, sd, slope, family, outliers, tasks in OUTLIER_DESIGNS if args.outliers else DESIGNS:
        x, y, true_total, true_geo = simulate(
            args.evals, tasks or args.tasks, args.replicates, sd, slope, gen, family, outliers
        )
        check = lognormal_checks(x, y)
        est_t, tot = total_intervals(x.sum(2), y.sum(2), conf, args.resamples, gen, check)
        est_g, geo = geomean_intervals(np.log(x) - np.log(y), conf, args.resamples, gen)
        excl = tot.pop("_cox_excl")
        hull = tot.pop("_hull_share")
        fired = tot.pop("_check_share")
        print(f"\n== {label}: true log total ratio {true_total:+.3f}, log geomean {true_geo:+.3f}")
        print(
            f"   bias of the plain log total ratio {np.mean(est_t) - true_total:+.3f}; "
            f"cox_logn excludes the plain ratio in {excl:.3f} of evaluations; gpq_hull "
            f"widens the pivot's interval to CR2 in {hull:.3f}; the lognormal check "
            f"rejects in {fired:.3f}"
        )
        print(
            f"   {'candidate':<13} {'total cov':>9} {'below':>6} {'above':>6} {'med width':>9}"
            f" {'unbdd':>5}   {'geo cov':>9} {'below':>6} {'above':>6} {'med width':>9}"
            f" {'unbdd':>5}"
        )
        for name in CANDIDATES:
            cells = []
            for ivs, truth in ((tot, true_total), (geo, true_geo)):
                if name not in ivs:
                    cells.append(f"{'-':>9} {'':>6} {'':>6} {'':>9}")
                    continue
                lo, hi = ivs[name]
                cov = np.mean((lo <= truth) & (truth <= hi))
                below = np.mean(hi < truth)
                above = np.mean(lo > truth)
                width = np.nanmedian(np.where(np.isfinite(hi - lo), hi - lo, np.nan))
                inf = np.mean(~np.isfinite(hi - lo))
                cells.append(f"{cov:9.3f} {below:6.3f} {above:6.3f} {width:9.3f} {inf:5.3f}")
            print(f"   {name:<13} {cells[0]}   {cells[1]}")
        truths = {"total": (tot, true_total), "geo": (geo, true_geo)}
        cov = [
            float(
                np.mean((truths[k][0][n][0] <= truths[k][1]) & (truths[k][1] <= truths[k][0][n][1]))
            )
            for _, k, n in SUMMARY
        ]
        summary.append([label, *cov, fired])
    _print_summary(summary, args.evals)
    print(f"\n{time.perf_counter() - t0:.1f} s")


def _print_summary(summary, n_evals, band=(0.93, 0.97)) -> None:
    """Coverage per design and candidate, with the Monte-Carlo SE of each coverage, and the
    share of evaluations where the lognormal check rejects (its level where the design has
    no outliers, its power where it has)."""
    print(
        f"\n== coverage (Monte-Carlo SE) over {n_evals} evaluations per design; "
        f"'*' outside [{band[0]}, {band[1]}]; 'check': share the lognormal check rejects"
    )
    heads = [h for h, *_ in SUMMARY]
    width = max(len(row[0]) for row in summary)
    print(f"   {'design':<{width}}" + "".join(f" {h:>22}" for h in heads) + f" {'check':>6}")

    def cell(p):
        flag = " " if band[0] <= p <= band[1] else "*"
        return f"{p:.3f} ({np.sqrt(p * (1 - p) / n_evals):.4f}){flag}".rjust(22)

    for label, *cov, fired in summary:
        print(f"   {label:<{width}}" + "".join(f" {cell(p)}" for p in cov) + f" {fired:6.3f}")
    cols = np.array([row[1:] for row in summary])
    rng = [f"{lo:.3f}-{hi:.3f}" for lo, hi in zip(cols.min(0), cols.max(0), strict=True)]
    print(f"   {'range':<{width}}" + "".join(f" {r:>22}" for r in rng[:-1]) + f" {rng[-1]:>6}")


if __name__ == "__main__":
    main()

"""The paired cluster design's model for the power calculations (see :mod:`.power`).

Outcome probabilities, outcome ICC and design effect under an alternative, the power of the
cluster t-test, the vectorised solvers for the net win and the number of tasks, and the
argument checks shared by :mod:`.power_analytic` and :mod:`.power_simulation`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import stats

from .._validate import check_positive_int

IccScale = Literal["latent", "outcome"]
Alternative = Literal["two-sided", "larger"]

# Gauss-Legendre nodes on [0, 1] for the bivariate-normal integral below; 64 nodes give
# ~1e-13 absolute error for correlations up to 0.99 (checked against scipy in the tests).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(64)
_GL_X = 0.5 * (_GL_X + 1.0)
_GL_W = 0.5 * _GL_W


# --------------------------------------------------------------------------------------------
# numpy core
# --------------------------------------------------------------------------------------------


def _bvn_excess(h: np.ndarray, k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``Phi2(h, k; rho) - Phi(h) * Phi(k)`` for standard bivariate normals, ``0 <= rho < 1``.

    Uses ``dPhi2/drho = phi2(h, k; rho)`` integrated from 0 to ``rho`` with ``r = sin(theta)``,
    which removes the ``1 / sqrt(1 - r^2)`` singularity and leaves a smooth integrand; vectorised
    over broadcast inputs. Infinite ``h`` or ``k`` give 0 (a degenerate indicator).
    """
    h, k, rho = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (h, k, rho)))
    finite = np.isfinite(h) & np.isfinite(k)
    hf = np.where(finite, h, 0.0)[..., None]
    kf = np.where(finite, k, 0.0)[..., None]
    top = np.arcsin(rho)[..., None]
    theta = top * _GL_X
    s, c2 = np.sin(theta), np.cos(theta) ** 2
    integrand = np.exp(-(hf * hf - 2.0 * s * hf * kf + kf * kf) / (2.0 * c2))
    out = top[..., 0] * (integrand @ _GL_W) / (2.0 * np.pi)
    return np.where(finite, out, 0.0)


def _outcome_icc_core(icc_latent, p_tie, p_loss) -> np.ndarray:
    """ICC of ``y in {-1, 0, 1}`` implied by the simulator's latent probit model.

    With ``L_s = 1[z < s]``, ``y = 1 - L_a - L_b`` for thresholds ``a < b`` on the standardised
    latent scale, so ``Cov(y1, y2) = C(a, a) + C(b, b) + 2 C(a, b)`` where
    ``C(s, t) = Phi2(s, t; icc) - Phi(s) Phi(t)`` for two pairs of the same task.
    """
    icc_latent, p_tie, p_loss = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (icc_latent, p_tie, p_loss))
    )
    a = stats.norm.ppf(p_loss)  # -inf when p_loss == 0
    b = stats.norm.ppf(np.minimum(p_loss + p_tie, 1.0))  # +inf when p_win == 0
    cov = (
        _bvn_excess(a, a, icc_latent)
        + _bvn_excess(b, b, icc_latent)
        + 2.0 * _bvn_excess(a, b, icc_latent)
    )
    p_win = 1.0 - p_tie - p_loss
    var = p_win + p_loss - (p_win - p_loss) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, cov / var, 0.0)


def _design(net_win, n_replicates, icc, p_tie, icc_scale: IccScale):
    """Per-pair variance, outcome ICC and design effect under the alternative ``net_win``."""
    net_win = np.asarray(net_win, dtype=float)
    p_tie = np.asarray(p_tie, dtype=float)
    var_y = np.maximum(1.0 - p_tie - net_win**2, 0.0)
    if icc_scale == "latent":
        p_loss = np.clip((1.0 - p_tie - net_win) / 2.0, 0.0, 1.0)
        rho_y = _outcome_icc_core(icc, p_tie, p_loss)
    else:
        rho_y = np.asarray(icc, dtype=float)
    de = 1.0 + (np.asarray(n_replicates, dtype=float) - 1.0) * rho_y
    return var_y, rho_y, de


def _power_core(
    net_win, n_tasks, n_replicates, icc, p_tie, alpha, alternative: Alternative, icc_scale
) -> dict[str, np.ndarray]:
    """Power of the two-sided (or upper) cluster t-test; every argument broadcasts."""
    var_y, rho_y, de = _design(net_win, n_replicates, icc, p_tie, icc_scale)
    n_tasks = np.asarray(n_tasks, dtype=float)
    m = np.asarray(n_replicates, dtype=float)
    se = np.sqrt(var_y * de / (n_tasks * m))
    with np.errstate(divide="ignore", invalid="ignore"):
        nc = np.where(se > 0, np.asarray(net_win, dtype=float) / se, np.sign(net_win) * np.inf)
    df = n_tasks - 1.0
    alpha = np.asarray(alpha, dtype=float)
    # The power is scipy.stats' noncentral t, not statsmodels' TTestPower: TTestPower is
    # 1 - special.nctdtr, which is NaN far from the mean (nctdtr(19, 10.1, -2.09), or
    # 1000 tasks at net win 0.54 in the upper tail), where nct.sf is accurate. The lower
    # tail is written as sf(crit, df, -nc) for the same reason.
    if alternative == "two-sided":
        crit = stats.t.isf(alpha / 2.0, df)
        power = stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc)
    else:
        crit = stats.t.isf(alpha, df)
        power = stats.nct.sf(crit, df, nc)
    # nct is undefined at infinite noncentrality (no variance left): the test always rejects.
    if alternative == "two-sided":
        power = np.where(np.isinf(nc), 1.0, power)
    else:
        power = np.where(np.isinf(nc), (nc > 0).astype(float), power)
    return {
        "power": power,
        "var_y": var_y,
        "rho_y": rho_y,
        "design_effect": de,
        "se": se,
        "noncentrality": nc,
        "df": df,
        "critical_value": crit,
    }


def _solve_net_win(n_tasks, n_replicates, icc, p_tie, alpha, target, alternative, icc_scale):
    """Smallest positive net win reaching ``target`` power (bisection, vectorised); NaN if none."""
    shape = np.broadcast_shapes(
        *(np.shape(a) for a in (n_tasks, n_replicates, icc, p_tie, alpha, target))
    )
    top = np.broadcast_to(1.0 - np.asarray(p_tie, dtype=float), shape).copy()

    def pw(d):
        return _power_core(d, n_tasks, n_replicates, icc, p_tie, alpha, alternative, icc_scale)[
            "power"
        ]

    reachable = pw(top) >= target
    lo = np.zeros(shape)
    hi = top.copy()
    # Power is increasing in the net win (the mean grows while Var(y) and the design effect
    # shrink), so bisection brackets the root; 60 halvings reach double precision.
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = pw(mid) >= target
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(reachable, hi, np.nan)


def _solve_tasks(net_win, n_replicates, icc, p_tie, alpha, target, alternative, icc_scale):
    """Smallest integer number of tasks (>= 2) with power >= ``target`` (vectorised)."""

    def core(c):
        return _power_core(net_win, c, n_replicates, icc, p_tie, alpha, alternative, icc_scale)

    shape = np.broadcast_shapes(
        *(np.shape(a) for a in (net_win, n_replicates, icc, p_tie, alpha, target))
    )
    # Normal-approximation starting bracket, doubled until it holds everywhere; power is
    # increasing in the number of tasks, so an integer bisection then finds the smallest one.
    c2 = core(2.0)
    z_a = stats.norm.isf(np.asarray(alpha) / (2.0 if alternative == "two-sided" else 1.0))
    z_b = stats.norm.ppf(target)
    per_task_var = c2["var_y"] * c2["design_effect"] / np.asarray(n_replicates, dtype=float)
    with np.errstate(divide="ignore"):
        approx = (z_a + z_b) ** 2 * per_task_var / np.asarray(net_win, dtype=float) ** 2
    hi = np.broadcast_to(np.ceil(np.minimum(approx, 1e9)) * 2.0 + 10.0, shape).copy()
    lo = np.ones(shape)  # invariant: lo fails (one task has no t-test), hi succeeds
    for _ in range(40):
        bad = core(hi)["power"] < target
        if not bad.any():
            break
        lo = np.where(bad, hi, lo)
        hi = np.where(bad, hi * 2.0, hi)
    while True:
        gap = hi - lo > 1
        if not gap.any():
            return hi
        mid = np.where(gap, np.floor(0.5 * (lo + hi)), hi)
        ok = core(mid)["power"] >= target
        hi = np.where(gap & ok, mid, hi)
        lo = np.where(gap & ~ok, mid, lo)


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------


def _check_prob(name: str, value: float, *, lo_open: bool = False, hi_open: bool = True) -> float:
    v = float(value)
    ok = (v > 0 if lo_open else v >= 0) and (v < 1 if hi_open else v <= 1)
    if not ok or not np.isfinite(v):
        lo = "(0" if lo_open else "[0"
        hi = "1)" if hi_open else "1]"
        raise ValueError(f"{name} must be in {lo}, {hi}, got {value!r}")
    return v


def _check_common(n_replicates, icc, p_tie, alpha, icc_scale, alternative):
    if icc_scale not in ("latent", "outcome"):
        raise ValueError(f"icc_scale must be 'latent' or 'outcome', got {icc_scale!r}")
    if alternative not in ("two-sided", "larger"):
        raise ValueError(f"alternative must be 'two-sided' or 'larger', got {alternative!r}")
    return (
        check_positive_int(n_replicates, "n_replicates"),
        _check_prob("icc", icc),
        _check_prob("p_tie", p_tie),
        _check_prob("alpha", alpha, lo_open=True),
    )


def _check_net_win(net_win: float, p_tie: float) -> float:
    d = float(net_win)
    if not np.isfinite(d) or abs(d) > 1.0 - p_tie + 1e-12:
        raise ValueError(
            f"net_win must satisfy |net_win| <= 1 - p_tie = {1.0 - p_tie:g}, got {net_win!r}"
        )
    return d

"""Power, minimum detectable net win and tasks needed for the paired cluster design.

Analytic (the cluster t-test on the net win with a design effect; one design or a grid at
once) and simulated (the test :func:`evalstats.win_rates` reports, on the simulator's latent
probit model). The model and how close the approximation is: ``docs/methods.md``, "Power".
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from .._display import ResultDisplay
from .._validate import check_positive_int
from ..records import EvalstatsWarning
from .models import latent_thresholds
from .rates import DEFAULT_METHOD, WIN_RATE_METHODS, rate_arrays
from .resample import BOOTSTRAP_METHODS

__all__ = [
    "TEST_METHODS",
    "PowerResult",
    "mde_curve",
    "min_detectable_net_win",
    "outcome_icc",
    "power_curve",
    "power_net_win",
    "simulated_mde",
    "simulated_power",
    "simulated_tasks_needed",
    "solve_power",
    "tasks_needed",
    "tasks_needed_curve",
]

IccScale = Literal["latent", "outcome"]
Alternative = Literal["two-sided", "larger"]

# Gauss-Legendre nodes on [0, 1] for the bivariate-normal integral below; 64 nodes give
# ~1e-13 absolute error for correlations up to 0.99 (checked against scipy in the tests).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(64)
_GL_X = 0.5 * (_GL_X + 1.0)
_GL_W = 0.5 * _GL_W


# ---------------------------------------------------------------------------- numpy core


def _bvn_excess(h: np.ndarray, k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``Phi2(h, k; rho) - Phi(h) * Phi(k)`` for standard bivariate normals, ``0 <= rho < 1``."""
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
    """ICC of ``y in {-1, 0, 1}`` implied by the simulator's latent probit model."""
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


def _check_prob(name: str, value: float, *, lo_open: bool = False, hi_open: bool = True) -> float:
    v = float(value)
    ok = (v > 0 if lo_open else v >= 0) and (v < 1 if hi_open else v <= 1)
    if not ok or not np.isfinite(v):
        lo = "(0" if lo_open else "[0"
        hi = "1)" if hi_open else "1]"
        raise ValueError(f"{name} must be in {lo}, {hi}, got {value!r}")
    return v


# ------------------------------------------------------------------------------ analytic


@dataclass(frozen=True)
class PowerResult(ResultDisplay):
    """One power calculation for the paired cluster design.

    ``solved_for`` names the quantity computed (``"power"``, ``"net_win"``: the MDE, or
    ``"n_tasks"``: power then at least the target). ``net_win``, ``n_tasks``,
    ``n_replicates``, ``alpha``, ``alternative``, ``icc`` and ``icc_scale`` are the design;
    ``p_win``, ``p_tie``, ``p_loss`` the outcome probabilities under the alternative;
    ``icc_outcome`` the ICC of the score ``y`` in the design effect
    ``1 + (n_replicates - 1) icc_outcome``; ``sd_pair`` one pair's score SD; ``se`` the net
    win's SE; ``effective_pairs`` ``n_tasks n_replicates / design_effect``; ``df``,
    ``critical_value`` and ``noncentrality`` those of the t-test.
    """

    solved_for: str
    net_win: float
    n_tasks: int
    n_replicates: int
    power: float
    alpha: float
    alternative: str
    p_win: float
    p_tie: float
    p_loss: float
    icc: float
    icc_scale: str
    icc_outcome: float
    design_effect: float
    sd_pair: float
    se: float
    effective_pairs: float
    df: float
    critical_value: float
    noncentrality: float

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame with every field as a column."""
        return pd.DataFrame([asdict(self)])


def _result(solved_for: str, row: pd.Series, alpha, alternative, icc_scale) -> PowerResult:
    d, c, m, icc, p_tie = (row[k] for k in ("net_win", "n_tasks", "n_replicates", "icc", "p_tie"))
    core = _power_core(d, c, m, icc, p_tie, alpha, alternative, icc_scale)
    de = float(core["design_effect"])
    return PowerResult(
        solved_for=solved_for,
        net_win=float(d),
        n_tasks=int(c),
        n_replicates=int(m),
        power=float(core["power"]),
        alpha=float(alpha),
        alternative=alternative,
        p_win=(1.0 - p_tie + d) / 2.0,
        p_tie=float(p_tie),
        p_loss=(1.0 - p_tie - d) / 2.0,
        icc=float(icc),
        icc_scale=icc_scale,
        icc_outcome=float(core["rho_y"]),
        design_effect=de,
        sd_pair=float(np.sqrt(core["var_y"])),
        se=float(core["se"]),
        effective_pairs=c * m / de,
        df=float(core["df"]),
        critical_value=float(core["critical_value"]),
        noncentrality=float(core["noncentrality"]),
    )


def _design_grid(alpha, alternative, icc_scale, *, one=False, **axes) -> pd.DataFrame:
    """Every combination of the array-like ``axes``, one row each, checked (one row only
    when ``one``): the validation of every analytic and simulated function."""
    if icc_scale not in ("latent", "outcome"):
        raise ValueError(f"icc_scale must be 'latent' or 'outcome', got {icc_scale!r}")
    if alternative not in ("two-sided", "larger"):
        raise ValueError(f"alternative must be 'two-sided' or 'larger', got {alternative!r}")
    _check_prob("alpha", alpha, lo_open=True)
    arrays = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in axes.items()}
    mesh = np.meshgrid(*arrays.values(), indexing="ij")
    g = pd.DataFrame({k: m.ravel() for k, m in zip(arrays, mesh, strict=True)})
    if one and len(g) != 1:
        raise ValueError("one design at a time: use power_curve, mde_curve or tasks_needed_curve")

    def refuse(mask, what: str) -> None:
        if np.any(mask):
            raise ValueError(what)

    for name, low in (("n_tasks", 2), ("n_replicates", 1)):
        if name in g:
            refuse(~(g[name] >= low) | (g[name] % 1 != 0), f"{name} must be an integer >= {low}")
    for name in ("icc", "p_tie"):
        refuse(~g[name].between(0.0, 1.0, inclusive="left"), f"{name} must be in [0, 1)")
    if "net_win" in g:
        d = g["net_win"]
        refuse(~(d.abs() <= 1.0 - g["p_tie"] + 1e-12), "|net_win| must be <= 1 - p_tie")
    if "power" in g:
        refuse(~((g["power"] > alpha) & (g["power"] < 1.0)), "power must be in (alpha, 1)")
    return g


def _nonzero(g: pd.DataFrame, alternative: str) -> np.ndarray:
    """The net wins a tasks-needed search can reach: non-zero (positive one-sided)."""
    d = g["net_win"].to_numpy()
    if ((d <= 0) if alternative == "larger" else (d == 0)).any():
        raise ValueError("net_win must be non-zero (positive for 'larger')")
    return np.abs(d) if alternative == "two-sided" else d


def power_net_win(
    net_win: float,
    n_tasks: int,
    *,
    n_replicates: int = 1,
    icc: float = 0.0,
    p_tie: float = 0.0,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    icc_scale: IccScale = "latent",
) -> PowerResult:
    """Power of the cluster t-test on the net win for a given design and true net win.

    Parameters
    ----------
    net_win : float
        True ``P(win) - P(loss)``; ``|net_win| <= 1 - p_tie``.
    n_tasks : int
        Number of tasks (clusters), at least 2.
    n_replicates : int
        Judged pairs per task (replicates; both orders of a blind pair count as two).
    icc : float
        Intra-class correlation within a task, in ``[0, 1)``, on the scale ``icc_scale``.
    p_tie : float
        Tie probability under the alternative (held fixed as the net win varies).
    alpha : float
        Significance level of the test.
    alternative : {"two-sided", "larger"}
        Two-sided test, or one-sided for arm_a (WITH) better.
    icc_scale : {"latent", "outcome"}
        ``"latent"``: the simulator's latent probit ICC (converted to the outcome ICC at
        this alternative); ``"outcome"``: the ICC of the score ``y`` in {-1, 0, 1}.

    Returns
    -------
    PowerResult

    Examples
    --------
    >>> r = power_net_win(0.2, 50, n_replicates=3, icc=0.3, p_tie=0.3)
    >>> round(r.power, 3)
    0.683
    """
    g = _design_grid(alpha, alternative, icc_scale, one=True, net_win=net_win, n_tasks=n_tasks,
                     n_replicates=n_replicates, icc=icc, p_tie=p_tie)  # fmt: skip
    return _result("power", g.iloc[0], alpha, alternative, icc_scale)


def min_detectable_net_win(
    n_tasks: int,
    *,
    n_replicates: int = 1,
    icc: float = 0.0,
    p_tie: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    icc_scale: IccScale = "latent",
) -> PowerResult:
    """Smallest positive net win detected with probability ``power`` by the cluster t-test.

    Parameters are those of :func:`power_net_win`; ``power`` is the target. Raises
    ``ValueError`` when even the largest possible net win (``1 - p_tie``) is not detectable.

    Returns
    -------
    PowerResult
        With ``solved_for="net_win"`` and ``net_win`` the minimum detectable effect.

    Examples
    --------
    >>> r = min_detectable_net_win(50, n_replicates=3, icc=0.3, p_tie=0.3)
    >>> round(r.net_win, 3), round(r.power, 3)
    (0.228, 0.8)
    """
    g = mde_curve(n_tasks, n_replicates=n_replicates, icc=icc, p_tie=p_tie, alpha=alpha,
                  power=power, alternative=alternative, icc_scale=icc_scale)  # fmt: skip
    if len(g) != 1:
        raise ValueError("one design at a time: use mde_curve")
    if not np.isfinite(g["net_win"].iloc[0]):
        raise ValueError(
            f"no net win up to 1 - p_tie = {1 - p_tie:g} reaches power {power:g} with "
            f"{n_tasks} tasks x {n_replicates} replicates"
        )
    return _result("net_win", g.iloc[0], alpha, alternative, icc_scale)


def tasks_needed(
    net_win: float,
    *,
    n_replicates: int = 1,
    icc: float = 0.0,
    p_tie: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    icc_scale: IccScale = "latent",
) -> PowerResult:
    """Smallest number of tasks for which the cluster t-test detects ``net_win`` with ``power``.

    Parameters are those of :func:`power_net_win`; ``power`` is the target.

    Returns
    -------
    PowerResult
        With ``solved_for="n_tasks"``; ``power`` is the achieved power (>= the target).

    Examples
    --------
    >>> tasks_needed(0.2, n_replicates=3, icc=0.3, p_tie=0.3).n_tasks
    66
    """
    g = tasks_needed_curve(net_win, n_replicates=n_replicates, icc=icc, p_tie=p_tie,
                           alpha=alpha, power=power, alternative=alternative,
                           icc_scale=icc_scale)  # fmt: skip
    if len(g) != 1:
        raise ValueError("one design at a time: use tasks_needed_curve")
    return _result("n_tasks", g.iloc[0], alpha, alternative, icc_scale)


def solve_power(
    *,
    net_win: float | None = None,
    n_tasks: int | None = None,
    power: float | None = None,
    n_replicates: int = 1,
    icc: float = 0.0,
    p_tie: float = 0.0,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    icc_scale: IccScale = "latent",
) -> PowerResult:
    """Solve for whichever of ``net_win``, ``n_tasks`` and ``power`` is ``None``.

    Like statsmodels' ``solve_power``: exactly one of the three must be left out; dispatches to
    :func:`power_net_win`, :func:`min_detectable_net_win` or :func:`tasks_needed`.

    Examples
    --------
    >>> solve_power(net_win=0.2, power=0.8, n_replicates=3, icc=0.3, p_tie=0.3).n_tasks
    66
    """
    given = {"net_win": net_win, "n_tasks": n_tasks, "power": power}
    missing = [k for k, v in given.items() if v is None]
    if len(missing) != 1:
        raise ValueError(
            f"exactly one of net_win, n_tasks, power must be None, got missing={missing}"
        )
    kw = dict(n_replicates=n_replicates, icc=icc, p_tie=p_tie, alpha=alpha,
              alternative=alternative, icc_scale=icc_scale)  # fmt: skip
    if missing[0] == "power":
        return power_net_win(net_win, n_tasks, **kw)
    if missing[0] == "net_win":
        return min_detectable_net_win(n_tasks, power=power, **kw)
    return tasks_needed(net_win, power=power, **kw)


def power_curve(
    net_win,
    n_tasks,
    *,
    n_replicates=1,
    icc=0.0,
    p_tie=0.0,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    icc_scale: IccScale = "latent",
) -> pd.DataFrame:
    """Power over a grid of designs (every combination of the array-like arguments).

    Returns
    -------
    DataFrame
        One row per combination: ``net_win, n_tasks, n_replicates, icc, p_tie, power,
        icc_outcome, design_effect, se``.

    Examples
    --------
    >>> power_curve([0.1, 0.2, 0.3], [30, 60], n_replicates=3, icc=0.3, p_tie=0.3).shape
    (6, 9)
    """
    g = _design_grid(alpha, alternative, icc_scale, net_win=net_win, n_tasks=n_tasks,
                     n_replicates=n_replicates, icc=icc, p_tie=p_tie)  # fmt: skip
    core = _power_core(*(g[k].to_numpy() for k in g.columns), alpha, alternative, icc_scale)
    return g.assign(
        n_tasks=g["n_tasks"].astype(int),
        n_replicates=g["n_replicates"].astype(int),
        power=core["power"],
        icc_outcome=core["rho_y"],
        design_effect=core["design_effect"],
        se=core["se"],
    )


def mde_curve(
    n_tasks,
    *,
    n_replicates=1,
    icc=0.0,
    p_tie=0.0,
    alpha: float = 0.05,
    power=0.8,
    alternative: Alternative = "two-sided",
    icc_scale: IccScale = "latent",
) -> pd.DataFrame:
    """Minimum detectable net win over a grid of designs (vectorised bisection).

    Returns
    -------
    DataFrame
        Columns ``n_tasks, n_replicates, icc, p_tie, power, net_win`` (NaN where no net win
        up to ``1 - p_tie`` reaches the power).

    Examples
    --------
    >>> mde_curve([20, 50, 100], n_replicates=[1, 3], icc=0.3, p_tie=0.3).shape
    (6, 6)
    """
    g = _design_grid(alpha, alternative, icc_scale, n_tasks=n_tasks, n_replicates=n_replicates,
                     icc=icc, p_tie=p_tie, power=power)  # fmt: skip
    d = _solve_net_win(*(g[k].to_numpy() for k in ("n_tasks", "n_replicates", "icc", "p_tie")),
                       alpha, g["power"].to_numpy(), alternative, icc_scale)  # fmt: skip
    return g.assign(
        n_tasks=g["n_tasks"].astype(int), n_replicates=g["n_replicates"].astype(int), net_win=d
    )


def tasks_needed_curve(
    net_win,
    *,
    n_replicates=1,
    icc=0.0,
    p_tie=0.0,
    alpha: float = 0.05,
    power=0.8,
    alternative: Alternative = "two-sided",
    icc_scale: IccScale = "latent",
) -> pd.DataFrame:
    """:func:`tasks_needed` over a grid of designs (every combination of the array-like
    arguments), in one vectorised integer bisection: the same numbers as one call each.
    """
    g = _design_grid(alpha, alternative, icc_scale, net_win=net_win, n_replicates=n_replicates,
                     icc=icc, p_tie=p_tie, power=power)  # fmt: skip
    d = _nonzero(g, alternative)
    n = _solve_tasks(d, *(g[k].to_numpy() for k in ("n_replicates", "icc", "p_tie")), alpha,
                     g["power"].to_numpy(), alternative, icc_scale)  # fmt: skip
    return g.assign(n_replicates=g["n_replicates"].astype(int), n_tasks=n.astype(int))


def outcome_icc(icc_latent: float, *, p_win: float, p_tie: float, p_loss: float) -> float:
    """ICC of the net-win score ``y`` implied by a latent-scale ICC (the simulator's model).

    Examples
    --------
    >>> round(outcome_icc(0.3, p_win=0.4, p_tie=0.3, p_loss=0.3), 4)
    0.2373
    """
    _check_prob("icc_latent", icc_latent)
    probs = np.array([p_win, p_tie, p_loss], dtype=float)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0, atol=1e-9):
        raise ValueError(f"p_win, p_tie, p_loss must be >= 0 and sum to 1, got {probs.tolist()}")
    return float(_outcome_icc_core(icc_latent, p_tie, p_loss))


# ----------------------------------------------------------------------------- simulated


#: Interval methods of :func:`evalstats.win_rates` that come with a net-win test.
TEST_METHODS = tuple(m for m in WIN_RATE_METHODS if m not in BOOTSTRAP_METHODS)


def _latent_draw(n_resamples, n_tasks, n_replicates, icc, gen):
    """Latent pair qualities of the simulator's probit model and their marginal scale."""
    sigma = np.sqrt(icc / (1.0 - icc))
    u = gen.standard_normal((n_resamples, n_tasks, 1)) * sigma
    latent = u + gen.standard_normal((n_resamples, n_tasks, n_replicates))
    return latent, float(np.sqrt(1.0 + sigma**2))


def _simulated_rejections(latent, scale, net_win, p_tie, alpha, alternative, method, n_tasks):
    """Which simulated evaluations the chosen net-win test rejects (first ``n_tasks`` tasks)."""
    p_loss = max((1.0 - p_tie - net_win) / 2.0, 0.0)
    lo, hi = latent_thresholds(p_tie, p_loss, scale)
    lat = latent[:, :n_tasks]
    wins = (lat >= hi).sum(axis=2)
    losses = (lat < lo).sum(axis=2)
    ties = lat.shape[2] - wins - losses
    n_resamples = lat.shape[0]
    gid = np.repeat(np.arange(n_resamples), n_tasks)
    # The two-sided test at 2 alpha rejects in the upper direction exactly when the
    # one-sided test at alpha does (its interval's lower end is the one-sided bound).
    level = alpha if alternative == "two-sided" else 2.0 * alpha
    # The closed-form tests invert their intervals exactly (p < level when the 1 - level
    # interval excludes 0), so the interval decides and the p-value's root search, most
    # of the cost, is skipped; the wild bootstrap's p-value is its own computation.
    by_interval = method != "wild_webb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalstatsWarning)
        r = rate_arrays(
            wins.ravel(),
            ties.ravel(),
            losses.ravel(),
            gid,
            n_resamples,
            method=method,
            confidence=1.0 - level,
            net_win_test=not by_interval,
        )
    if by_interval:
        reject = (r["low"][:, 3] > 0.0) | (r["high"][:, 3] < 0.0)
    else:
        reject = r["net_win_p"] < level
    if alternative == "larger":
        reject &= r["est"][:, 3] > 0
    return reject


def _check_method(method: str) -> str:
    if method not in TEST_METHODS:
        raise ValueError(f"method must be one of {TEST_METHODS}, got {method!r}")
    return method


def simulated_power(
    net_win: float,
    n_tasks: int,
    *,
    n_replicates: int = 1,
    icc: float = 0.0,
    p_tie: float = 0.0,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
    method: str = DEFAULT_METHOD,
    n_resamples: int = 4000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Monte-Carlo power of the net-win test that :func:`evalstats.win_rates` reports.

    Draws ``n_resamples`` evaluations from the latent probit model of
    :mod:`evalstats.stats.models` (latent ICC) and counts how often ``net_win_p``
    of the interval ``method`` (default: the default of :func:`evalstats.win_rates`, CR2
    with the Bell-McCaffrey df) is below ``alpha``. Vectorised over simulations: all
    evaluations are one call of :func:`evalstats.stats.rates.rate_arrays`.

    Returns
    -------
    DataFrame
        One row: ``net_win, n_tasks, n_replicates, icc, p_tie, alpha, power, mc_se, n_resamples,
        method``.

    Examples
    --------
    >>> r = simulated_power(0.3, 15, n_replicates=6, icc=0.3, p_tie=0.35, n_resamples=500, rng=0)
    >>> 0.5 < r["power"].item() < 0.95
    True
    """
    g = _design_grid(alpha, alternative, "latent", one=True, net_win=net_win, n_tasks=n_tasks,
                     n_replicates=n_replicates, icc=icc, p_tie=p_tie)  # fmt: skip
    net_win, n_tasks, n_replicates, icc, p_tie = g.iloc[0]
    n_tasks, n_replicates = int(n_tasks), int(n_replicates)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    method = _check_method(method)
    latent, scale = _latent_draw(
        n_resamples, n_tasks, n_replicates, icc, np.random.default_rng(rng)
    )
    reject = _simulated_rejections(
        latent, scale, net_win, p_tie, alpha, alternative, method, n_tasks
    )
    power = float(reject.mean())
    return pd.DataFrame(
        [
            {
                "net_win": net_win,
                "n_tasks": n_tasks,
                "n_replicates": n_replicates,
                "icc": icc,
                "p_tie": p_tie,
                "alpha": alpha,
                "power": power,
                "mc_se": float(np.sqrt(power * (1.0 - power) / n_resamples)),
                "n_resamples": n_resamples,
                "method": method,
            }
        ]
    )


def simulated_mde(
    n_tasks: int,
    *,
    n_replicates: int = 1,
    icc: float = 0.0,
    p_tie: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    method: str = DEFAULT_METHOD,
    n_resamples: int = 4000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Minimum detectable net win of the reported test, found by simulation.

    The smallest positive net win whose simulated power (as :func:`simulated_power`)
    reaches ``power``: one seeded draw of ``n_resamples`` evaluations is cut at the thresholds
    of each candidate net win (common random numbers), and a bisection over the net win
    finds where the rejection rate crosses the target. The analytic MDE of
    :func:`min_detectable_net_win` (the fast normal approximation) is given beside it.

    Returns
    -------
    DataFrame
        One row: ``n_tasks, n_replicates, icc, p_tie, alpha, power`` (target),
        ``net_win`` (simulated MDE; NaN when no net win up to ``1 - p_tie`` reaches it),
        ``power_simulated`` (at that net win), ``mc_se``, ``net_win_analytic``,
        ``power_simulated_at_analytic``, ``n_resamples``, ``method``.

    Examples
    --------
    >>> r = simulated_mde(15, n_replicates=3, icc=0.3, p_tie=0.3, n_resamples=1000, rng=0)
    >>> bool(r["net_win"].item() > r["net_win_analytic"].item())  # the analytic is optimistic
    True
    """
    g = _design_grid(alpha, alternative, "latent", one=True, n_tasks=n_tasks,
                     n_replicates=n_replicates, icc=icc, p_tie=p_tie, power=power)  # fmt: skip
    n_tasks, n_replicates, icc, p_tie, target = g.iloc[0]
    n_tasks, n_replicates = int(n_tasks), int(n_replicates)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    method = _check_method(method)
    latent, scale = _latent_draw(
        n_resamples, n_tasks, n_replicates, icc, np.random.default_rng(rng)
    )

    def pw(d: float) -> float:
        rej = _simulated_rejections(latent, scale, d, p_tie, alpha, alternative, method, n_tasks)
        return float(rej.mean())

    top = 1.0 - p_tie
    analytic = float(
        _solve_net_win(n_tasks, n_replicates, icc, p_tie, alpha, target, alternative, "latent")
    )
    lo, hi = 0.0, top
    reachable = pw(top) >= target
    # Halve to 0.001: below the Monte-Carlo error of the crossing (power's MC SE ~0.006
    # moves the MDE by ~0.005 at 15 tasks), and ~10 calls instead of 50.
    while reachable and hi - lo > 1e-3:
        mid = 0.5 * (lo + hi)
        if pw(mid) >= target:
            hi = mid
        else:
            lo = mid
    mde = hi if reachable else np.nan
    p_mde = pw(mde) if reachable else np.nan
    return pd.DataFrame(
        [
            {
                "n_tasks": n_tasks,
                "n_replicates": n_replicates,
                "icc": icc,
                "p_tie": p_tie,
                "alpha": alpha,
                "power": target,
                "net_win": mde,
                "power_simulated": p_mde,
                "mc_se": float(np.sqrt(target * (1.0 - target) / n_resamples)),
                "net_win_analytic": analytic,
                "power_simulated_at_analytic": pw(analytic) if np.isfinite(analytic) else np.nan,
                "n_resamples": n_resamples,
                "method": method,
            }
        ]
    )


def simulated_tasks_needed(
    net_win: float,
    *,
    n_replicates: int = 1,
    icc: float = 0.0,
    p_tie: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    method: str = DEFAULT_METHOD,
    n_resamples: int = 4000,
    max_tasks: int = 5000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Smallest number of tasks whose simulated power for ``net_win`` reaches ``power``.

    One seeded draw of ``n_resamples`` evaluations with the largest bracket of tasks; smaller
    designs are its first tasks (common random numbers), and an integer bisection finds
    the smallest one that reaches the target. The analytic :func:`tasks_needed` is given
    beside it.

    Returns
    -------
    DataFrame
        One row: ``net_win, n_replicates, icc, p_tie, alpha, power`` (target), ``n_tasks``
        (simulated), ``power_simulated``, ``mc_se``, ``n_tasks_analytic``,
        ``power_simulated_at_analytic``, ``n_resamples``, ``method``.

    Examples
    --------
    >>> r = simulated_tasks_needed(0.4, n_replicates=3, icc=0.3, p_tie=0.3, n_resamples=1000, rng=0)
    >>> bool(r["n_tasks"].item() >= r["n_tasks_analytic"].item())
    True
    """
    analytic = tasks_needed(
        net_win,
        n_replicates=n_replicates,
        icc=icc,
        p_tie=p_tie,
        alpha=alpha,
        power=power,
        alternative=alternative,
    )
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    max_tasks = check_positive_int(max_tasks, "max_tasks", minimum=2)
    method = _check_method(method)
    gen = np.random.default_rng(rng)
    target, n_r = float(power), analytic.n_replicates
    d = abs(net_win) if alternative == "two-sided" else net_win
    hi = min(max(2 * analytic.n_tasks + 10, 4), max_tasks)
    while True:
        latent, scale = _latent_draw(n_resamples, hi, n_r, analytic.icc, gen)

        def pw(c: int, latent=latent, scale=scale) -> float:
            rej = _simulated_rejections(
                latent, scale, d, analytic.p_tie, analytic.alpha, alternative, method, c
            )
            return float(rej.mean())

        if pw(hi) >= target or hi >= max_tasks:
            break
        hi = min(2 * hi, max_tasks)
    reachable = pw(hi) >= target
    lo = 1  # one task has no cluster-robust test
    while reachable and hi - lo > 1:
        mid = (lo + hi) // 2
        if pw(mid) >= target:
            hi = mid
        else:
            lo = mid
    c = hi if reachable else np.nan
    return pd.DataFrame(
        [
            {
                "net_win": float(net_win),
                "n_replicates": n_r,
                "icc": analytic.icc,
                "p_tie": analytic.p_tie,
                "alpha": analytic.alpha,
                "power": target,
                "n_tasks": c,
                "power_simulated": pw(int(c)) if reachable else np.nan,
                "mc_se": float(np.sqrt(target * (1.0 - target) / n_resamples)),
                "n_tasks_analytic": analytic.n_tasks,
                "power_simulated_at_analytic": pw(min(analytic.n_tasks, latent.shape[1])),
                "n_resamples": n_resamples,
                "method": method,
            }
        ]
    )

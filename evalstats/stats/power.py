"""Power, minimum detectable net win and tasks needed for the paired cluster design:
analytic (cluster t-test with a design effect) and simulated (the test of
:func:`evalstats.win_rates`). See docs/methods.md, section "Power".
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .._display import ResultDisplay
from .._validate import check_choice, check_n_resamples, check_positive_int, check_probability
from ..records import EvalstatsWarning
from .models import latent_thresholds
from .rates import DEFAULT_METHOD, WIN_RATE_METHODS, rate_arrays
from .resample import BOOTSTRAP_METHODS

__all__ = [
    "TEST_METHODS",
    "Design",
    "PowerResult",
    "mde_curve",
    "min_detectable_net_win",
    "outcome_icc",
    "power_curve",
    "power_net_win",
    "simulated_mde",
    "simulated_power",
    "simulated_tasks_needed",
    "tasks_needed",
    "tasks_needed_curve",
]

IccScale = Literal["latent", "outcome"]
Alternative = Literal["two-sided", "larger"]

# Gauss-Legendre nodes on [0, 1]: 64 give ~1e-13 absolute error up to rho = 0.99 (tested).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(64)
_GL_X = 0.5 * (_GL_X + 1.0)
_GL_W = 0.5 * _GL_W


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


def _power_core(
    net_win, n_tasks, n_replicates, icc, p_tie, alpha, alternative: Alternative, icc_scale
) -> dict[str, np.ndarray]:
    """Power of the two-sided (or upper) cluster t-test; every argument broadcasts."""
    net_win, p_tie = np.asarray(net_win, dtype=float), np.asarray(p_tie, dtype=float)
    var_y = np.maximum(1.0 - p_tie - net_win**2, 0.0)
    if icc_scale == "latent":
        rho_y = _outcome_icc_core(icc, p_tie, np.clip((1.0 - p_tie - net_win) / 2.0, 0.0, 1.0))
    else:
        rho_y = np.asarray(icc, dtype=float)
    m = np.asarray(n_replicates, dtype=float)
    de = 1.0 + (m - 1.0) * rho_y
    n_tasks = np.asarray(n_tasks, dtype=float)
    se = np.sqrt(var_y * de / (n_tasks * m))
    with np.errstate(divide="ignore", invalid="ignore"):
        nc = np.where(se > 0, net_win / se, np.sign(net_win) * np.inf)
    df = n_tasks - 1.0
    alpha = np.asarray(alpha, dtype=float)
    # scipy's nct.sf, not TTestPower's 1 - nctdtr (NaN far from the mean); lower tail likewise.
    two = alternative == "two-sided"
    crit = stats.t.isf(alpha / 2.0 if two else alpha, df)
    power = stats.nct.sf(crit, df, nc)
    if two:
        power = power + stats.nct.sf(crit, df, -nc)
    # nct is undefined at infinite noncentrality (no variance left): the test always rejects.
    power = np.where(np.isinf(nc), 1.0 if two else (nc > 0).astype(float), power)
    return {"power": power, "var_y": var_y, "icc_outcome": rho_y, "design_effect": de, "se": se,
            "noncentrality": nc}  # fmt: skip


def _solve_net_win(n_tasks, n_replicates, icc, p_tie, alpha, target, alternative, icc_scale):
    """Smallest positive net win reaching ``target`` power (bisection, vectorised); NaN if none."""
    shape = np.broadcast_shapes(*map(np.shape, (n_tasks, n_replicates, icc, p_tie, alpha, target)))
    top = np.broadcast_to(1.0 - np.asarray(p_tie, dtype=float), shape).copy()

    def pw(d):
        core = _power_core(d, n_tasks, n_replicates, icc, p_tie, alpha, alternative, icc_scale)
        return core["power"]

    reachable = pw(top) >= target
    lo, hi = np.zeros(shape), top.copy()
    # Power increases with the net win; 60 halvings reach double precision.
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

    shape = np.broadcast_shapes(*map(np.shape, (net_win, n_replicates, icc, p_tie, alpha, target)))
    # A normal-approximation bracket, doubled until it holds, then an integer bisection.
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


@dataclass(frozen=True)
class PowerResult(ResultDisplay):
    """One power calculation for the paired cluster design (``solved_for`` says what was solved).
    ``icc_outcome`` is the score's ICC in the design effect."""

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
    se: float
    noncentrality: float

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(self)])


@dataclass(frozen=True)
class Design:
    """The design parameters the power functions share (array-likes in the ``*_curve`` ones).

    Parameters
    ----------
    n_replicates : int
        Judged pairs per task (both orders of a blind pair count as two).
    icc : float
        Intra-class correlation within a task in ``[0, 1)``, on the scale ``icc_scale``.
    p_tie : float
        Tie probability under the alternative.
    alpha : float
        Significance level of the test.
    alternative : {"two-sided", "larger"}
        Two-sided, or one-sided for arm_a better.
    icc_scale : {"latent", "outcome"}
        The simulator's latent probit ICC (the only one the ``simulated_*`` functions take), or
        the ICC of the score ``y`` in {-1, 0, 1}.

    Examples
    --------
    >>> Design(n_replicates=3, icc=0.3, p_tie=0.3).alpha
    0.05
    """

    n_replicates: Any = 1
    icc: Any = 0.0
    p_tie: Any = 0.0
    alpha: float = 0.05
    alternative: Alternative = "two-sided"
    icc_scale: IccScale = "latent"


def _result(solved_for: str, row: pd.Series, design: Design) -> PowerResult:
    d, c, m, icc, p_tie = (row[k] for k in ("net_win", "n_tasks", "n_replicates", "icc", "p_tie"))
    core = _power_core(d, c, m, icc, p_tie, design.alpha, design.alternative, design.icc_scale)
    rates = ((1.0 - p_tie + d) / 2.0, float(p_tie), (1.0 - p_tie - d) / 2.0)  # win, tie, loss
    head = (float(d), int(c), int(m), float(core["power"]), float(design.alpha), design.alternative)
    tail = (float(core[k]) for k in ("icc_outcome", "design_effect", "se", "noncentrality"))
    return PowerResult(solved_for, *head, *rates, float(icc), design.icc_scale, *tail)


def _design_grid(design: Design, lead: dict, power=None) -> pd.DataFrame:
    """Every combination of ``lead``'s, the design's and ``power``'s array-likes, checked."""
    if not isinstance(design, Design):
        raise TypeError(f"design must be a Design, got {type(design).__name__}")
    check_choice(design.icc_scale, "icc_scale", ("latent", "outcome"))
    check_choice(design.alternative, "alternative", ("two-sided", "larger"))
    alpha = check_probability(design.alpha, "alpha", closed=False)
    axes = {**lead, "n_replicates": design.n_replicates, "icc": design.icc, "p_tie": design.p_tie}
    arrays = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in axes.items()}
    if power is not None:
        arrays["power"] = np.atleast_1d(np.asarray(power, dtype=float))
    mesh = np.meshgrid(*arrays.values(), indexing="ij")
    g = pd.DataFrame({k: m.ravel() for k, m in zip(arrays, mesh, strict=True)})
    for name, low in (("n_tasks", 2), ("n_replicates", 1)):
        if name in g and (~(g[name] >= low) | (g[name] % 1 != 0)).any():
            raise ValueError(f"{name} must be an integer >= {low}")
    for name in ("icc", "p_tie"):
        if (~g[name].between(0.0, 1.0, inclusive="left")).any():
            raise ValueError(f"{name} must be in [0, 1)")
    if "net_win" in g and (~(g["net_win"].abs() <= 1.0 - g["p_tie"] + 1e-12)).any():
        raise ValueError("|net_win| must be <= 1 - p_tie")
    if "power" in g and (~((g["power"] > alpha) & (g["power"] < 1.0))).any():
        raise ValueError("power must be in (alpha, 1)")
    return g


def _one(grid: pd.DataFrame, curve: str) -> pd.Series:
    if len(grid) != 1:
        raise ValueError(f"one design at a time: use {curve}")
    return grid.iloc[0]


def power_net_win(net_win: float, n_tasks: int, design: Design = Design()) -> PowerResult:
    """Power of the cluster t-test on the net win for a given design and true net win.

    Parameters
    ----------
    net_win : float
        True ``P(win) - P(loss)``; ``|net_win| <= 1 - p_tie``.
    n_tasks : int
        Number of tasks (clusters), at least 2.
    design : Design
        Replicates, ICC, tie probability and the test.

    Returns
    -------
    PowerResult

    Examples
    --------
    >>> r = power_net_win(0.2, 50, Design(n_replicates=3, icc=0.3, p_tie=0.3))
    >>> round(r.power, 3)
    0.683
    """
    return _result("power", _one(power_curve(net_win, n_tasks, design), "power_curve"), design)


def min_detectable_net_win(
    n_tasks: int, design: Design = Design(), *, power: float = 0.8
) -> PowerResult:
    """Smallest positive net win the cluster t-test detects with probability ``power``.

    Parameters are those of :func:`power_net_win`; ``power`` is the target.

    Returns
    -------
    PowerResult
        With ``solved_for="net_win"``; ``ValueError`` when no net win reaches ``power``.

    Examples
    --------
    >>> r = min_detectable_net_win(50, Design(n_replicates=3, icc=0.3, p_tie=0.3))
    >>> round(r.net_win, 3), round(r.power, 3)
    (0.228, 0.8)
    """
    row = _one(mde_curve(n_tasks, design, power=power), "mde_curve")
    if not np.isfinite(row["net_win"]):
        raise ValueError(
            f"no net win up to 1 - p_tie = {1 - design.p_tie:g} reaches power {power:g} with "
            f"{n_tasks} tasks x {design.n_replicates} replicates"
        )
    return _result("net_win", row, design)


def tasks_needed(net_win: float, design: Design = Design(), *, power: float = 0.8) -> PowerResult:
    """Smallest number of tasks for which the cluster t-test detects ``net_win`` with ``power``.

    Parameters are those of :func:`power_net_win`; ``power`` is the target.

    Returns
    -------
    PowerResult
        With ``solved_for="n_tasks"``; ``power`` is the achieved power (>= the target).

    Examples
    --------
    >>> tasks_needed(0.2, Design(n_replicates=3, icc=0.3, p_tie=0.3)).n_tasks
    66
    """
    row = _one(tasks_needed_curve(net_win, design, power=power), "tasks_needed_curve")
    return _result("n_tasks", row, design)


def power_curve(net_win, n_tasks, design: Design = Design()) -> pd.DataFrame:
    """Power over a grid of designs (every combination of the array-like arguments).

    Returns
    -------
    DataFrame
        One row per combination: ``net_win, n_tasks, n_replicates, icc, p_tie, power,
        icc_outcome, design_effect, se``.

    Examples
    --------
    >>> power_curve([0.1, 0.2, 0.3], [30, 60], Design(n_replicates=3, icc=0.3, p_tie=0.3)).shape
    (6, 9)
    """
    g = _design_grid(design, {"net_win": net_win, "n_tasks": n_tasks})
    core = _power_core(*g.to_numpy().T, design.alpha, design.alternative, design.icc_scale)
    return g.assign(
        n_tasks=g["n_tasks"].astype(int),
        n_replicates=g["n_replicates"].astype(int),
        **{k: core[k] for k in ("power", "icc_outcome", "design_effect", "se")},
    )


def mde_curve(n_tasks, design: Design = Design(), *, power=0.8) -> pd.DataFrame:
    """Minimum detectable net win over a grid of designs (vectorised bisection).

    Returns
    -------
    DataFrame
        Columns ``n_tasks, n_replicates, icc, p_tie, power, net_win`` (NaN where no net win
        up to ``1 - p_tie`` reaches the power).

    Examples
    --------
    >>> mde_curve([20, 50, 100], Design(n_replicates=[1, 3], icc=0.3, p_tie=0.3)).shape
    (6, 6)
    """
    g = _design_grid(design, {"n_tasks": n_tasks}, power)
    d = _solve_net_win(*g.to_numpy().T[:4], design.alpha, g["power"].to_numpy(),
                       design.alternative, design.icc_scale)  # fmt: skip
    return g.assign(
        n_tasks=g["n_tasks"].astype(int), n_replicates=g["n_replicates"].astype(int), net_win=d
    )


def tasks_needed_curve(net_win, design: Design = Design(), *, power=0.8) -> pd.DataFrame:
    """:func:`tasks_needed` over a grid of designs (every combination of the array-likes).

    Examples
    --------
    >>> tasks_needed_curve([0.2, 0.3], Design(n_replicates=3, icc=0.3, p_tie=0.3))["n_tasks"].tolist()
    [66, 28]
    """
    g = _design_grid(design, {"net_win": net_win}, power)
    d = g["net_win"].to_numpy()
    if ((d <= 0) if design.alternative == "larger" else (d == 0)).any():
        raise ValueError("net_win must be non-zero (positive for 'larger')")
    n = _solve_tasks(np.abs(d), *g.to_numpy().T[1:4], design.alpha, g["power"].to_numpy(),
                     design.alternative, design.icc_scale)  # fmt: skip
    return g.assign(n_replicates=g["n_replicates"].astype(int), n_tasks=n.astype(int))


def outcome_icc(icc_latent: float, *, p_win: float, p_tie: float, p_loss: float) -> float:
    """ICC of the net-win score ``y`` implied by a latent-scale ICC (the simulator's model).

    Examples
    --------
    >>> round(outcome_icc(0.3, p_win=0.4, p_tie=0.3, p_loss=0.3), 4)
    0.2373
    """
    if not 0.0 <= float(icc_latent) < 1.0:
        raise ValueError(f"icc_latent must be in [0, 1), got {icc_latent!r}")
    probs = np.array([p_win, p_tie, p_loss], dtype=float)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0, atol=1e-9):
        raise ValueError(f"p_win, p_tie, p_loss must be >= 0 and sum to 1, got {probs.tolist()}")
    return float(_outcome_icc_core(icc_latent, p_tie, p_loss))


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
    lo, hi = latent_thresholds(p_tie, max((1.0 - p_tie - net_win) / 2.0, 0.0), scale)
    lat = latent[:, :n_tasks]
    wins = (lat >= hi).sum(axis=2)
    losses = (lat < lo).sum(axis=2)
    n_resamples = lat.shape[0]
    # The two-sided test at 2 alpha rejects upwards exactly when the one-sided one at alpha does.
    level = alpha if alternative == "two-sided" else 2.0 * alpha
    # The closed-form tests invert their intervals exactly: the interval decides (no root search).
    by_interval = method != "wild_webb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalstatsWarning)
        r = rate_arrays(wins.ravel(), (lat.shape[2] - wins - losses).ravel(), losses.ravel(),
                        np.repeat(np.arange(n_resamples), n_tasks), n_resamples, method=method,
                        confidence=1.0 - level, net_win_test=not by_interval)  # fmt: skip
    if by_interval:
        reject = (r["low"][:, 3] > 0.0) | (r["high"][:, 3] < 0.0)
    else:
        reject = r["net_win_p"] < level
    if alternative == "larger":
        reject &= r["est"][:, 3] > 0
    return reject


def _simulation(design: Design, n_resamples: int, method: str) -> int:
    if isinstance(design, Design) and design.icc_scale != "latent":
        raise ValueError("the simulated functions take the latent ICC: icc_scale='latent'")
    check_choice(method, "method", TEST_METHODS)
    return check_n_resamples(n_resamples)


def _simulated_design(design, n_resamples, method, rng, lead, power=None) -> tuple:
    """(design dict, n_resamples, latent draw, scale) of one checked design."""
    n_resamples = _simulation(design, n_resamples, method)
    row = _one(_design_grid(design, lead, power), "the analytic curves")
    d = {k: int(v) if k in ("n_tasks", "n_replicates") else v for k, v in row.items()}
    rng = np.random.default_rng(rng)
    latent, scale = _latent_draw(n_resamples, d["n_tasks"], d["n_replicates"], d["icc"], rng)
    return d, n_resamples, latent, scale


def _smallest(reaches, lo, hi, step):
    """Bisection for the smallest value in ``(lo, hi]`` that ``reaches`` (``hi`` does)."""
    while hi - lo > step:
        mid = (lo + hi) // 2 if step == 1 else 0.5 * (lo + hi)
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def _one_row(head: dict, n_resamples: int, method: str, **tail) -> pd.DataFrame:
    """The simulated functions' row; ``mc_se`` is the Monte-Carlo SE at ``power``."""
    mc_se = float(np.sqrt(head["power"] * (1.0 - head["power"]) / n_resamples))
    return pd.DataFrame([{**head, "mc_se": mc_se, **tail, "n_resamples": n_resamples,
                          "method": method}])  # fmt: skip


def simulated_power(
    net_win: float,
    n_tasks: int,
    design: Design = Design(),
    *,
    method: str = DEFAULT_METHOD,
    n_resamples: int = 4000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Monte-Carlo power of the net-win test that :func:`evalstats.win_rates` reports.

    Parameters are those of :func:`power_net_win` (latent ICC), ``method`` (a
    :data:`TEST_METHODS`), ``n_resamples`` simulated evaluations and ``rng``.

    Returns
    -------
    DataFrame
        One row: the design, ``alpha, power, mc_se, n_resamples, method``.

    Examples
    --------
    >>> design = Design(n_replicates=6, icc=0.3, p_tie=0.35)
    >>> r = simulated_power(0.3, 15, design, n_resamples=500, rng=0)
    >>> 0.5 < r["power"].item() < 0.95
    True
    """
    d, n_resamples, latent, scale = _simulated_design(
        design, n_resamples, method, rng, {"net_win": net_win, "n_tasks": n_tasks}
    )
    alpha, alternative = design.alpha, design.alternative
    reject = _simulated_rejections(latent, scale, d["net_win"], d["p_tie"], alpha, alternative,
                                   method, d["n_tasks"])  # fmt: skip
    return _one_row({**d, "alpha": alpha, "power": float(reject.mean())}, n_resamples, method)


def simulated_mde(
    n_tasks: int,
    design: Design = Design(),
    *,
    power: float = 0.8,
    method: str = DEFAULT_METHOD,
    n_resamples: int = 4000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Minimum detectable net win of the reported test, found by simulation.
    Parameters as :func:`simulated_power`, ``power`` the target.

    Returns
    -------
    DataFrame
        One row: the design, ``power``, ``net_win`` (NaN when unreachable),
        ``power_simulated``, ``mc_se``, ``net_win_analytic``,
        ``power_simulated_at_analytic``, ``n_resamples``, ``method``.

    Examples
    --------
    >>> design = Design(n_replicates=3, icc=0.3, p_tie=0.3)
    >>> r = simulated_mde(15, design, n_resamples=1000, rng=0)
    >>> bool(r["net_win"].item() > r["net_win_analytic"].item())  # the analytic is optimistic
    True
    """
    d, n_resamples, latent, scale = _simulated_design(
        design, n_resamples, method, rng, {"n_tasks": n_tasks}, power
    )
    n_tasks, n_replicates, icc, p_tie, target = d.values()
    alpha, alternative = design.alpha, design.alternative

    def pw(d: float) -> float:
        rej = _simulated_rejections(latent, scale, d, p_tie, alpha, alternative, method, n_tasks)
        return float(rej.mean())

    analytic = float(
        _solve_net_win(n_tasks, n_replicates, icc, p_tie, alpha, target, alternative, "latent")
    )
    reachable = pw(1.0 - p_tie) >= target
    # Halve to 0.001: below the Monte-Carlo error of the crossing (~0.005 at 15 tasks).
    mde = _smallest(lambda d: pw(d) >= target, 0.0, 1.0 - p_tie, 1e-3) if reachable else np.nan
    row = {"n_tasks": n_tasks, "n_replicates": n_replicates, "icc": icc, "p_tie": p_tie,
              "alpha": alpha, "power": target, "net_win": mde,
              "power_simulated": pw(mde) if reachable else np.nan}  # fmt: skip
    at = pw(analytic) if np.isfinite(analytic) else np.nan
    return _one_row(row, n_resamples, method, net_win_analytic=analytic,
                    power_simulated_at_analytic=at)  # fmt: skip


def simulated_tasks_needed(
    net_win: float,
    design: Design = Design(),
    *,
    power: float = 0.8,
    method: str = DEFAULT_METHOD,
    n_resamples: int = 4000,
    max_tasks: int = 5000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Smallest number of tasks whose simulated power for ``net_win`` reaches ``power``.
    Parameters as :func:`simulated_power`.

    Returns
    -------
    DataFrame
        One row: the design, ``power``, ``n_tasks`` (NaN when unreachable),
        ``power_simulated``, ``mc_se``, ``n_tasks_analytic``,
        ``power_simulated_at_analytic``, ``n_resamples``, ``method``.

    Examples
    --------
    >>> design = Design(n_replicates=3, icc=0.3, p_tie=0.3)
    >>> r = simulated_tasks_needed(0.4, design, n_resamples=1000, rng=0)
    >>> bool(r["n_tasks"].item() >= r["n_tasks_analytic"].item())
    True
    """
    n_resamples = _simulation(design, n_resamples, method)
    a = tasks_needed(net_win, design, power=power)
    max_tasks = check_positive_int(max_tasks, "max_tasks", minimum=2)
    gen = np.random.default_rng(rng)
    alternative = design.alternative
    target, d = float(power), abs(net_win) if alternative == "two-sided" else net_win
    hi = min(max(2 * a.n_tasks + 10, 4), max_tasks)
    while True:
        latent, scale = _latent_draw(n_resamples, hi, a.n_replicates, a.icc, gen)

        def pw(c: int, latent=latent, scale=scale) -> float:
            rej = _simulated_rejections(latent, scale, d, a.p_tie, a.alpha, alternative,
                                        method, c)  # fmt: skip
            return float(rej.mean())

        if pw(hi) >= target or hi >= max_tasks:
            break
        hi = min(2 * hi, max_tasks)
    reachable = pw(hi) >= target
    # One task has no cluster-robust test: the bisection starts above it.
    c = _smallest(lambda c: pw(c) >= target, 1, hi, 1) if reachable else np.nan
    row = {"net_win": float(net_win), "n_replicates": a.n_replicates, "icc": a.icc,
              "p_tie": a.p_tie, "alpha": a.alpha, "power": target, "n_tasks": c,
              "power_simulated": pw(int(c)) if reachable else np.nan}  # fmt: skip
    at = pw(min(a.n_tasks, latent.shape[1]))
    return _one_row(row, n_resamples, method, n_tasks_analytic=a.n_tasks,
                    power_simulated_at_analytic=at)  # fmt: skip

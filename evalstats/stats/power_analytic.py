"""Analytic power, minimum detectable net win and tasks needed (the model: :mod:`.power`).

One design at a time (:func:`power_net_win`, :func:`min_detectable_net_win`,
:func:`tasks_needed`, :func:`solve_power`) or a grid at once (:func:`power_curve`,
:func:`mde_curve`, :func:`tasks_needed_curve`), all from the vectorised core in
:mod:`._power_model`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from .._display import ResultDisplay
from .._validate import check_positive_int
from ._power_model import (
    Alternative,
    IccScale,
    _check_common,
    _check_net_win,
    _check_prob,
    _outcome_icc_core,
    _power_core,
    _solve_net_win,
    _solve_tasks,
)

__all__ = [
    "PowerResult",
    "mde_curve",
    "min_detectable_net_win",
    "outcome_icc",
    "power_curve",
    "power_net_win",
    "solve_power",
    "tasks_needed",
    "tasks_needed_curve",
]

# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PowerResult(ResultDisplay):
    """One power calculation for the paired cluster design.

    Attributes
    ----------
    solved_for : str
        ``"power"``, ``"net_win"`` or ``"n_tasks"``: which quantity was computed.
    net_win : float
        Net win ``P(win) - P(loss)`` under the alternative (the MDE when solved for).
    n_tasks, n_replicates : int
        Tasks (clusters) and judged pairs per task.
    power : float
        Power of the cluster t-test at ``net_win`` (at least the target when solved for
        ``n_tasks``, since tasks are whole).
    alpha : float
        Significance level.
    alternative : str
        ``"two-sided"`` or ``"larger"``.
    p_win, p_tie, p_loss : float
        Outcome probabilities under the alternative.
    icc, icc_scale : float, str
        The ICC as given and its scale (``"latent"`` probit scale of the simulator, or
        ``"outcome"`` scale of ``y``).
    icc_outcome : float
        ICC of the net-win score ``y`` used in the design effect.
    design_effect : float
        ``1 + (n_replicates - 1) * icc_outcome``.
    sd_pair : float
        Standard deviation of one pair's score, ``sqrt(P(win) + P(loss) - net_win**2)``.
    se : float
        Standard error of the net win under the alternative.
    effective_pairs : float
        ``n_tasks * n_replicates / design_effect``.
    df, critical_value, noncentrality : float
        Degrees of freedom (``n_tasks - 1``), t critical value and noncentrality.
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


def _result(
    solved_for, net_win, n_tasks, n_replicates, icc, p_tie, alpha, alternative, icc_scale
) -> PowerResult:
    core = _power_core(net_win, n_tasks, n_replicates, icc, p_tie, alpha, alternative, icc_scale)
    de = float(core["design_effect"])
    return PowerResult(
        solved_for=solved_for,
        net_win=float(net_win),
        n_tasks=int(n_tasks),
        n_replicates=int(n_replicates),
        power=float(core["power"]),
        alpha=float(alpha),
        alternative=alternative,
        p_win=(1.0 - p_tie + net_win) / 2.0,
        p_tie=float(p_tie),
        p_loss=(1.0 - p_tie - net_win) / 2.0,
        icc=float(icc),
        icc_scale=icc_scale,
        icc_outcome=float(core["rho_y"]),
        design_effect=de,
        sd_pair=float(np.sqrt(core["var_y"])),
        se=float(core["se"]),
        effective_pairs=n_tasks * n_replicates / de,
        df=float(core["df"]),
        critical_value=float(core["critical_value"]),
        noncentrality=float(core["noncentrality"]),
    )


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
        Intra-class correlation within a task, in ``[0, 1)``, on the scale named by
        ``icc_scale``.
    p_tie : float
        Tie probability under the alternative (held fixed as the net win varies).
    alpha : float
        Significance level.
    alternative : {"two-sided", "larger"}
        Two-sided test, or one-sided for WITH better.
    icc_scale : {"latent", "outcome"}
        ``"latent"``: the ICC of the simulator's latent probit model (converted to the outcome
        ICC at this alternative); ``"outcome"``: the ICC of the score ``y`` in {-1, 0, 1}.

    Returns
    -------
    PowerResult

    Examples
    --------
    >>> from evalstats.stats.power import power_net_win
    >>> r = power_net_win(0.2, 50, n_replicates=3, icc=0.3, p_tie=0.3)
    >>> round(r.power, 3)
    0.683
    """
    n_replicates, icc, p_tie, alpha = _check_common(
        n_replicates, icc, p_tie, alpha, icc_scale, alternative
    )
    n_tasks = check_positive_int(n_tasks, "n_tasks", minimum=2)
    net_win = _check_net_win(net_win, p_tie)
    return _result(
        "power", net_win, n_tasks, n_replicates, icc, p_tie, alpha, alternative, icc_scale
    )


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
    >>> from evalstats.stats.power import min_detectable_net_win
    >>> r = min_detectable_net_win(50, n_replicates=3, icc=0.3, p_tie=0.3)
    >>> round(r.net_win, 3), round(r.power, 3)
    (0.228, 0.8)
    """
    n_replicates, icc, p_tie, alpha = _check_common(
        n_replicates, icc, p_tie, alpha, icc_scale, alternative
    )
    n_tasks = check_positive_int(n_tasks, "n_tasks", minimum=2)
    target = _check_prob("power", power, lo_open=True)
    d = float(
        _solve_net_win(n_tasks, n_replicates, icc, p_tie, alpha, target, alternative, icc_scale)
    )
    if not np.isfinite(d):
        raise ValueError(
            f"no net win up to 1 - p_tie = {1 - p_tie:g} reaches power {target:g} with "
            f"{n_tasks} tasks x {n_replicates} replicates"
        )
    return _result("net_win", d, n_tasks, n_replicates, icc, p_tie, alpha, alternative, icc_scale)


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
    >>> from evalstats.stats.power import tasks_needed
    >>> r = tasks_needed(0.2, n_replicates=3, icc=0.3, p_tie=0.3)
    >>> r.n_tasks
    66
    """
    n_replicates, icc, p_tie, alpha = _check_common(
        n_replicates, icc, p_tie, alpha, icc_scale, alternative
    )
    target = _check_prob("power", power, lo_open=True)
    net_win = _check_net_win(net_win, p_tie)
    if net_win <= 0 if alternative == "larger" else net_win == 0:
        raise ValueError(f"net_win must be non-zero (positive for 'larger'), got {net_win!r}")
    if target <= alpha:
        raise ValueError(f"power must exceed alpha, got power={target}, alpha={alpha}")
    n = int(
        _solve_tasks(
            abs(net_win) if alternative == "two-sided" else net_win,
            n_replicates,
            icc,
            p_tie,
            alpha,
            target,
            alternative,
            icc_scale,
        )
    )
    return _result("n_tasks", net_win, n, n_replicates, icc, p_tie, alpha, alternative, icc_scale)


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
    >>> from evalstats.stats.power import solve_power
    >>> solve_power(net_win=0.2, power=0.8, n_replicates=3, icc=0.3, p_tie=0.3).n_tasks
    66
    """
    missing = [
        k for k, v in (("net_win", net_win), ("n_tasks", n_tasks), ("power", power)) if v is None
    ]
    if len(missing) != 1:
        raise ValueError(
            f"exactly one of net_win, n_tasks, power must be None, got missing={missing}"
        )
    kw = dict(
        n_replicates=n_replicates,
        icc=icc,
        p_tie=p_tie,
        alpha=alpha,
        alternative=alternative,
        icc_scale=icc_scale,
    )
    if missing[0] == "power":
        return power_net_win(net_win, n_tasks, **kw)
    if missing[0] == "net_win":
        return min_detectable_net_win(n_tasks, power=power, **kw)
    return tasks_needed(net_win, power=power, **kw)


def _grid(**axes) -> pd.DataFrame:
    arrays = {k: np.atleast_1d(np.asarray(v, dtype=float)) for k, v in axes.items()}
    mesh = np.meshgrid(*arrays.values(), indexing="ij")
    return pd.DataFrame({k: m.ravel() for k, m in zip(arrays, mesh, strict=True)})


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

    Vectorised; one row per combination, for a figure of power against net win with one line
    per number of tasks (or any other axis).

    Returns
    -------
    DataFrame
        Columns ``net_win, n_tasks, n_replicates, icc, p_tie, power, icc_outcome,
        design_effect, se``.

    Examples
    --------
    >>> from evalstats.stats.power import power_curve
    >>> df = power_curve([0.1, 0.2, 0.3], [30, 60], n_replicates=3, icc=0.3, p_tie=0.3)
    >>> df.shape
    (6, 9)
    """
    _check_common(1, 0.0, 0.0, alpha, icc_scale, alternative)
    g = _grid(net_win=net_win, n_tasks=n_tasks, n_replicates=n_replicates, icc=icc, p_tie=p_tie)
    if (g["n_tasks"] < 2).any() or (g["n_replicates"] < 1).any():
        raise ValueError("n_tasks must be >= 2 and n_replicates >= 1")
    if ((g["icc"] < 0) | (g["icc"] >= 1) | (g["p_tie"] < 0) | (g["p_tie"] >= 1)).any():
        raise ValueError("icc and p_tie must be in [0, 1)")
    if (g["net_win"].abs() > 1 - g["p_tie"] + 1e-12).any():
        raise ValueError("|net_win| must be <= 1 - p_tie")
    core = _power_core(
        g["net_win"].to_numpy(),
        g["n_tasks"].to_numpy(),
        g["n_replicates"].to_numpy(),
        g["icc"].to_numpy(),
        g["p_tie"].to_numpy(),
        alpha,
        alternative,
        icc_scale,
    )
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
    >>> from evalstats.stats.power import mde_curve
    >>> df = mde_curve([20, 50, 100], n_replicates=[1, 3], icc=0.3, p_tie=0.3)
    >>> df.shape
    (6, 6)
    """
    _check_common(1, 0.0, 0.0, alpha, icc_scale, alternative)
    g = _grid(n_tasks=n_tasks, n_replicates=n_replicates, icc=icc, p_tie=p_tie, power=power)
    if (g["n_tasks"] < 2).any() or (g["n_replicates"] < 1).any():
        raise ValueError("n_tasks must be >= 2 and n_replicates >= 1")
    if ((g["icc"] < 0) | (g["icc"] >= 1) | (g["p_tie"] < 0) | (g["p_tie"] >= 1)).any():
        raise ValueError("icc and p_tie must be in [0, 1)")
    if ((g["power"] <= alpha) | (g["power"] >= 1)).any():
        raise ValueError("power must be in (alpha, 1)")
    d = _solve_net_win(
        g["n_tasks"].to_numpy(),
        g["n_replicates"].to_numpy(),
        g["icc"].to_numpy(),
        g["p_tie"].to_numpy(),
        alpha,
        g["power"].to_numpy(),
        alternative,
        icc_scale,
    )
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

    Returns
    -------
    DataFrame
        Columns ``net_win, n_replicates, icc, p_tie, power, n_tasks``.

    Examples
    --------
    >>> from evalstats.stats.power import tasks_needed_curve
    >>> df = tasks_needed_curve([0.1, 0.2], n_replicates=3, icc=[0.0, 0.3], p_tie=0.3)
    >>> df["n_tasks"].tolist()
    [183, 269, 46, 66]
    """
    _check_common(1, 0.0, 0.0, alpha, icc_scale, alternative)
    g = _grid(net_win=net_win, n_replicates=n_replicates, icc=icc, p_tie=p_tie, power=power)
    if (g["n_replicates"] < 1).any():
        raise ValueError("n_replicates must be >= 1")
    if ((g["icc"] < 0) | (g["icc"] >= 1) | (g["p_tie"] < 0) | (g["p_tie"] >= 1)).any():
        raise ValueError("icc and p_tie must be in [0, 1)")
    d = g["net_win"].to_numpy()
    if (np.abs(d) > 1 - g["p_tie"].to_numpy() + 1e-12).any():
        raise ValueError("|net_win| must be <= 1 - p_tie")
    if ((d <= 0) if alternative == "larger" else (d == 0)).any():
        raise ValueError("net_win must be non-zero (positive for 'larger')")
    if ((g["power"] <= alpha) | (g["power"] >= 1)).any():
        raise ValueError("power must be in (alpha, 1)")
    n = _solve_tasks(
        np.abs(d) if alternative == "two-sided" else d,
        g["n_replicates"].to_numpy(),
        g["icc"].to_numpy(),
        g["p_tie"].to_numpy(),
        alpha,
        g["power"].to_numpy(),
        alternative,
        icc_scale,
    )
    return g.assign(n_replicates=g["n_replicates"].astype(int), n_tasks=n.astype(int))


def outcome_icc(icc_latent: float, *, p_win: float, p_tie: float, p_loss: float) -> float:
    """ICC of the net-win score ``y`` implied by a latent-scale ICC (the simulator's model).

    Examples
    --------
    >>> from evalstats.stats.power import outcome_icc
    >>> round(outcome_icc(0.3, p_win=0.4, p_tie=0.3, p_loss=0.3), 4)
    0.2373
    """
    _check_prob("icc_latent", icc_latent)
    probs = np.array([p_win, p_tie, p_loss], dtype=float)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0, atol=1e-9):
        raise ValueError(f"p_win, p_tie, p_loss must be >= 0 and sum to 1, got {probs.tolist()}")
    return float(_outcome_icc_core(icc_latent, p_tie, p_loss))

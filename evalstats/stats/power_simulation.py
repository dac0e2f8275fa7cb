"""Monte-Carlo power of the net-win test :func:`evalstats.win_rates` reports.

The simulator's latent probit model (:mod:`.outcome_model`) drawn once per call and cut at
the thresholds of each alternative (common random numbers), so simulated power is monotone in
the net win and the minimum detectable effect and tasks needed can be bisected.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._validate import check_positive_int
from ..records import EvalstatsWarning
from ._power_model import Alternative, _check_common, _check_net_win, _check_prob, _solve_net_win
from .models import latent_thresholds
from .power_analytic import tasks_needed
from .rates import DEFAULT_METHOD, WIN_RATE_METHODS, rate_arrays
from .resample import BOOTSTRAP_METHODS

__all__ = ["TEST_METHODS", "simulated_mde", "simulated_power", "simulated_tasks_needed"]

#: Interval methods of :func:`evalstats.win_rates` that come with a net-win test.
TEST_METHODS = tuple(m for m in WIN_RATE_METHODS if m not in BOOTSTRAP_METHODS)


def _latent_draw(n_sims, n_tasks, n_replicates, icc, gen):
    """Latent pair qualities of the simulator's probit model and their marginal scale.

    Drawn once and cut at different thresholds for different net wins (common random
    numbers), so simulated power is monotone in the net win and a bisection converges.
    """
    sigma = np.sqrt(icc / (1.0 - icc))
    u = gen.standard_normal((n_sims, n_tasks, 1)) * sigma
    latent = u + gen.standard_normal((n_sims, n_tasks, n_replicates))
    return latent, float(np.sqrt(1.0 + sigma**2))


def _simulated_rejections(latent, scale, net_win, p_tie, alpha, alternative, method, n_tasks):
    """Which simulated evaluations the chosen net-win test rejects (first ``n_tasks`` tasks)."""
    p_loss = max((1.0 - p_tie - net_win) / 2.0, 0.0)
    lo, hi = latent_thresholds(p_tie, p_loss, scale)
    lat = latent[:, :n_tasks]
    wins = (lat >= hi).sum(axis=2)
    losses = (lat < lo).sum(axis=2)
    ties = lat.shape[2] - wins - losses
    n_sims = lat.shape[0]
    gid = np.repeat(np.arange(n_sims), n_tasks)
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
            n_sims,
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
    n_sims: int = 4000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Monte-Carlo power of the net-win test that :func:`evalstats.win_rates` reports.

    Draws ``n_sims`` evaluations from the latent probit model of
    :mod:`evalstats.stats.models` (latent ICC) and counts how often ``net_win_p``
    of the interval ``method`` (default: the default of :func:`evalstats.win_rates`, CR2
    with the Bell-McCaffrey df) is below ``alpha``. Vectorised over simulations: all
    evaluations are one call of :func:`evalstats.stats.rates.rate_arrays`.

    Returns
    -------
    DataFrame
        One row: ``net_win, n_tasks, n_replicates, icc, p_tie, alpha, power, mc_se, n_sims,
        method``.

    Examples
    --------
    >>> from evalstats.stats.power import simulated_power
    >>> r = simulated_power(0.3, 15, n_replicates=6, icc=0.3, p_tie=0.35, n_sims=500, rng=0)
    >>> 0.5 < r["power"].item() < 0.95
    True
    """
    n_replicates, icc, p_tie, alpha = _check_common(
        n_replicates, icc, p_tie, alpha, "latent", alternative
    )
    n_tasks = check_positive_int(n_tasks, "n_tasks", minimum=2)
    n_sims = check_positive_int(n_sims, "n_sims")
    net_win = _check_net_win(net_win, p_tie)
    method = _check_method(method)
    latent, scale = _latent_draw(n_sims, n_tasks, n_replicates, icc, np.random.default_rng(rng))
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
                "mc_se": float(np.sqrt(power * (1.0 - power) / n_sims)),
                "n_sims": n_sims,
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
    n_sims: int = 4000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Minimum detectable net win of the reported test, found by simulation.

    The smallest positive net win whose simulated power (as :func:`simulated_power`)
    reaches ``power``: one seeded draw of ``n_sims`` evaluations is cut at the thresholds
    of each candidate net win (common random numbers), and a bisection over the net win
    finds where the rejection rate crosses the target. The analytic MDE of
    :func:`min_detectable_net_win` (the fast normal approximation) is given beside it.

    Returns
    -------
    DataFrame
        One row: ``n_tasks, n_replicates, icc, p_tie, alpha, power`` (target),
        ``net_win`` (simulated MDE; NaN when no net win up to ``1 - p_tie`` reaches it),
        ``power_simulated`` (at that net win), ``mc_se``, ``net_win_analytic``,
        ``power_simulated_at_analytic``, ``n_sims``, ``method``.

    Examples
    --------
    >>> from evalstats.stats.power import simulated_mde
    >>> r = simulated_mde(15, n_replicates=3, icc=0.3, p_tie=0.3, n_sims=1000, rng=0)
    >>> bool(r["net_win"].item() > r["net_win_analytic"].item())  # the analytic is optimistic
    True
    """
    n_replicates, icc, p_tie, alpha = _check_common(
        n_replicates, icc, p_tie, alpha, "latent", alternative
    )
    n_tasks = check_positive_int(n_tasks, "n_tasks", minimum=2)
    n_sims = check_positive_int(n_sims, "n_sims")
    target = _check_prob("power", power, lo_open=True)
    method = _check_method(method)
    latent, scale = _latent_draw(n_sims, n_tasks, n_replicates, icc, np.random.default_rng(rng))

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
                "mc_se": float(np.sqrt(target * (1.0 - target) / n_sims)),
                "net_win_analytic": analytic,
                "power_simulated_at_analytic": pw(analytic) if np.isfinite(analytic) else np.nan,
                "n_sims": n_sims,
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
    n_sims: int = 4000,
    max_tasks: int = 5000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Smallest number of tasks whose simulated power for ``net_win`` reaches ``power``.

    One seeded draw of ``n_sims`` evaluations with the largest bracket of tasks; smaller
    designs are its first tasks (common random numbers), and an integer bisection finds
    the smallest one that reaches the target. The analytic :func:`tasks_needed` is given
    beside it.

    Returns
    -------
    DataFrame
        One row: ``net_win, n_replicates, icc, p_tie, alpha, power`` (target), ``n_tasks``
        (simulated), ``power_simulated``, ``mc_se``, ``n_tasks_analytic``,
        ``power_simulated_at_analytic``, ``n_sims``, ``method``.

    Examples
    --------
    >>> from evalstats.stats.power import simulated_tasks_needed
    >>> r = simulated_tasks_needed(0.4, n_replicates=3, icc=0.3, p_tie=0.3, n_sims=1000, rng=0)
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
    n_sims = check_positive_int(n_sims, "n_sims")
    max_tasks = check_positive_int(max_tasks, "max_tasks", minimum=2)
    method = _check_method(method)
    gen = np.random.default_rng(rng)
    target, n_r = float(power), analytic.n_replicates
    d = abs(net_win) if alternative == "two-sided" else net_win
    hi = min(max(2 * analytic.n_tasks + 10, 4), max_tasks)
    while True:
        latent, scale = _latent_draw(n_sims, hi, n_r, analytic.icc, gen)

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
                "mc_se": float(np.sqrt(target * (1.0 - target) / n_sims)),
                "n_tasks_analytic": analytic.n_tasks,
                "power_simulated_at_analytic": pw(min(analytic.n_tasks, latent.shape[1])),
                "n_sims": n_sims,
                "method": method,
            }
        ]
    )

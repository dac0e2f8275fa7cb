"""The kappa re-simulation of :func:`~evalstats.stats.design_coverage_kappa` on large designs.

Task by task, a simulated evaluation draws every task's 3 x 3 table (nine gamma draws and a
multinomial) and the interval's delete-one-task jackknife evaluates the coefficient once
per task: at 10,000 tasks x 2,000 simulations that is over a minute. The interval
(``judge_agreement``'s default) needs far less, and this path simulates only that:

* **the jackknife from two sums.** With ``T`` the summed table and ``t_i`` a task's, the
  delete-one values ``f(T - t_i)`` of a smooth ``f`` are ``f(T) - g'(t_i) + O(|t_i|^2 /
  n^2)`` (``g`` the gradient at ``T``), so the jackknife variance is
  ``(C - 1) / C g' S g`` with ``S`` the tasks' scatter matrix ``sum (t_i - tbar)(t_i -
  tbar)'``, to a relative ``O(m / n)`` (a task's units over all units: 1e-4 at 10,000
  tasks). ``g' S g`` is taken by central differences of the same ``f`` along the columns
  of a root of ``S`` (:func:`ends_from_sums`), so ``T`` and ``S`` are all a simulated
  evaluation needs (10 + 45 numbers instead of 9 C).
* **the two sums drawn, asymptotically exactly.** The tasks of one size ``m`` (a *size
  class*) are i.i.d. with mean ``m p`` and covariance ``m (1 + (m - 1) rho) (diag p - p
  p')`` (the Dirichlet-multinomial's); their sum is drawn normal (the CLT) and their
  scatter about the class mean Wishart with the class size less one df (the scatter of
  normal vectors; Bartlett's factors), independently (so they are for normal tasks); ``T``
  and ``S`` are the classes' sums plus the between-class scatter. Neither is exact for
  tables of counts: the errors of the normal sum are ``O(C^-1/2)`` in the ends' skew and
  those of the Wishart scatter ``O(C^-1/2)`` in the SE, so a two-sided interval's coverage
  is off by ``O(1 / C)``.

:data:`CLT_TASKS` (1,000 tasks) and :data:`CLT_CELL_COUNT` (every cell of the table that
occurs at all expected at least 100 times, in effective units ``n p_k / (1 + (m0 - 1)
rho)``) decide where it is used: below either a normal sum is a poor model of a rare cell's
count (it can go negative, and the interval's exact branch reads those counts), and the
task-by-task draw is affordable. Beyond both, ``O(1 / C)`` is below 0.001, under a fifth
of the Monte-Carlo SE of 2,000 simulations. The tests compare the two paths' coverage,
widths and ends on a 1,000-task design with unequal sizes and correlated tasks, and the
sums' ends against :func:`~evalstats.stats.agreement.cluster_intervals` on the
same simulated tables.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from scipy import stats

from evalstats.stats import agreement as _ac
from evalstats.stats.agreement import DEFAULT_METHOD

__all__ = [
    "CLT_CELL_COUNT",
    "CLT_TASKS",
    "ends_from_sums",
    "simulated_table_sums",
    "sums_of_tables",
    "use_sums",
]

#: From this many tasks (and :data:`CLT_CELL_COUNT`) the sums are drawn, not the tasks.
CLT_TASKS = 1000
#: The smallest effective expected count of an occurring cell for the drawn sums.
CLT_CELL_COUNT = 100.0
_K = 3
_COHEN = partial(_ac.table_parts, w=np.eye(_K), kind="cohen")
_CHUNK = 2**22  # array elements a chunk of simulations holds at once (~32 MB of float64)
# The atanh construction's pseudo-units (cluster_intervals' default).
_PSEUDO = 1.0


def use_sums(m: np.ndarray, probs: np.ndarray, rho: float) -> bool:
    """Whether a design of task sizes ``m`` is simulated by its sums (module docstring)."""
    c = len(m)
    if c < CLT_TASKS:
        return False
    n = float(m.sum())
    m0 = (n - float((m * m).sum()) / n) / (c - 1.0)
    eff = n * probs / (1.0 + max(m0 - 1.0, 0.0) * rho)
    return bool(np.all(eff[probs > 0] >= CLT_CELL_COUNT))


def sums_of_tables(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(T, S)``: the summed tables (..., 9) and their scatter about the mean (..., 9, 9)
    of per-task tables (..., C, 9)."""
    t = np.asarray(tables, dtype=np.float64)
    total = t.sum(axis=-2)
    dev = t - total[..., None, :] / t.shape[-2]
    return total, np.einsum("...ci,...cj->...ij", dev, dev)


def _root(sym: np.ndarray) -> np.ndarray:
    """A square root ``R`` with ``R R' = sym`` (eigen: a singular matrix is allowed)."""
    val, vec = np.linalg.eigh(sym)
    return vec * np.sqrt(np.clip(val, 0.0, None))[..., None, :]


def _bartlett(gen: np.random.Generator, df: np.ndarray, k: int, r: int) -> np.ndarray:
    """(k, classes, r, r) Wishart(df, I_r) draws, one per simulation and class.

    Bartlett: ``A A'`` with ``A`` lower triangular, ``A_ii^2 ~ chi2(df - i)``, ``A_ij ~
    N(0, 1)`` below the diagonal; a class with ``df < r`` is a sum of ``df`` outer products
    of standard normals (a singular Wishart), drawn as such.
    """
    n_cls = len(df)
    out = np.zeros((k, n_cls, r, r))
    big = df >= r
    if big.any():
        a = np.tril(gen.standard_normal((k, int(big.sum()), r, r)), -1)
        diag = np.sqrt(gen.chisquare(df[big][None, :, None] - np.arange(r), (k, int(big.sum()), r)))
        a[..., np.arange(r), np.arange(r)] = diag
        out[:, big] = a @ np.swapaxes(a, -1, -2)
    for j in np.flatnonzero(~big):  # a few tiny classes (fewer tasks than cells)
        if df[j] > 0:
            z = gen.standard_normal((k, int(df[j]), r))
            out[:, j] = np.swapaxes(z, -1, -2) @ z
    return out


def simulated_table_sums(
    m: np.ndarray, probs: np.ndarray, rho: float, k: int, gen: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``k`` simulated evaluations' ``(T, S)`` (k, 9) and (k, 9, 9): tasks of sizes ``m``,
    cell probabilities ``probs`` (9), intra-task correlation ``rho`` (module docstring)."""
    sizes, n_k = np.unique(np.asarray(m, dtype=np.int64), return_counts=True)
    sizes, n_k = sizes.astype(np.float64), n_k.astype(np.float64)
    c = n_k.sum()
    lam = sizes * (1.0 + (sizes - 1.0) * rho)  # a task's covariance over diag p - p p'
    base = np.diag(probs) - np.outer(probs, probs)
    val, vec = np.linalg.eigh(base)
    keep = val > 1e-14 * max(float(val.max()), 1e-300)
    root = vec[:, keep] * np.sqrt(val[keep])  # (9, r): the covariance's rank-r root
    r = root.shape[1]
    # Class sums: n_k m_k p + sqrt(n_k lam_k) R z_k.
    z = gen.standard_normal((k, len(sizes), r))
    dev = (np.sqrt(n_k * lam)[None, :, None] * z) @ root.T  # (k, classes, 9)
    class_tot = (n_k * sizes)[None, :, None] * probs + dev
    total = class_tot.sum(axis=1)
    wish = _bartlett(gen, n_k - 1.0, k, r)  # (k, classes, r, r)
    within = root @ np.einsum("c,kcrs->krs", lam, wish) @ root.T
    between = class_tot / n_k[None, :, None] - total[:, None, :] / c
    scatter = within + np.einsum("c,kci,kcj->kij", n_k, between, between)
    return total, scatter


def _z(s: np.ndarray) -> np.ndarray:
    """cluster_intervals' atanh of the shrunk kappa of summed tables."""
    po, pe, n = _COHEN(s)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrunk = _ac._div(po - pe, 1.0 - pe) * n / (n + _PSEUDO)
        return np.arctanh(np.clip(shrunk, -1.0, 1.0))


def _jack_var(fn, total: np.ndarray, steps: np.ndarray, c: int) -> np.ndarray:
    """``(C - 1) / C g' S g`` by central differences along ``steps`` (a root of ``S / C``,
    columns of a task's size: the differences are a delete-one change)."""
    plus = fn(total[..., None, :] + np.swapaxes(steps, -1, -2))
    minus = fn(total[..., None, :] - np.swapaxes(steps, -1, -2))
    with np.errstate(invalid="ignore"):
        return (c - 1.0) * np.sum(((plus - minus) / 2.0) ** 2, axis=-1)


def ends_from_sums(
    total: np.ndarray, scatter: np.ndarray, c: int, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """The default kappa interval (``judge_agreement``'s, :data:`DEFAULT_METHOD`) from
    ``(T, S)`` of ``c`` tasks.

    :func:`~evalstats.stats.agreement.cluster_intervals`' construction with its
    two jackknife variances (of the atanh of the shrunk kappa and of the observed
    agreement) taken from the scatter matrix (module docstring).
    """
    alpha = 1.0 - confidence
    steps = _root(scatter / c)  # (..., 9, 9): columns of a task's size
    po, pe, n = _COHEN(total)
    z = _z(total)
    se_z = np.sqrt(_jack_var(_z, total, steps, c))
    var_po = _jack_var(lambda s: _COHEN(s)[0], total, steps, c)
    tq = stats.t.ppf(1.0 - alpha / 2.0, c - 1.0)
    binom = _ac._div(po * (1.0 - po), n)
    deff = np.where(binom > 0, _ac._div(var_po, np.where(binom > 0, binom, 1.0)), 1.0)
    deff = np.clip(np.nan_to_num(deff, nan=1.0), 1.0, np.maximum(n / c, 1.0))
    n_eff = n / deff
    lo, hi = _ac._exact(po, pe, n_eff, alpha, _ac.JOINED[DEFAULT_METHOD])
    ex = (np.clip(lo, -1.0, 1.0), np.clip(hi, -1.0, 1.0))
    at = (np.tanh(z - tq * se_z), np.tanh(z + tq * se_z))
    # Never true where use_sums holds (the off-diagonal cells alone are hundreds of
    # effective units), kept so that the construction is cluster_intervals' whole.
    few = (n_eff * (1.0 - po) < _ac.EXACT_BELOW) | ~(se_z > 1e-12)
    joined = (np.fmin(at[0], ex[0]), np.fmax(at[1], ex[1]))
    return np.where(few, joined[0], at[0]), np.where(few, joined[1], at[1])


def sums_coverage(
    m: np.ndarray,
    probs: np.ndarray,
    rho: float,
    truth: float,
    n_sims: int,
    confidence: float,
    gen: np.random.Generator,
) -> float:
    """Share of ``n_sims`` simulated evaluations whose interval holds ``truth``."""
    step = max(1, _CHUNK // (4 * 81 * max(len(np.unique(m)), 9)))
    hits = 0
    for s in range(0, n_sims, step):  # chunks bound the memory; each chunk is one array
        total, scatter = simulated_table_sums(m, probs, rho, min(step, n_sims - s), gen)
        lo, hi = ends_from_sums(total, scatter, len(m), confidence)
        hits += int(np.sum((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)))
    return hits / n_sims

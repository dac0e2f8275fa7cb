"""Model families: the table lives in :mod:`evalstats._families`, below ``judging`` (which
refuses a same-family judge) and ``methodology`` (which audits one)."""

from __future__ import annotations

from .._families import model_family

__all__ = ["model_family"]

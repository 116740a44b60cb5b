"""The three scales every reproduction runs at."""

from __future__ import annotations

import enum
from typing import TypeVar

T = TypeVar("T")


class Scale(str, enum.Enum):
    """``smoke`` (seconds, used by tests), ``quick`` (minutes, default), ``paper`` (the paper's setting)."""

    SMOKE = "smoke"
    QUICK = "quick"
    PAPER = "paper"

    def __str__(self) -> str:
        return self.value

    def pick(self, smoke: T, quick: T, paper: T | None = None) -> T:
        """Choose a setting by scale; ``paper`` defaults to ``quick`` when not given."""
        if self is Scale.SMOKE:
            return smoke
        if self is Scale.QUICK:
            return quick
        return quick if paper is None else paper

    @classmethod
    def parse(cls, value: str | Scale) -> Scale:
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise ValueError(f"scale must be one of {names}; got {value!r}") from None

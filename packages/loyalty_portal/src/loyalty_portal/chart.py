"""The dashboard's chart drawn on the server: the geometry of a bar chart of points per day, which
the template writes out as SVG (no script, no asset from elsewhere; DASHBOARD-1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from loyalty_core.wallet.reads import DayPoints

WIDTH, HEIGHT = 760, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 8, 12, 28
SERIES = (("issued", "Issued", "#1f5fbf"), ("redeemed", "Redeemed", "#1b6e35"), ("expired", "Expired", "#a61b1b"))
"""(field of DayPoints, label, colour), in the order of the bars of a day."""


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    label: str


@dataclass(frozen=True, slots=True)
class Tick:
    at: float
    label: str


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    left: int
    baseline: float
    bars: list[Bar]
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    series: tuple[tuple[str, str, str], ...]


def nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 5 times a power of ten at or above ``value`` (at least 1)."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if factor * step >= value:
                return factor * step
        step *= 10


def bar_chart(days: Sequence[DayPoints]) -> Chart:
    """Three bars per day (issued, redeemed, expired) on one scale from zero."""
    top = nice_ceiling(max((getattr(d, field) for d in days for field, _, _ in SERIES), default=0))
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    baseline = TOP + plot_height
    slot = plot_width / max(len(days), 1)
    bar_width = slot * 0.8 / len(SERIES)
    bars = []
    for n, day in enumerate(days):
        for k, (field, label, colour) in enumerate(SERIES):
            value = getattr(day, field)
            height = plot_height * value / top
            bars.append(
                Bar(
                    x=round(LEFT + n * slot + slot * 0.1 + k * bar_width, 2),
                    y=round(baseline - height, 2),
                    width=round(bar_width, 2),
                    height=round(height, 2),
                    colour=colour,
                    label=f"{day.day.isoformat()}: {value} {label.lower()}",
                )
            )
    y_ticks = [Tick(round(baseline - plot_height * part / 4, 2), f"{top * part // 4}") for part in range(5)]
    every = max(1, len(days) // 6)  # about six dates under the bars, whatever the range
    x_ticks = [
        Tick(round(LEFT + n * slot + slot / 2, 2), day.day.strftime("%m-%d"))
        for n, day in enumerate(days)
        if n % every == 0 or n == len(days) - 1
    ]
    return Chart(WIDTH, HEIGHT, LEFT, baseline, bars, y_ticks, x_ticks, SERIES)

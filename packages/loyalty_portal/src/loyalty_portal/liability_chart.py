"""The reports page's chart, drawn on the server as SVG coordinates: the outstanding points at each
month's end as a line, and each month's movements as bars (earned and referred up; redeemed and
returned, and expired, down). Numbers only: the template writes the elements, no script runs."""

from __future__ import annotations

from dataclasses import dataclass

from loyalty_core.wallet.liability import LiabilityReport

WIDTH, HEIGHT = 720, 280
LEFT, RIGHT, TOP, BOTTOM = 70, 10, 10, 40
SERIES = (
    ("earned", "Earned and referred"),
    ("spent", "Redeemed and returned"),
    ("expired", "Expired"),
)


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: str
    title: str


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    line: str
    """The closing points' polyline (``x,y x,y ...``)."""
    dots: list[tuple[float, float, str]]
    ticks: list[tuple[float, str]]
    """Month labels along the bottom: x, ``YYYY-MM``."""
    levels: list[tuple[float, int]]
    """Value labels on the left: y, points."""
    zero: float
    series: tuple[tuple[str, str], ...] = SERIES


def chart_of(report: LiabilityReport) -> Chart:
    months = report.months
    moved = [{"earned": r.earn + r.referral, "spent": r.redeem + r.returned, "expired": r.expire} for r in months]
    top = max([1, *(r.closing for r in months), *(m["earned"] for m in moved)])
    bottom = min([0, *(m["spent"] for m in moved), *(m["expired"] for m in moved)])
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    scale = plot_h / (top - bottom)

    def y(points: int) -> float:
        return round(TOP + (top - points) * scale, 2)

    slot = plot_w / len(months)
    bar = slot / 4
    bars: list[Bar] = []
    dots: list[tuple[float, float, str]] = []
    for i, (row, m) in enumerate(zip(months, moved, strict=True)):
        left = LEFT + i * slot
        for k, (name, label) in enumerate(SERIES):
            value = m[name]
            if value:
                high, low = (y(value), y(0)) if value > 0 else (y(0), y(value))
                bars.append(
                    Bar(
                        round(left + bar * (k + 0.5), 2),
                        high,
                        round(bar, 2),
                        round(low - high, 2),
                        name,
                        f"{row.month:%Y-%m} {label}: {value}",
                    )
                )
        dots.append((round(left + slot / 2, 2), y(row.closing), f"{row.month:%Y-%m} outstanding: {row.closing}"))
    step = max(1, len(months) // 12)
    ticks = [(round(LEFT + (i + 0.5) * slot, 2), f"{r.month:%Y-%m}") for i, r in enumerate(months) if i % step == 0]
    levels = sorted({(y(top), top), (y(0), 0), (y(bottom), bottom)})
    return Chart(
        WIDTH,
        HEIGHT,
        bars,
        " ".join(f"{x},{yy}" for x, yy, _ in dots),
        dots,
        ticks,
        levels,
        y(0),
    )

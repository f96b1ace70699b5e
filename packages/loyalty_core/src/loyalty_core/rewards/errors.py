"""Reward errors, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import NotFound


class RewardNotFound(NotFound):
    code = "REWARD_NOT_FOUND"

"""Redemptions: a customer spends points on a reward and gets a confirmation code (REDEEM-1 to REDEEM-14)."""

"""Redemptions: a customer spends points on a reward and gets a confirmation code (spec: Resources > Redemption)."""

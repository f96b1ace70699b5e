"""Earning: earn rules, campaigns and the pure engine that scores a purchase under them."""

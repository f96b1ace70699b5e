"""Tiers: a vendor's ladder of status levels and a customer's tier, a pure function of the
customer's monthly qualifying amounts, the ladder and the clock (``rules``)."""

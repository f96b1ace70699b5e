"""Accounts: what spans a customer and its wallet (enrolment, the read model with the balance, merge)."""

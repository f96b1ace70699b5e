"""Vouchers: a discount a shop hands one customer, spent once at a till (back-office contract 2)."""

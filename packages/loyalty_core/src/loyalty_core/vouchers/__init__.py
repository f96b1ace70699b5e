"""Vouchers: a discount a shop hands one customer, spent once at a till (VOUCHER-1 to VOUCHER-3)."""

"""Wallets and, later, their ledger: points per customer."""

"""Wallet passes and card mail over HTTP (PASS-3 to PASS-7)."""

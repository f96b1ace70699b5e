"""Wallets, the ledger and its expiry lots: every balance change goes through ``services.posting``."""

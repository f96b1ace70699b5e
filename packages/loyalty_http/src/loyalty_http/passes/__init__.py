"""Wallet passes and card mail over HTTP (spec: wallet-pass, send-card; contract 2, 4, 5)."""

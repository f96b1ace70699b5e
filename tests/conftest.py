"""Shared by every package's tests. Imports nothing beyond pytest: ``tests/wallet_pass`` runs in an
environment that holds neither SQLAlchemy nor the other packages."""

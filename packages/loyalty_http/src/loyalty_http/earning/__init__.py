"""Earning over HTTP: purchases (transactions and their preview) and the admin earn rules and campaigns."""

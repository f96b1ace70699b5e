"""HTTP layer of wallets: balance, ledger, adjustments, and the admin merge of two accounts."""

"""HTTP layer of vouchers: the portal creates them, a till reads and spends them."""

"""The mailings of the admin API (campaign mail, MAIL-1 to MAIL-18)."""

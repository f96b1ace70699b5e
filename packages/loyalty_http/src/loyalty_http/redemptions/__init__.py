"""HTTP layer of redemptions: redeem, read and verify confirmation codes."""

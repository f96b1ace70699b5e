"""Admin API that belongs to no area: plans, vendors, clients and branches (tenancy), and test mode."""

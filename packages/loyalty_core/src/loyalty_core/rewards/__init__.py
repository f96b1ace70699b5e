"""Rewards: what customers spend points on."""

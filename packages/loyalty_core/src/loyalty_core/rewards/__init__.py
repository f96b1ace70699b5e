"""Rewards: what customers spend points on (spec: Resources > Reward)."""

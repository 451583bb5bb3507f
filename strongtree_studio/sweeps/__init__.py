"""A trade-off sweep as the dashboard asks for it: its grid, the values typed for it, its points."""

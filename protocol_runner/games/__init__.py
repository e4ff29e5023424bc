"""Game rules as pure functions on public state: one module per game."""

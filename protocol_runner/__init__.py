"""cardtable's protocol runner: card model, card-based protocols, games, verification, CLI."""

__version__ = "0.1.0"

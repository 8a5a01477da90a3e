"""Herald's background processes; each runs with ``python -m workers.<name>``."""

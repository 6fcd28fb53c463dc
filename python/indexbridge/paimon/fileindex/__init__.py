"""Paimon's file index: the container and its bloom-filter, bitmap and BSI indexes (spec §4–§8)."""

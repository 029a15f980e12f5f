"""Agents under test: adapters from provider ids to one async call interface."""

"""The instructor build: executing and rendering the course (`make course`)."""

from tools import lean_imports  # noqa: F401  # before anything imports nbformat

"""The instructor build: executing and rendering the course (`make course`)."""

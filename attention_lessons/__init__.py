"""What makes attnlib a course: one folder per lesson (its manifest lesson.toml, figures, explorer, self-checks, data) and the shared kit."""

from attnlib import __version__  # the course's edition: one version for attnlib and the lessons

__all__ = ["__version__"]

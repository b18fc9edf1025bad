"""What makes attnlib a course: one folder per lesson (its manifest lesson.toml, figures, explorer, self-checks, data) and the shared kit."""

"""The shared kit of the lessons: figure tools and the palette (plots), the explorers' base and
shared ES modules (widgets), the checking vocabulary (checks) and the worked examples (examples)."""

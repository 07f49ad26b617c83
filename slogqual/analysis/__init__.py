"""Pure functions over result documents: classes, comparisons. No processes, no files."""

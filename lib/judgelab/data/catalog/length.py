"""Loaders of the length analyses: they find and read files; the analyses take frames."""

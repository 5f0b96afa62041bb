"""Loaders of the contexteval analyses: they find and read files; the analyses take frames."""

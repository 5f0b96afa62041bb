"""Loaders of the prompting analyses: they find and read files; the analyses take frames."""

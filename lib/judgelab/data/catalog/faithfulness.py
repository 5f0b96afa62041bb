"""Loaders of the faithfulness analyses: they find and read files; the analyses take frames."""

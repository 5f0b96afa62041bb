"""Analyses: one package per family, DataFrames in and DataFrames out."""

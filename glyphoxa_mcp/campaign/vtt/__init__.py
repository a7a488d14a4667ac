"""Imports from virtual tabletops: Foundry VTT worlds, Roll20 campaigns, CSV. (pure)"""

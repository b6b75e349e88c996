"""Reads shared by the methods and the boards: battles, data fingerprints and the cache keyed by them,
spec → model names, which runs used stand-ins, and the sections other apps add to a model's page.

It sits below every app that shows or measures verdicts (generation, judgelab, dashboards) and above
the apps that store them (catalog, debates, tallies, jobs), so a method never imports a board to read
what a board also reads.
"""

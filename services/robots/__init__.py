"""Computer players (D10): pure deciders over one seat's projection, by level.

A player sees an :class:`~services.robots.observation.Observation` (one seat's view, the same
projection a human gets) and answers a decision (lay a tile, draw, pass). Pure like the rules
engine: no I/O, clock or global randomness (a random source is passed in).
"""

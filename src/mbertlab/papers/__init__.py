"""One home per paper: its design (settings and plan), tables, specs, published numbers and README.

The study engine (`mbertlab.studies`) loads a paper's design through `studies.designs.BUILTIN_DESIGNS`.
"""

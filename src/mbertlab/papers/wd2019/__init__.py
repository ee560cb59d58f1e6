"""Wu & Dredze 2019, Beto, Bentz, Becas: the design (settings, plan) and its tables."""
from __future__ import annotations

from mbertlab.papers.wd2019.design import Wd2019Settings, plan
from mbertlab.papers.wd2019.tables import wd2019_report
from mbertlab.studies.designs import Design

DESIGN = Design(Wd2019Settings, plan, wd2019_report)

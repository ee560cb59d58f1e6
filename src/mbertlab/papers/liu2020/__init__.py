"""Liu et al. 2020, What makes multilingual BERT multilingual?: the design (settings, plan) and its tables."""
from __future__ import annotations

from mbertlab.papers.liu2020.design import Liu2020Settings, plan
from mbertlab.papers.liu2020.tables import liu2020_report
from mbertlab.studies.designs import Design

DESIGN = Design(Liu2020Settings, plan, liu2020_report)

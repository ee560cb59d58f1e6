"""K et al. 2020, Cross-lingual ability of multilingual BERT: the design (settings, plan) and its tables."""
from __future__ import annotations

from mbertlab.papers.k2020.design import ConditionsSettings, plan
from mbertlab.papers.k2020.tables import conditions_report
from mbertlab.studies.designs import Design

DESIGN = Design(ConditionsSettings, plan, conditions_report)

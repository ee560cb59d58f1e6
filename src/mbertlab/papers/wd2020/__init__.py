"""Wu & Dredze 2020, Are all languages created equal in mBERT?: the design (settings, plan) and its tables."""
from __future__ import annotations

from mbertlab.papers.wd2020.design import Wd2020Settings, plan
from mbertlab.papers.wd2020.stages import STAGE_KINDS
from mbertlab.papers.wd2020.tables import wd2020_report
from mbertlab.studies.designs import Design

DESIGN = Design(Wd2020Settings, plan, wd2020_report, STAGE_KINDS)

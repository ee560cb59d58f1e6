"""Limisiewicz, Malkin & Stanovsky 2023, You can have your data and balance it too: the design (settings,
plan) and its tables."""
from __future__ import annotations

from mbertlab.papers.lms2023.design import Lms2023Settings, plan
from mbertlab.papers.lms2023.tables import lms2023_report
from mbertlab.studies.designs import Design

DESIGN = Design(Lms2023Settings, plan, lms2023_report)

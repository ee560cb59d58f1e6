"""The claims of a paper's spec (paper scale) without their checks, for the tests that feed the paper's own
published numbers through them: the checks read artifacts (pretrainings, controls) the paper's tables lack."""
from __future__ import annotations

from mbertlab.studies.runner import spec_section
from mbertlab.studies.scorecard import parse_findings
from mbertlab.studies.spec import load_spec


def paper_claims(paper: str, ref: str = "") -> list:
    """The paper's claims (not our own observations) whose `ref` names `ref` (all when empty), checks removed."""
    spec = load_spec(paper, "paper")
    return [f.model_copy(update={"checks": []}) for f in parse_findings(spec_section(spec, "findings"), spec.source)
            if not f.own and ref in f.ref]

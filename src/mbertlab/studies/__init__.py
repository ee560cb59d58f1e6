"""Studies: a spec (YAML) expands into a DAG of stage jobs; the runner builds what is missing."""

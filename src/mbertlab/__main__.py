"""`python -m mbertlab` is the `mbertlab` command."""
from mbertlab.cli.main import main

main()

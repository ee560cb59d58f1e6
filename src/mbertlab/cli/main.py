"""The `mbertlab` command. Command modules register themselves; heavy imports stay inside commands."""
from __future__ import annotations

import importlib
import os
import logging
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from mbertlab import __version__
from mbertlab.cli.common import CliState, plain_console
from mbertlab.errors import ConfigError, MbertlabError
from mbertlab.store.faults import storage_fault

# One module per command group, each exposing `register(app)`.
COMMAND_MODULES = ("data", "generate", "corpus", "tokenizer", "pretrain", "transfer", "analysis", "study", "results")

app = typer.Typer(
    name="mbertlab",
    help="A laboratory for studying why multilingual encoders transfer across languages.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = plain_console(stderr=True)


class _WarningLines(logging.Handler):
    """The library's warnings (e.g. pages skipped in a Wikipedia dump) as one `warning:` line each on stderr,
    each distinct one once per command (a source read twice, to count then to build, warns once); without
    it they would go only to the log.txt of the artifact being built."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.shown: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message not in self.shown:
            self.shown.add(message)
            err_console.print(Text.assemble(("warning:", "bold yellow"), " ", message), highlight=False,
                              soft_wrap=True)


warning_lines = _WarningLines()
logging.getLogger("mbertlab").addHandler(warning_lines)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mbertlab {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    workdir: Path = typer.Option(Path("mbertlab-work"), "--workdir", "-w", envvar="MBERTLAB_WORKDIR",
                                 help="Where artifacts and results.db live."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks instead of one-line errors."),
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True,
                                           help="Print the version and exit."),
) -> None:
    if workdir.exists() and not workdir.is_dir():
        raise ConfigError(f"--workdir {workdir}: not a directory")
    ctx.obj = CliState(workdir=workdir, debug=debug)


for _name in COMMAND_MODULES:
    importlib.import_module(f"mbertlab.cli.{_name}").register(app)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; user errors print one line (a traceback with --debug)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    warning_lines.shown.clear()
    try:
        rv = _call(args)
    except MbertlabError as err:
        if debug:
            raise
        # the message quotes user values (labels, names, arguments): print it as text, never as markup
        err_console.print(Text.assemble(("error:", "bold red"), " ", str(err)), highlight=False, soft_wrap=True)
        if getattr(err, "abandon_process", False):  # a dead peer rank: skip the destructors that could abort
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
        return 1
    except typer.Exit as err:
        return err.exit_code
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        return 130
    except typer.TyperException as err:  # usage errors: typer vendors click, so catch its base class
        if hasattr(err, "show"):
            err.show()
        return getattr(err, "exit_code", 2)
    return rv if isinstance(rv, int) else 0


def _call(args: list[str]):
    """The app's result; a file system's refusal (full disk, read-only workdir, long name) becomes one line."""
    try:
        return app(args=args, prog_name="mbertlab", standalone_mode=False)
    except Exception as err:
        fault = storage_fault(err)
        if fault is None:
            raise
        raise fault from err


def main() -> None:
    sys.exit(run())

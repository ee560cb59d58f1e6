"""Bad pretraining configs and paths end in one line naming the key or path, never a traceback or a leftover
`.partial-*` directory."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mbertlab.cli.main import run
from mbertlab.errors import ConfigError
from mbertlab.pretrain.config import PretrainConfig, check_against_run
from mbertlab.tokenizers.shards import ShardReader


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, pair_shards) -> Path:
    """A workdir holding the src+fake shards as a complete `shards` artifact."""
    root = tmp_path_factory.mktemp("work")
    shards = root / "shards" / "0123456789abcdef"
    shutil.copytree(pair_shards, shards)
    (shards / "meta.json").write_text(json.dumps({"stage": "shards"}))
    return root


def one_line_error(capsys, argv: list[str], problems: int = 1) -> str:
    """Run the CLI and return its stderr (one line per problem), checking the exit code and that no traceback
    shows."""
    assert run(argv) == 1
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == problems and lines[0].startswith("error:") and "Traceback" not in err, err
    return err.strip()


def pretrain_error(capsys, workdir: Path, *settings: str, problems: int = 1) -> str:
    argv = ["-w", str(workdir), "pretrain", "--shards", "shards/0123456789abcdef"]
    for setting in settings:
        argv += ["--set", setting]
    line = one_line_error(capsys, argv, problems)
    partials = list((workdir / "pretrain").glob(".partial-*")) if (workdir / "pretrain").exists() else []
    assert not partials, partials
    return line


@pytest.mark.parametrize("settings, key, words", [
    (["model.hidden=33"], "model.heads", "model.hidden 33"),
    (["lr=-1"], "lr", "greater than 0"),
    (["weight_decay=-1"], "weight_decay", "greater than or equal to 0"),
    (["betas=[0.9,2]"], "betas.1", "less than 1"),
    (["betas=[-0.1,0.9]"], "betas.0", "greater than or equal to 0"),
    (["seq_len=512"], "seq_len", "max_positions 128"),
    (["batch_size=16", "accumulation=32"], "accumulation", "batch_size 16"),
    (["batch_size=20", "accumulation=8"], "accumulation", "not a multiple"),
    (["permute={src: 5}"], "permute.src", "less than or equal to 1"),
    (["permute={src: -0.5}"], "permute.src", "greater than or equal to 0"),
])
def test_impossible_values_name_their_key(capsys, workdir, settings, key, words):
    line = pretrain_error(capsys, workdir, *settings)
    assert f"key '{key}'" in line and words in line, line


def test_every_problem_is_named_in_one_line(capsys, workdir):
    """betas=[2,2] has two problems: one line (the CLI's errors are one line each, issue 54) naming both keys."""
    line = pretrain_error(capsys, workdir, "betas=[2,2]")
    assert "key 'betas.0': Input should be less than 1; key 'betas.1': Input should be less than 1" in line, line


def test_missing_init_from_names_the_key_and_leaves_no_partial(capsys, workdir):
    line = pretrain_error(capsys, workdir, "init_from=/nonexistent", "steps=1")
    assert "key 'init_from'" in line and "/nonexistent" in line, line


def test_permute_of_an_unknown_language_lists_the_shards_languages(capsys, workdir):
    line = pretrain_error(capsys, workdir, "permute={xx: 0.5}", "steps=1")
    assert "key 'permute'" in line and "xx" in line and "src, fake" in line, line


def test_a_config_error_inside_the_build_leaves_no_partial(capsys, workdir):
    line = pretrain_error(capsys, workdir, "nsp=true", "steps=1")
    assert "nsp needs layout: pairs" in line, line


def test_missing_shards_path_is_named_when_the_stage_exists(capsys, workdir):
    line = one_line_error(capsys, ["-w", str(workdir), "pretrain", "--shards", "/nonexistent"])
    assert "/nonexistent" in line, line


def test_missing_corpus_path_is_named_when_the_stage_exists(capsys, workdir, tmp_path):
    (workdir / "corpus").mkdir(exist_ok=True)
    config = tmp_path / "tok.yaml"
    config.write_text("kind: word\nvocab_size: 100\nlanguages: [src]\n")
    line = one_line_error(capsys, ["-w", str(workdir), "tokenizer", "train", str(config), "--corpus", "/nonexistent"])
    assert "/nonexistent" in line, line


def test_valid_values_at_the_bounds_are_accepted(pair_shards):
    config = PretrainConfig.model_validate({"model": {"hidden": 32, "heads": 4, "max_positions": 64}, "seq_len": 64,
                                            "batch_size": 16, "accumulation": 4, "lr": 1e-6, "weight_decay": 0,
                                            "betas": [0, 0.999], "permute": {"src": 0, "fake": 1}})
    check_against_run(config, ShardReader(pair_shards))


def test_check_against_run_rejects_unknown_permute_languages(pair_shards):
    with pytest.raises(ConfigError, match=r"key 'permute': xx not among the shards' languages \(src, fake\)"):
        check_against_run(PretrainConfig(permute={"xx": 0.5}), ShardReader(pair_shards))


def test_a_warmup_longer_than_the_run_is_one_warning_line(capsys, workdir):
    """warmup > steps trains (a short run of a longer schedule is how several tests probe the first steps) but
    never reaches lr, so the CLI says so in one line, and nothing else."""
    argv = ["-w", str(workdir), "pretrain", "--shards", "shards/0123456789abcdef", "--set", "steps=2",
            "--set", "warmup=5", "--set", "checkpoint_every=2", "--set", "eval_batches=1",
            "--set", "model={layers: 1, hidden: 16, heads: 2}", "--set", "precision=fp32"]
    assert run(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["warning: pretrain: key 'warmup': 5 is longer than steps (2), so the learning rate never reaches "
                   "lr (0.001); set warmup to at most steps for the whole schedule to run"], err

"""A tiny encoder pretrained on generated languages: word tokenizer, shards and pretraining in one call, for the
transfer tests that need a model of the lab's shape."""
from __future__ import annotations

from pathlib import Path

from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.tokenizers.shards import ShardsConfig, write_shards_into
from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into


def pretrained_encoder(gen: Path, out: Path, langs: list[str], steps: int, batch_size: int) -> Path:
    """The pretraining folder of a fp32 encoder on `langs` of the generated folder `gen` (fp32 pinned: `auto` is
    bf16 on AMX machines and fp32 on others)."""
    tok, shards, encoder = (out / n for n in ("tok", "shards", "pretrain"))
    for d in (tok, shards, encoder):
        d.mkdir(parents=True)
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=2000, languages=langs),
                         {l: gen / l / "text" / "train.txt" for l in langs}, tok)
    write_shards_into(ShardsConfig(languages=langs), tok,
                      {l: {s: gen / l / "text" / f"{s}.txt" for s in ("train", "dev")} for l in langs}, shards)
    pretrain_into(PretrainConfig(steps=steps, batch_size=batch_size, seq_len=16, checkpoint_every=steps,
                                 precision="fp32"), shards, encoder)
    return encoder

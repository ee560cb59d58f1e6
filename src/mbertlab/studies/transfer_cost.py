"""A rough cost of the fine-tuning (`transfer`) stages of a plan, so that a scale's device-hours are not only
its pretrainings'. Rougher than pretraining's: the examples' lengths are assumed (`TOKENS_PER_EXAMPLE`), and
only generated data, or a `max_train_sentences` cap, says how many examples there are (others: not estimated).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mbertlab.studies.jobs import Job

TOKENS_PER_EXAMPLE = 32  # word pieces of one sentence with [CLS] and [SEP] (assumed); a pair (XNLI) twice that
FROZEN_MODES = ("freeze", "feature", "probe")  # the encoder runs forward only
NO_ENCODER_MODES = ("majority",)
LSTM_MODES = ("feature", "bilstm_crf")  # a 2-layer BiLSTM head of `lstm_hidden` (tasks/layers.py)


@dataclass(frozen=True)
class Encoder:
    layers: int
    hidden: int
    intermediate: int


def encoder_of(job: Job, shapes: dict[Job, Encoder]) -> Encoder | None:
    """The shape of the transfer's encoder: a planned pretraining's, or a released encoder's config."""
    for inp in job.inputs:
        if inp in shapes:
            return shapes[inp]
        if inp.kind == "hf_encoder":
            c = json.loads((Path(inp.config.path) / "config.json").read_text(encoding="utf-8"))
            return Encoder(c["num_hidden_layers"], c["hidden_size"], c["intermediate_size"])
    return None


def examples(job: Job) -> tuple[int, int, int] | None:
    """(training examples, dev examples evaluated, test examples evaluated) at one evaluation, where the data says
    how many, else None."""
    config = job.config
    data = next((i for i in job.inputs if i.kind in ("generate", "taskdata", "task_files")), None)
    if data is not None and data.kind == "generate":
        g = data.config
        sizes = {"xnli": g.tasks.nli, "mldoc": g.tasks.mldoc}.get(config.task, g.sentences)
        train, test, dev = sizes.train, sizes.test, sizes.dev
    elif config.max_train_sentences is not None and config.max_eval_sentences is not None:
        train, test = config.max_train_sentences, config.max_eval_sentences
        dev = test
    else:
        return None
    cap = lambda n, m: n if m is None else min(n, m)  # noqa: E731
    evaluated = {split: sum(cap(dev if split == "dev" else test, config.max_eval_sentences)
                            for f in config.evaluate if (f.split == "dev") == (split == "dev"))
                 for split in ("dev", "test")}
    return cap(train, config.max_train_sentences), evaluated["dev"], evaluated["test"]


def transfer_cost(job: Job, shapes: dict[Job, Encoder], micro_batch_floor) -> tuple[float, float] | None:
    """(FLOPs, GPU launch-floor seconds) of a transfer job, or None where it cannot be estimated."""
    config = job.config
    if config.mode in NO_ENCODER_MODES:
        return 0.0, 0.0
    encoder, sizes = encoder_of(job, shapes), examples(job)
    if encoder is None or sizes is None:
        return None
    train, dev_examples, test_examples = sizes
    length = min(config.max_length, TOKENS_PER_EXAMPLE * (2 if config.task == "xnli" else 1))
    forward = 2 * encoder.layers * (4 * encoder.hidden ** 2 + 2 * encoder.hidden * encoder.intermediate
                                     + 2 * length * encoder.hidden)  # per token
    grid = len(config.lr) * len(config.batch_size)
    batch = max(config.batch_size)
    trained = config.steps * batch if config.steps else train * max(config.epoch_grid)  # examples over the epochs
    seen, evaluations = trained, ((trained // batch) // config.eval_every if config.eval_every
                                  else max(config.epoch_grid))
    if config.mode in FROZEN_MODES:  # the frozen encoder's outputs are computed once and kept
        seen, evaluations = train, 1
    train_flops = seen * length * forward * (1 if config.mode in FROZEN_MODES else 3)
    # the BiLSTM head trains on every epoch, frozen encoder or not (liu2020's lab: its feature-mode XNLI took
    # 6,542 s of stage time where the plan, counting the encoder alone, gave 4.4 min for every transfer)
    head = lstm_flops(encoder.hidden, config.lstm_hidden) if config.mode in LSTM_MODES else 0.0
    train_flops += 3 * trained * length * head
    # dev files at every evaluation; test files only where a row can read them (transfer/run.py): without a dev
    # file once, after the run; with one at most every time (this upper bound)
    evaluated = dev_examples * max(1, evaluations) + test_examples * (max(1, evaluations) if dev_examples else 1)
    eval_flops = evaluated * length * (forward + head)
    steps = seen / batch + evaluated / batch
    return grid * (train_flops + eval_flops), grid * steps * micro_batch_floor(encoder.layers)


def lstm_flops(n_in: int, hidden: int, layers: int = 2) -> float:
    """Forward FLOPs per token of the heads' bidirectional LSTM: two per weight of each direction's four gates
    (input and recurrent), the second layer reading both directions of the first."""
    return 2 * 2 * sum(4 * hidden * ((n_in if layer == 0 else 2 * hidden) + hidden) for layer in range(layers))

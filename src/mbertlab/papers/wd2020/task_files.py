"""What task files a wd2020 language has, and the majority-label control of each (language, task): the floor
every encoder's in-language score must clear before a claim about it means something (a NER model predicting
`O` everywhere scores F1 0.0, as the non-BERT baseline did on three lab languages)."""
from __future__ import annotations

from mbertlab.store.layout import task_files
from mbertlab.studies.jobs import Job


def has_split(data: Job, task: str, lang: str, split: str) -> bool:
    """Generated languages have every split; real task data has the files the spec names."""
    if task not in task_files(data.kind):
        return False
    if data.kind == "generate":
        return True
    files = {l.name: l.tasks.get(task, {}) for l in data.config.languages}
    return split in files.get(lang, {})


def has_task(data: Job, task: str, lang: str) -> bool:
    """In-language fine-tuning needs the language's training and test files of the task."""
    return has_split(data, task, lang, "train") and has_split(data, task, lang, "test")


def majority_jobs(languages, tasks: list[str], data: Job, keys_for) -> list[Job]:
    """Per language with the task's files: the training file's most frequent label, scored on the test file
    (one run: it has no seed). `keys_for(lang)` gives the language's fine-tuning keys (its training cap)."""
    from mbertlab.studies import stages

    return [stages.transfer_job(None, data, task, lang.name, [lang.name], keys_for(lang), 0, "majority",
                                (("encoder", "majority"), ("lang", lang.name), ("resource", lang.resource),
                                 ("checkpoint", "final")), label=f"{task} majority {lang.name}")
            for lang in languages for task in tasks if has_task(data, task, lang.name)]

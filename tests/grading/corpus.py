"""The labelled corpus of agent utterances in corpus.jsonl, shared by the tests and the benchmark.

Each line: an agent utterance, the caller turn before it, what the call's tools established,
and the verdict and category a careful human gives it against fixtures/tenant-demo.v1.json.
The "holdout" lines were written after the grader was frozen, to measure it on unseen text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from lab.grading.schema import Category, GradeRequest, Observed, Verdict

CORPUS = Path(__file__).with_name("corpus.jsonl")
# A second business in another trade (fixtures/seed-physio.json), written after the grader's
# rules were frozen for issue 17: its labels are a person's reading of that list, not the rules'.
PHYSIO_CORPUS = Path(__file__).with_name("corpus_physio.jsonl")
PHYSIO_LIST = Path(__file__).resolve().parents[2] / "fixtures" / "seed-physio.json"
# A third business (fixtures/seed-movers.json), written after the rules were frozen for issue 32:
# labels are a person's reading of the list, committed before the grader first saw them.
MOVERS_CORPUS = Path(__file__).with_name("corpus_movers.jsonl")
MOVERS_LIST = Path(__file__).resolve().parents[2] / "fixtures" / "seed-movers.json"


class LabelledTurn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    caller: str | None
    text: str
    verdict: Verdict
    category: Category | None
    observed: Observed = Observed()
    split: Literal["dev", "holdout"] = "dev"

    def request(self) -> GradeRequest:
        return GradeRequest(utterance=self.text, caller_turn=self.caller, observed=self.observed)


def load_corpus(path: Path = CORPUS) -> list[LabelledTurn]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [LabelledTurn.model_validate_json(line) for line in lines if line.strip()]

"""``sdgym/SearchQA-v0``: Search-R1-style retrieval QA over a generated encyclopedia.

The agent searches with ``<search>query</search>`` (the env answers with the top-k passages inside
``<information>…</information>``) and ends the episode with ``<answer>text</answer>``. The reward
is exact match after SQuAD normalisation against any gold answer; ``info["f1"]`` reports token F1.

Privileged info (``info["privileged"]``):

* ``goal``: question, gold answers, question type, hop chain (subject, relation, value, passage
  id) and the supporting passages (id and title);
* ``expert_plan``: search queries that retrieve the supporting passages not retrieved yet (as many
  as the remaining turns allow), then ``<answer>gold</answer>``; ``expert_action`` its first step;
* ``text``: all of it in prose, for a teacher prompt.

Example:
    >>> import gymnasium as gym, sdgym
    >>> env = gym.make("sdgym/SearchQA-v0", size="tiny")
    >>> obs, info = env.reset(seed=1, options={"split": "test"})
    >>> obs, reward, done, _, info = env.step(info["privileged"]["expert_action"])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from sdgym.core import EngineStep, TextEnv
from sdgym.envs.searchqa.dataset import SPLITS, SearchQADataset, file_dataset, generated_dataset
from sdgym.envs.searchqa.protocol import parse_command
from sdgym.envs.searchqa.questions import Hop, Question
from sdgym.envs.searchqa.retrieval import Hit, Retriever, shared_retriever
from sdgym.envs.searchqa.scoring import exact_match, token_f1
from sdgym.envs.searchqa.skills import SKILLS

INSTRUCTIONS = (
    "Answer the question. Search the encyclopedia with <search>query</search>; results appear "
    "between <information> and </information>. Give the final answer as <answer>text</answer>."
)


def format_hits(hits: list[Hit]) -> str:
    """Search-R1's rendering of retrieved passages."""
    if not hits:
        return "<information>No results.</information>"
    docs = "\n".join(f'Doc {i} (Title: "{hit.title}") {hit.text}' for i, hit in enumerate(hits, 1))
    return f"<information>{docs}</information>"


class SearchQAEnv(TextEnv):
    """Retrieval QA with the Search-R1 protocol (see the module docstring).

    Args:
        size: generated data size, ``"tiny" | "small" | "medium" | "large"`` (``large`` has more
            than 100,000 passages).
        data_seed: seed of the generated world and questions.
        backend: retrieval backend, ``"bm25"`` (bm25s, default) or ``"lucene"`` (pyserini).
        top_k: passages returned per search.
        max_turns: turn budget the expert plans for (the registered step limit is 4).
        corpus_file, question_files: upstream data instead of generated data (a Search-R1 JSONL
            corpus and ``{split: question file}``).
        privileged, render_mode: see :class:`~sdgym.core.TextEnv`.
    """
    agent_role: ClassVar[str] = "You answer questions using a search engine."
    history_window: ClassVar[int] = 4
    task_statement_line: ClassVar[int | None] = -1   # "Question: ..." after the instructions
    skills: ClassVar[dict[str, str]] = SKILLS

    splits: ClassVar[tuple[str, ...]] = SPLITS
    easy_splits: ClassVar[dict[str, str]] = {"easy_train": "train", "easy_val": "val"}
    native_action_tags: ClassVar[tuple[str, ...]] = ("search", "answer")

    def __init__(
        self,
        size: str = "small",
        data_seed: int = 0,
        backend: str = "bm25",
        top_k: int = 3,
        max_turns: int = 4,
        corpus_file: str | Path | None = None,
        question_files: Mapping[str, str | Path] | None = None,
        *,
        privileged: bool = True,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(privileged=privileged, render_mode=render_mode)
        if (corpus_file is None) != (question_files is None):
            raise ValueError("give both corpus_file and question_files, or neither")
        if corpus_file is not None and question_files is not None:
            self.dataset: SearchQADataset = file_dataset(corpus_file, question_files)
        else:
            self.dataset = generated_dataset(int(data_seed), size)
        self.backend = backend
        self.top_k = int(top_k)
        self.max_turns = int(max_turns)
        self._retriever: Retriever | None = None
        self._expert_queries: dict[tuple[str, str], str] = {}
        self._question: Question | None = None
        self._turn = 0
        self._retrieved: set[str] = set()
        self._last_hits: list[Hit] = []

    @property
    def retriever(self) -> Retriever:
        """The process-wide retriever for this env's corpus (built or loaded on first use)."""
        if self._retriever is None:
            self._retriever = shared_retriever(self.dataset.corpus, self.backend)
        return self._retriever

    @property
    def question(self) -> Question:
        """The current question (after reset)."""
        if self._question is None:
            raise RuntimeError("call reset() first")
        return self._question

    # ------------------------------------------------------------------ hooks
    def _task_count(self, split: str) -> int:
        return len(self.dataset.questions.get(split, []))

    def _start_task(self, split: str, task_index: int) -> str:
        self._question = self.dataset.questions[split][task_index]
        self._turn = 0
        self._retrieved = set()
        self._last_hits = []
        return f"{INSTRUCTIONS}\nQuestion: {self._question.question}"

    def _engine_step(self, command: str) -> EngineStep:
        kind, body = parse_command(command)
        self._turn += 1
        if kind == "search":
            hits = self.retriever.search(body, self.top_k)
            self._last_hits = hits
            self._retrieved.update(hit.pid for hit in hits)
            return EngineStep(format_hits(hits), 0.0, done=False)
        gold = self.question.answers
        score = exact_match(body, gold)
        info = {"exact_match": score, "f1": token_f1(body, gold), "answer": body}
        return EngineStep(f"Answer submitted: {body}", score, True, score == 1.0, info)

    def _task_id(self) -> str:
        return f"searchqa/{self.dataset.name}/{self.question.qid}"

    def _task_type(self) -> str:
        return self.question.qtype

    def _privileged_info(self) -> dict[str, Any]:
        question = self.question
        plan = self.expert_plan()
        goal = {
            "question": question.question,
            "answers": list(question.answers),
            "question_type": question.qtype,
            "hops": [
                {"subject": h.subject, "relation": h.relation, "value": h.value, "passage_id": h.pid}
                for h in question.hops
            ],
            "supporting_passages": [
                {"id": pid, "title": self.dataset.corpus.get(pid).title}
                for pid in question.supporting_pids
            ],
        }
        return {
            "expert_plan": plan,
            "expert_action": plan[0] if plan else None,
            "goal": goal,
            "text": self._privileged_text(question),
        }

    # ------------------------------------------------------------ expert
    def expert_query(self, hop: Hop) -> str:
        """A query whose top-k results contain ``hop``'s passage (the stored one when none does)."""
        key = (hop.pid, hop.query)
        if key not in self._expert_queries:
            passage = self.dataset.corpus.get(hop.pid)
            candidates = [hop.query, f"{hop.subject} {hop.relation}", passage.text[:200]]
            chosen = hop.query
            for candidate in candidates:
                if any(hit.pid == hop.pid for hit in self.retriever.search(candidate, self.top_k)):
                    chosen = candidate
                    break
            self._expert_queries[key] = chosen
        return self._expert_queries[key]

    def expert_plan(self) -> list[str]:
        """Searches for the supporting passages not yet retrieved, then the gold answer."""
        question = self.question
        if self._done:
            return []
        budget = max(0, self.max_turns - self._turn - 1)
        if question.hops:
            pending: dict[str, Hop] = {}
            for hop in question.hops:
                if hop.pid not in self._retrieved:
                    pending.setdefault(hop.pid, hop)
            searches = [f"<search>{self.expert_query(h)}</search>" for h in pending.values()]
        elif not self._last_hits:
            searches = [f"<search>{question.question}</search>"]
        else:
            searches = []
        return searches[:budget] + [f"<answer>{question.answers[0]}</answer>"]

    def _privileged_text(self, question: Question) -> str:
        lines = [f"Gold answer: {question.answers[0]}"]
        if len(question.answers) > 1:
            lines.append(f"Also accepted: {', '.join(question.answers[1:])}")
        lines.append(f"Question type: {question.qtype}")
        for number, hop in enumerate(question.hops, 1):
            title = self.dataset.corpus.get(hop.pid).title
            lines.append(
                f"Step {number}: {hop.subject} — {hop.relation} — {hop.value} "
                f'(passage {hop.pid}, "{title}")'
            )
        return "\n".join(lines)

    # ---------------------------------------------------- discrete actions
    def candidate_actions(self, observation: str, info: dict[str, Any]) -> list[str]:
        """A small discrete action set for non-LLM agents (``AdmissibleDiscrete``).

        Search the question; search each title in the last results; answer with each title in
        the last results and each year or capitalised name they mention.
        """
        question = self.question.question
        actions = [f"<search>{question}</search>"]
        titles = list(dict.fromkeys(hit.title for hit in self._last_hits))
        actions += [f"<search>{title}</search>" for title in titles]
        answers = titles + _mentions(" ".join(hit.text for hit in self._last_hits))
        actions += [f"<answer>{answer}</answer>" for answer in dict.fromkeys(answers)]
        return actions


def _mentions(text: str) -> list[str]:
    """Capitalised multi-word names and four-digit years mentioned in ``text``."""
    names = re.findall(
        r"\b(?:[A-Z][a-z]+|of)\b(?: (?:[A-Z][a-z]+|of)\b)+|\b1\d{3}\b|\b20\d{2}\b", text)
    names = [name.removesuffix(" of") for name in names if not name.startswith("of")]
    return [name for name in names if " " in name or name.isdigit()]

"""SFT warm start: the whole-sequence NLL, the context-loss term and the learning-rate schedule."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

pytest.importorskip("transformers")

import torch  # noqa: E402

from agents.backends.base import render_chat  # noqa: E402
from agents.backends.scoring import response_logprobs  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.prompts import PublicTurn, student_messages, teacher_messages  # noqa: E402
from agents.tiny_model import build_tiny_model  # noqa: E402
from baselines.sft import Demonstration, _lr_factor, behaviour_clone, token_nll  # noqa: E402

ENV = "sdgym/SearchQA-v0"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    return build_tiny_model(tmp_path_factory.mktemp("sft") / "tiny")


def _demos() -> list[Demonstration]:
    names = ["Veasuss Klujouth", "Tamios Chosov", "Geshuholm Brob", "Quudaern Shouthyl"]
    return [
        Demonstration(PublicTurn(ENV, f"Question: who is {name}?", 2, observation=f"Doc 1 {name} is here."),
                      f"<think>I choose the next step.</think><answer> {name}</answer>")
        for name in names
    ]


def test_token_nll_matches_response_logprobs_and_splits_masks(model_dir: Path) -> None:
    model, tokenizer = load_model(model_dir)
    prompts = [tokenizer("hello there, general", add_special_tokens=False)["input_ids"],
               tokenizer("hi", add_special_tokens=False)["input_ids"]]
    responses = [tokenizer(" yes", add_special_tokens=False)["input_ids"],
                 tokenizer(" a longer answer here", add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        nll, response_mask, context_mask = token_nll(model, prompts, responses, tokenizer.pad_token_id)
        logprobs, _, mask = response_logprobs(model, prompts, responses, pad_token_id=tokenizer.pad_token_id)
    for row in range(2):
        from_nll = -nll[row][response_mask[row]]
        assert torch.allclose(from_nll, logprobs[row][mask[row]], atol=1e-4)
        # every prompt token after the first is predicted once; padding is in neither mask
        assert int(context_mask[row].sum()) == len(prompts[row]) - 1
        assert int(response_mask[row].sum()) == len(responses[row])
    assert not (response_mask & context_mask).any()


def test_context_loss_term_lowers_the_prompt_loss_only_when_weighted(model_dir: Path) -> None:
    demos = _demos()
    prompt_losses = {}
    for weight in (0.0, 1.0):
        torch.manual_seed(0)
        model, tokenizer = load_model(model_dir)
        render = functools.partial(render_chat, tokenizer)
        encoded = [tokenizer(render(student_messages(d.turn)), add_special_tokens=False)["input_ids"]
                   for d in demos]
        behaviour_clone(model, tokenizer, demos, steps=25, lr=3e-3, batch_size=4, render=render,
                        context_loss_weight=weight)
        with torch.no_grad():
            nll, _, context = token_nll(model, encoded, [[tokenizer.eos_token_id]] * len(encoded),
                                        tokenizer.pad_token_id)
        prompt_losses[weight] = float((nll * context).sum() / context.sum())
    assert prompt_losses[1.0] < 0.8 * prompt_losses[0.0], prompt_losses


def test_response_loss_falls_with_warmup_schedule(model_dir: Path) -> None:
    model, tokenizer = load_model(model_dir)
    losses = behaviour_clone(model, tokenizer, _demos(), steps=30, lr=3e-3, batch_size=4,
                             render=lambda m: render_chat(tokenizer, m), context_loss_weight=0.5,
                             warmup_steps=5)
    assert len(losses) == 30
    assert sum(losses[-5:]) / 5 < 0.7 * sum(losses[:5]) / 5


@pytest.mark.parametrize(("step", "expected"), [(0, 0.1), (4, 0.5 * 0.96), (50, 0.5), (99, 0.05)])
def test_lr_factor_warms_up_then_decays(step: int, expected: float) -> None:
    assert _lr_factor(step, 100, 10) == pytest.approx(expected, abs=1e-9)
    assert _lr_factor(step, 100, 0) == 1.0


def test_behaviour_clone_rejects_empty_demonstrations(model_dir: Path) -> None:
    model, tokenizer = load_model(model_dir)
    with pytest.raises(ValueError, match="no expert demonstrations"):
        behaviour_clone(model, tokenizer, [], steps=1, lr=1e-3, batch_size=1, render=str)


def test_teacher_fraction_teaches_the_teacher_prompt_apart_from_the_student_one(model_dir: Path) -> None:
    """Students are shown a wrong answer; teachers, whose prompt carries the gold answer, the
    right one. Only a model trained on teacher prompts too answers right when it sees the block."""
    names = [d.response.split("<answer> ")[1].removesuffix("</answer>") for d in _demos()]
    student = [Demonstration(d.turn, "<think>I choose the next step.</think><answer> Nobody</answer>")
               for d in _demos()]
    teacher = [Demonstration(d.turn, d.response, guidance=f"Gold answer: {name}")
               for d, name in zip(_demos(), names)]

    def logprob(model, tokenizer, messages, responses) -> float:
        render = functools.partial(render_chat, tokenizer)
        prompts = [tokenizer(render(m), add_special_tokens=False)["input_ids"] for m in messages]
        ids = [tokenizer(r, add_special_tokens=False)["input_ids"] for r in responses]
        with torch.no_grad():
            lp, _, mask = response_logprobs(model, prompts, ids, pad_token_id=tokenizer.pad_token_id)
        return float((lp * mask).sum() / mask.sum())

    scores = {}
    for fraction in (0.0, 0.5):
        torch.manual_seed(0)
        model, tokenizer = load_model(model_dir)
        behaviour_clone(model, tokenizer, student, steps=40, lr=3e-3, batch_size=4,
                        render=functools.partial(render_chat, tokenizer), teacher_demos=teacher,
                        teacher_fraction=fraction)
        scores[fraction] = {
            "teacher_right": logprob(model, tokenizer, [teacher_messages(d.turn, d.guidance) for d in teacher],
                                     [d.response for d in teacher]),
            "student_wrong": logprob(model, tokenizer, [student_messages(d.turn) for d in student],
                                     [d.response for d in student]),
            "student_right": logprob(model, tokenizer, [student_messages(d.turn) for d in teacher],
                                     [d.response for d in teacher]),
        }
    assert scores[0.5]["teacher_right"] > scores[0.0]["teacher_right"] + 0.5, scores
    assert scores[0.5]["student_wrong"] > scores[0.5]["student_right"], scores  # still hasty


def test_teacher_fraction_needs_guided_demonstrations(model_dir: Path) -> None:
    model, tokenizer = load_model(model_dir)
    with pytest.raises(ValueError, match="privileged guidance"):
        behaviour_clone(model, tokenizer, _demos(), steps=1, lr=1e-3, batch_size=1, render=str,
                        teacher_demos=_demos(), teacher_fraction=0.5)
    with pytest.raises(ValueError, match="teacher_fraction"):
        behaviour_clone(model, tokenizer, _demos(), steps=1, lr=1e-3, batch_size=1, render=str,
                        teacher_fraction=2.0)


def test_teacher_contexts_cover_every_context_a_head_reads() -> None:
    """with_teacher_contexts: one context per expert episode, in the exact text the trainer's
    teacher prompts carry (baselines.teacher), so the warm start learns to read each one."""
    from baselines.sft import expert_demonstrations, with_teacher_contexts
    from baselines.teacher import (
        CONTEXT_KINDS,
        hindsight_context,
        sibling_context,
        trajectory_text,
        turn_context,
    )

    env_id = "sdgym/SearchQA-v0"
    demos = expert_demonstrations(env_id, {"size": "tiny"}, "train", 12, seed=0)
    assert demos and all(d.privileged and d.task_type for d in demos)
    guided = with_teacher_contexts(demos, list(CONTEXT_KINDS), env_id, seed=0)
    assert [d.response for d in guided] == [d.response for d in demos]
    episodes: list[list] = []
    for demo in guided:
        if demo.turn.step == 1:
            episodes.append([])
        episodes[-1].append(demo)
    whole = {id(e[0]): trajectory_text([d.response for d in e], 1.0) for e in episodes}
    seen = set()
    for episode in episodes:
        texts = whole[id(episode[0])]
        for demo in episode:
            expected = {k: turn_context(k, demo.privileged, demo.task_type, env_id)
                        for k in ("privileged", "demonstration", "skills")}
            expected["sibling"] = sibling_context(texts)
            expected["hindsight"] = hindsight_context([texts], [])
            kinds = [k for k, v in expected.items() if v == demo.guidance]
            assert kinds, demo.guidance
            seen.update(kinds)
    assert len(seen) >= 3, "12 episodes draw several context kinds"
    only = with_teacher_contexts(demos, ["privileged"], env_id)
    assert [d.guidance for d in only] == [d.privileged["text"] for d in demos]
    with pytest.raises(ValueError, match="teacher contexts"):
        with_teacher_contexts(demos, ["oracle"], env_id)


class _ExpertChat:
    """A chat backend that answers each conversation with the expert's command at that turn
    (handed over by the message builder), recording the conversations it was sent."""

    wants_messages = True

    def __init__(self) -> None:
        self.pending: list[str] = []
        self.seen: list[list[dict[str, str]]] = []

    def chat(self, conversations, params):
        from agents.backends.base import Generation

        self.seen.extend([list(c) for c in conversations])
        replies, self.pending = self.pending, []
        return [Generation(text=f"<action> {command}</action>") for command in replies]

    def sync_weights(self, model) -> None:
        del model


@pytest.mark.parametrize(("env_id", "env_kwargs", "split", "limits"), [
    ("sdgym/WebShop-v0", {"size": "tiny", "max_episode_steps": 8}, "easy_val",
     {"history": 0, "observation_chars": 250, "max_admissible": 3}),
    ("sdgym/SearchQA-v0", {"size": "tiny"}, "train", {"history": 2, "observation_chars": 300}),
])
def test_sft_teacher_turns_are_rendered_as_the_trainer_teacher_reads_them(
        env_id: str, env_kwargs: dict, split: str, limits: dict) -> None:
    """The teacher prompt a warm start is trained on (behaviour_clone's teacher turns) is, turn for
    turn, the prompt the trainer's acting teacher is shown along the same expert episode in the
    rollout engine (same observation cut, admissible list, history and context block)."""
    from agents.backends.base import SamplingParams
    from agents.prompts import PromptLimits
    from agents.rollout import RolloutEngine, RolloutEngineConfig
    from baselines.sft import expert_demonstrations, teacher_prompt, with_teacher_contexts
    from baselines.teacher import TURN_CONTEXTS, turn_teacher_messages

    prompt_limits = PromptLimits.from_dict(limits)
    demos = expert_demonstrations(env_id, env_kwargs, split, 1, seed=0, limits=prompt_limits)
    assert len(demos) >= 2
    for context in TURN_CONTEXTS:
        trained = [teacher_prompt(d) for d in with_teacher_contexts(demos, [context], env_id)]
        backend = _ExpertChat()

        def messages(turn, info, context=context, backend=backend):
            backend.pending.append(info["privileged"]["expert_action"])
            return turn_teacher_messages(turn, context, info.get("privileged"),
                                         str(info.get("task_type", "")), env_id)

        engine = RolloutEngine(RolloutEngineConfig(env_id, env_kwargs, 1, 1, prompt_limits=prompt_limits),
                               backend, render=str, messages=messages)
        try:  # the task expert_demonstrations(..., tasks=1, seed=0) ran
            batch = engine.collect([0], SamplingParams(), split,
                                   task_indices=[_first_task(env_id, env_kwargs, split)])
        finally:
            engine.close()
        assert batch.episodes[0].won
        assert backend.seen == trained, context
        assert "Privileged guidance" in backend.seen[0][1]["content"]


def _first_task(env_id: str, env_kwargs: dict, split: str) -> int:
    """The task index expert_demonstrations(..., tasks=1, seed=0) runs first."""
    import random

    import gymnasium as gym

    env = gym.make(env_id, **env_kwargs)
    try:
        order = list(range(env.unwrapped.task_count(split)))
    finally:
        env.close()
    random.Random(0).shuffle(order)
    return order[0]


def test_the_context_registry_is_the_single_source_of_context_names() -> None:
    """Heads, the SFT recipe and the premise read one registry: every name it lists is
    accepted by a head, the per-turn ones build from a turn, the others need the group."""
    from baselines.heads.base import CONTEXT_SOURCES, Head
    from baselines.teacher import CONTEXTS, TURN_CONTEXTS, context_kind, turn_context

    assert tuple(CONTEXTS) == CONTEXT_SOURCES
    for name in CONTEXTS:
        assert Head(context=name).context == name
    privileged = {"text": "the key is under the mat", "expert_plan": ["go to mat", "take key"]}
    assert turn_context("privileged", privileged, "x", "sdgym/SearchQA-v0") == privileged["text"]
    assert turn_context("demonstration", privileged, "x", "sdgym/SearchQA-v0").endswith(
        "go to mat ; take key")
    assert set(TURN_CONTEXTS) == {n for n, k in CONTEXTS.items() if k.from_turn is not None}
    with pytest.raises(ValueError, match="not known per turn"):
        turn_context("sibling", privileged, "x", "sdgym/SearchQA-v0")
    with pytest.raises(ValueError, match="unknown teacher context 'oracle'"):
        context_kind("oracle")


def test_swapped_words_copy_each_turn_that_names_one_word_of_a_group() -> None:
    """``sft.swap_words``: a turn whose task names one colour of the group gets one copy per other
    colour, the word replaced everywhere in the turn and its response (whole words only); a turn
    naming none of them, or two, is not copied."""
    from baselines.sft import Demonstration, with_swapped_words

    def demo(task: str, response: str) -> Demonstration:
        turn = PublicTurn("sdgym/ScienceWorld-v0", task, 5, [("You see a red box.", "look around")],
                          "The redness fades.", ["move apple to red box"])
        return Demonstration(turn, response, "guidance", {"text": "x"}, "find-animal", 3)

    red = demo("Move it to the red box.", "<action> move apple to red box</action>")
    plain, both = demo("Find an animal.", "<action> look</action>"), demo("red or blue box", "x")
    out = with_swapped_words([red, plain, both], [["red", "blue", "green"]])
    assert out[:3] == [red, plain, both] and len(out) == 5
    for copy, colour in zip(out[3:], ("blue", "green")):
        assert copy.turn.task == f"Move it to the {colour} box."
        assert copy.response == f"<action> move apple to {colour} box</action>"
        assert copy.turn.history == [(f"You see a {colour} box.", "look around")]
        assert copy.turn.admissible_actions == [f"move apple to {colour} box"]
        assert copy.turn.observation == "The redness fades."  # not a whole word
        assert (copy.guidance, copy.privileged, copy.episode) == (None, None, 3)
    assert with_swapped_words([red], []) == [red]


def test_swap_words_needs_groups_of_distinct_words_and_keeps_old_recipe_hashes() -> None:
    from agents.warm_starts import warm_start_record
    from baselines.config import SFTConfig, load_preset, sft_inputs
    from baselines.warm_start import sft_cache_key

    with pytest.raises(ValueError, match="sft.swap_words: each group needs two or more"):
        SFTConfig(swap_words=[["red", "red"]])
    recipe = load_preset("scienceworld-warm-start")
    assert "sft.swap_words" not in sft_inputs(recipe)  # unset: the shipped recipe hash holds
    assert sft_cache_key(recipe) == warm_start_record("scienceworld-easy-sft")["recipe_hash"]
    recipe.sft.swap_words = [["red", "blue"]]
    assert sft_inputs(recipe)["sft.swap_words"] == [["red", "blue"]]

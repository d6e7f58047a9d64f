"""TRL integration (agents.trl): folded multi-turn episodes, the rollout_func contract, rewards,
and the example that trains the shipped warm start with trl.GRPOTrainer."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

pytest.importorskip("transformers")
pytest.importorskip("datasets")

from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

from agents.backends.base import Generation, SamplingParams, render_chat  # noqa: E402
from agents.datasets import prompt_limits_for, task_dataset  # noqa: E402
from agents.prompts import public_turn, response_for_command, student_messages  # noqa: E402
from agents.trl import (  # noqa: E402
    EnvReward,
    SdgymRollout,
    episode_reward,
    folded_output,
    play_folded_episodes,
)
from agents.warm_starts import resolve_model  # noqa: E402

ENV_ID = "sdgym/SearchQA-v0"
MODEL = "searchqa-hasty-sft"
KWARGS = {"size": "small"}
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(resolve_model(MODEL))


@pytest.fixture(scope="module")
def tasks():
    return task_dataset(ENV_ID, "easy_val", env_kwargs=KWARGS, model=MODEL,
                        task_indices=range(4), privileged=True)


class ScriptedBackend:
    """Answers each episode with the given responses in turn (ending with <|im_end|>)."""

    def __init__(self, tokenizer, scripts: list[list[str]]) -> None:
        self.tokenizer, self.scripts, self.calls = tokenizer, scripts, []

    def generate_from_ids(self, prompt_ids, params):
        self.calls.append([list(p) for p in prompt_ids])
        turn = len(self.calls) - 1
        out = []
        for script in self.scripts[: len(prompt_ids)]:
            text = script[turn]
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            ids.append(self.tokenizer.convert_tokens_to_ids("<|im_end|>"))
            out.append(Generation(text=text, response_ids=ids, logprobs=[-0.5] * len(ids),
                                  finish_reason="stop"))
        return out


def test_expert_episode_folds_into_the_chat_layout_with_observations_masked(tokenizer,
                                                                             tasks) -> None:
    row = tasks[0]
    plan = json.loads(row["privileged"])["expert_plan"]
    assert len(plan) >= 2  # a search, then the answer
    responses = [response_for_command(ENV_ID, a, ("search", "answer")) for a in plan]
    with SdgymRollout(ENV_ID, tasks, env_kwargs=KWARGS, model=MODEL) as rollout:
        episode = rollout.start(0, row["prompt"], 0, rollout.limits, tokenizer, {})
        backend = ScriptedBackend(tokenizer, [responses])
        play_folded_episodes([episode], backend, SamplingParams(max_new_tokens=48),
                             env_id=ENV_ID, limits=rollout.limits, max_turns=rollout.max_turns)
        out = folded_output([episode])
    assert out["episode_score"] == [1.0] and out["episode_won"] == [True]
    assert out["episode_turns"] == [len(plan)] and out["episode_task_id"] == [row["task_id"]]
    assert episode_reward([None], **{k: v for k, v in out.items() if k.startswith("episode")}) == [1.0]
    # the folded sequence is the chat rendering of the whole conversation, turn by turn
    messages, history = list(row["prompt"]), []
    env = gym.make(ENV_ID, **KWARGS)
    try:
        task, _ = env.reset(options={"split": "easy_val", "task_index": row["task_index"]})
        observation = task
        for turn, (action, response) in enumerate(zip(plan, responses), start=1):
            messages.append({"role": "assistant", "content": response})
            history.append((observation, action))
            observation, _, terminated, _, info = env.step(action)
            if terminated:
                break
            nxt = public_turn(ENV_ID, task, turn + 1, history, observation, info, rollout.limits)
            messages.append({"role": "user", "content": student_messages(nxt)[1]["content"]})
    finally:
        env.close()
    expected = render_chat(tokenizer, messages, add_generation_prompt=False)
    assert tokenizer.decode(out["prompt_ids"][0] + out["completion_ids"][0]) + "\n" == expected
    # env_mask: 1 on the scripted responses, 0 on every token folded in between
    completion, mask = out["completion_ids"][0], out["env_mask"][0]
    assert len(mask) == len(completion) == len(out["logprobs"][0])
    model_tokens = tokenizer.decode([t for t, m in zip(completion, mask) if m])
    assert model_tokens == "<|im_end|>".join(responses) + "<|im_end|>"
    observed = tokenizer.decode([t for t, m in zip(completion, mask) if not m])
    assert "<information>" in observed and "Step 2." in observed and "<|im_start|>user" in observed
    assert all(lp == 0.0 for lp, m in zip(out["logprobs"][0], mask) if not m)
    assert all(lp == -0.5 for lp, m in zip(out["logprobs"][0], mask) if m)
    # turn 2 was generated from exactly the folded context TRL trains on
    second = backend.calls[1][0]
    assert second == (out["prompt_ids"][0] + completion)[: len(second)]
    assert mask[len(second) - len(out["prompt_ids"][0])] == 1  # where response 2 starts


def fake_trainer(tokenizer):
    from accelerate import Accelerator

    model = AutoModelForCausalLM.from_pretrained(resolve_model(MODEL))
    return SimpleNamespace(
        processing_class=tokenizer, model=model, model_wrapped=model,
        accelerator=Accelerator(cpu=True), state=SimpleNamespace(global_step=3),
        args=SimpleNamespace(max_completion_length=12, gradient_checkpointing_kwargs=None),
        temperature=1.0, top_p=1.0, chat_template_kwargs={})


def test_rollout_func_contract_for_any_batch_and_repeated_prompts(tokenizer, tasks) -> None:
    trainer = fake_trainer(tokenizer)
    prompts = tasks["prompt"]
    with SdgymRollout(ENV_ID, tasks, env_kwargs=KWARGS) as rollout:  # limits from the model
        for batch in ([prompts[1]] * 3 + [prompts[0]] * 2 + [prompts[3]], [prompts[2]]):
            out = rollout(batch, trainer)
            assert {"prompt_ids", "completion_ids", "logprobs", "env_mask"} <= set(out)
            assert all(len(values) == len(batch) for values in out.values())
            by_prompt = {tasks[i]["task_id"]: i for i in range(len(tasks))}
            assert [prompts[by_prompt[t]] for t in out["episode_task_id"]] == batch
            for ids, mask, lps in zip(out["completion_ids"], out["env_mask"], out["logprobs"]):
                assert len(ids) == len(mask) == len(lps) > 0 and mask[0] == 1
            assert all(0.0 <= score <= 1.0 for score in out["episode_score"])
            assert all(1 <= turns <= rollout.max_turns for turns in out["episode_turns"])
        assert rollout.limits == prompt_limits_for(MODEL)
        assert len(rollout.envs) == 6  # made for the biggest batch, reused after
        with pytest.raises(ValueError, match="in none of its task datasets"):
            rollout([[{"role": "user", "content": "hello"}]], trainer)
    other_limits = SdgymRollout(ENV_ID, tasks, env_kwargs=KWARGS, limits={"observation_chars": 40})
    with other_limits, pytest.raises(ValueError, match="not sdgym's first-turn prompt"):
        other_limits([prompts[0]], trainer)
    other_tasks = SdgymRollout(ENV_ID, tasks, env_kwargs={"size": "tiny"}, model=MODEL)
    with other_tasks, pytest.raises(ValueError, match="same env_kwargs"):
        other_tasks([prompts[0]], trainer)


def test_env_reward_scores_one_step_on_the_rows_task(tasks) -> None:
    gold = [json.loads(p)["goal"]["answers"][0] for p in tasks["privileged"]]
    reward = EnvReward(ENV_ID, env_kwargs=KWARGS)
    try:
        completions = [f"<think>x</think><answer> {gold[0]}</answer>",
                       [{"role": "assistant", "content": f"<answer>{gold[1]}</answer>"}],
                       "<answer>certainly wrong</answer>", "no tags at all"]
        assert reward(completions, split=tasks["split"], task_index=tasks["task_index"]) == [
            1.0, 1.0, 0.0, 0.0]
        with pytest.raises(ValueError, match="split and task_index"):
            reward(completions)
    finally:
        reward.close()
    with pytest.raises(ValueError, match="episode_score"):
        episode_reward(["x"])


def test_example_trains_the_warm_start_with_grpo_trainer_and_evaluates_at_another_batch_size(
        tmp_path: Path) -> None:
    pytest.importorskip("trl")
    spec = importlib.util.spec_from_file_location(
        "trl_grpo_searchqa", ROOT / "examples" / "trl_grpo_searchqa.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    trainer = example.main(["--steps", "2", "--tasks", "8", "--batch-size", "8",
                            "--num-generations", "4", "--eval-steps", "2", "--eval-tasks", "3",
                            "--eval-batch-size", "6", "--eval-generations", "2",
                            "--output-dir", str(tmp_path)])
    assert trainer.state.global_step == 2
    train_logs = [r for r in trainer.state.log_history if "rewards/episode_reward/mean" in r]
    eval_logs = [r for r in trainer.state.log_history if "eval_rewards/episode_reward/mean" in r]
    assert len(train_logs) == 2 and len(eval_logs) == 1
    for record in train_logs:
        assert 0.0 <= record["rewards/episode_reward/mean"] <= 1.0
        assert record["completions/mean_length"] > 0  # model tokens only (env_mask)
    assert 0.0 <= eval_logs[0]["eval_rewards/episode_reward/mean"] <= 1.0
    # the trained model is saved where asked, loads with from_pretrained, and sdgym eval runs it
    # with the warm start's prompt format
    from transformers import AutoModelForCausalLM

    from agents.prompts import PromptLimits
    from agents.warm_starts import shipped_prompt_limits
    from sdgym.cli import main as sdgym_main

    assert AutoModelForCausalLM.from_pretrained(tmp_path).num_parameters() > 0
    assert PromptLimits.from_dict(shipped_prompt_limits(str(tmp_path))) == PromptLimits.from_dict(
        shipped_prompt_limits("searchqa-hasty-sft"))
    out = tmp_path / "eval.jsonl"
    assert sdgym_main(["eval", "--env", "SearchQA-v0", "--model", str(tmp_path), "--env-kwarg",
                       "size=small", "--split", "easy_val", "--episodes", "2", "--seeds", "1",
                       "--max-new-tokens", "32", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) >= 2

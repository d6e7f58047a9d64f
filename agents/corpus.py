"""Built-in training corpus for the tiny test tokenizer.

The text mixes plain English with the tags and commands used by sdgym environments
(``<think>``, ``<action>``, ``search[...]``, ``go to cabinet 1`` ...), so that the
tokenizer learns compact merges for them. It is generated deterministically.
"""

from __future__ import annotations

from itertools import product

TAG_TOKENS: tuple[str, ...] = (
    "<think>",
    "</think>",
    "<action>",
    "</action>",
    "<search>",
    "</search>",
    "<answer>",
    "</answer>",
    "<information>",
    "</information>",
)
"""Tags added to the tokenizer as single (non-special) tokens."""

_PROSE = """\
The quick brown fox jumps over the lazy dog. A household robot walks into the kitchen and
looks around. On the counter there is an apple, a mug, a knife and a loaf of bread.
You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a cabinet 2,
a countertop 1, a drawer 1, a fridge 1, a garbagecan 1, a microwave 1, a shelf 1, a sinkbasin 1,
a stoveburner 1, and a toaster 1. Your task is to: put a clean mug in the coffeemachine.
The capital of France is Paris. The river that flows through London is the Thames.
Question: who wrote the novel Pride and Prejudice? Answer: Jane Austen.
Question: in which year did the first man walk on the moon? Answer: 1969.
I need to find a pair of running shoes for men, size 10, under 50 dollars.
The search results show several products. The first one is a lightweight running shoe
with a breathable mesh upper. I will click on it and check the available sizes and colors.
Thought: I should search for more information before I answer the question.
Nothing happens. You open the cabinet 1. The cabinet 1 is open. In it, you see a plate 2.
You pick up the mug 1 from the countertop 1. You clean the mug 1 using the sinkbasin 1.
The assistant thinks step by step, then acts, then observes the result, and finally answers.
"""

_VERBS = ("go to", "open", "close", "take", "examine", "use", "heat", "cool", "clean")
_OBJECTS = (
    "cabinet",
    "drawer",
    "fridge",
    "countertop",
    "shelf",
    "microwave",
    "sinkbasin",
    "desk",
    "bed",
    "sofa",
    "toilet",
    "dresser",
)
_QUERIES = (
    "capital of France",
    "author of Pride and Prejudice",
    "tallest mountain in the world",
    "running shoes for men",
    "wireless headphones under 100 dollars",
    "first man on the moon",
    "largest ocean on earth",
    "blue cotton t-shirt size medium",
)
_CLICKS = ("buy now", "next >", "< prev", "back to search", "size 10", "color blue", "item 1")


def default_corpus() -> list[str]:
    """Return the built-in corpus as a list of short documents (deterministic)."""
    docs = [line.strip() for line in _PROSE.splitlines() if line.strip()]
    for verb, obj, num in product(_VERBS, _OBJECTS, range(1, 4)):
        docs.append(f"<action>{verb} {obj} {num}</action>")
    for query in _QUERIES:
        docs.append(
            f"<think>I need to look this up.</think><search>{query}</search>"
            f"<information>Doc 1: some text about the {query}.</information>"
        )
        docs.append(f"<action>search[{query}]</action>")
        docs.append(f"<think>The answer is clear now.</think><answer>{query}</answer>")
    for click in _CLICKS:
        docs.append(f"<think>Let me pick this option.</think><action>click[{click}]</action>")
    return docs

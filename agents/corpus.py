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

_WORD_TEXT = """
about above across act add afraid after afternoon again against age ago agree air all allow almost alone along
already also always among amount animal another answer any anyone anything appear area arm army around arrive art
ask attack aunt autumn away baby back bad bag ball bank base basket bath bear beautiful become bed bedroom beer
before begin behind believe bell belong below belt bench best better between bicycle big bird birthday bit bite
black blanket blood blow blue board boat body boil bone book boot born borrow both bottle bottom bowl box boy brain
branch brave bread break breakfast breathe brick bridge bright bring brother brush build burn bus business busy
butter button buy cake call camera camp can candle candy cap captain car card care careful carpet carry case cat
catch cause ceiling center chair chalk chance change cheap check cheese chicken child chocolate choose church
circle city class clean clear climb clock cloth cloud coat coffee coin cold collect colour comb come comfortable
common compare complete computer condition contain continue control cook cool copy corn corner correct cost count
country course cousin cover cow crash cream create cross crowd cry cup curtain customer cut daily damage dance
danger dark date daughter dead deal dear decide deep deliver describe desert design destroy develop diamond
dictionary different difficult dinner direction dirty discover dish doctor door double down draw dream dress drink
drive drop dry duck during dust early earth east easy eat edge egg eight either electric elephant empty end enemy
energy engine enjoy enough enter equal evening event every exactly example excited exercise expensive explain eye
face fact factory fail fall false family famous far farm fast father fault favourite fear feather feel fence
festival few field fight fill film find fine finger finish fire first fish fit five fix flag flat floor flower fly
follow food foot football force forest forget fork form forward four free fresh friend front fruit full fun future
game garden gate general gentle gift girl give glass glove goat gold good government grandfather grass great green
grey ground group grow guard guess guest guide gun hair half hall hammer hand happen happy hard hat hate have head
healthy hear heart heavy height hello help here hide high hill history hit hobby hold hole holiday hollow home
honest hope horse hospital hot hotel hour house hundred hungry hurry husband ice idea important inside interest
invite iron island jacket jam job join joke journey juice jump jungle just keep kettle key kick kind king kiss kite
knee knife knock know lake lamp land language large last late laugh lead leaf learn leather leave left leg lemon
lesson letter library lift light like line lion lip list listen little live lock long look lose loud love low lucky
lunch machine magazine magic mail main make man many map mark market marry match matter meal measure meat medicine
meet memory metal middle milk mind minute mirror miss mistake mix model moment money monkey month moon morning
mother mountain mouse mouth move music nail name narrow nation nature near neck need needle neighbour nest net never
new news next nice night noise north nose note notice number nurse object ocean offer office oil old onion only
open orange order other outside oven owner page paint pair pale paper parent park part party pass past path pay
peace pen pencil people pepper perfect period person pet phone piano picture piece pig pillow pink pipe place plan
plane plant plate play please pocket point police polite pool poor popular possible post pot potato pour power
present pretty price print prize problem produce program promise pull pumpkin punish pupil purple push puzzle
queen quiet rabbit race radio rain rainbow read ready reason receive record red remember repeat reply report rest
rice rich ride right ring river road rock roof room root rope rose round rule run sad safe sail salt same sand
save scarf school science scissors sea season seat second secret see seed sell send sentence serve shadow shake
shape share sharp sheep sheet shirt shoe shop short shoulder shout show shower sick side sign silver simple sing
sister sit size skate skirt sky sleep slow small smell smile smoke snake snow soap sock soft soldier son song
sound soup south space speak special spell spend spoon sport spring square stair stamp stand star start station
stay steal step stick still stone stop store storm story straight strange street strong student study sugar summer
sun supper sure surprise sweater sweet swim table tail talk tall taste taxi tea teach team tear telephone tell
tent test thank thick thin thing think thirsty throw ticket tidy tiger time tired today together tomato tomorrow
tongue tool tooth top towel tower town toy traffic train travel tree trouble truck true try turn twice umbrella
uncle under understand uniform until useful usually valley vegetable village visit voice wait wake walk wall want
warm wash watch water wave weak wear weather week weight welcome west wet wheel white whole wide wife wild win
window wind wing winter wish woman wood wool word work world worry write wrong yard year yellow young zero zoo
"""


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
    # plain word lines in two deterministic orders, so common pairs merge across words
    vocab = _WORD_TEXT.split()
    n = len(vocab)
    for order in (range(n), ((i * 7) % n for i in range(n))):
        words = [vocab[i] for i in order]
        for start in range(0, n, 12):
            line = " ".join(words[start : start + 12])
            docs.append(line[:1].upper() + line[1:] + ".")
    return docs

"""The product taxonomy behind the generated WebShop catalogue: pure data, no logic.

WebShop's real catalogue (Yao et al. 2022) was scraped from Amazon with a few hundred search
queries in five top categories (``beauty``, ``electronics``, ``fashion``, ``food``,
``furniture``). Each :class:`ProductType` here stands for one such query: its breadcrumb
(``product_category``, ``›``-separated as upstream), the head noun used in titles and
instructions, the attribute phrases its products may carry (upstream's ``Attributes``, e.g.
``"sulfate free"``), the customization options it offers (upstream's ``options``: option name ->
values) and its price range in dollars.

Option values are lower case, as upstream's loader stores them, and within one product type no
value appears under two option names (clicking a value must select a unique option).
"""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES: tuple[str, ...] = ("beauty", "electronics", "fashion", "food", "furniture")
"""Upstream's five top categories (the ``category`` field and the env's ``task_type``)."""

# fmt: off
OPTION_POOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    # key: (option name shown on the item page, values)
    "color": ("color", ("black", "white", "navy", "grey", "red", "beige", "brown", "pink", "olive",
        "burgundy", "teal", "ivory", "khaki", "lavender", "mustard")),
    "apparel_size": ("size", ("x-small", "small", "medium", "large", "x-large", "xx-large",
        "3x-large")),
    "shoe_size": ("size", ("us 5", "us 6", "us 7", "us 8", "us 9", "us 10", "us 11", "us 12",
        "us 13")),
    "fluid": ("size", ("1 fl oz", "2 fl oz", "3.4 fl oz", "6.76 fl oz", "8 fl oz", "16.9 fl oz",
        "33.8 fl oz")),
    "weight": ("size", ("2 ounce", "4 ounce", "8 ounce", "12 ounce", "16 ounce", "32 ounce",
        "5 pound")),
    "pack": ("item package quantity", ("pack of 1", "pack of 2", "pack of 3", "pack of 4",
        "pack of 6", "pack of 12", "pack of 24")),
    "count": ("size", ("30 count", "60 count", "90 count", "120 count", "180 count")),
    "scent": ("scent", ("lavender vanilla", "unscented", "fresh citrus", "coconut", "eucalyptus",
        "sandalwood", "rose water", "ocean breeze", "green tea")),
    "shade": ("color", ("fair", "light beige", "natural", "warm honey", "golden", "caramel",
        "espresso", "porcelain")),
    "flavor": ("flavor name", ("original", "sea salt", "dark chocolate", "vanilla bean",
        "strawberry", "honey roasted", "cinnamon", "barbecue", "lemon", "peanut butter", "matcha",
        "spicy chili")),
    "roast": ("flavor name", ("light roast", "medium roast", "dark roast", "french roast", "decaf",
        "espresso roast")),
    "storage": ("capacity", ("32gb", "64gb", "128gb", "256gb", "512gb", "1tb")),
    "connector": ("style", ("usb-c", "lightning", "micro usb", "usb-a", "3.5mm jack")),
    "length_ft": ("size", ("3 ft", "6 ft", "10 ft", "15 ft", "25 ft")),
    "screen": ("size", ("24 inch", "27 inch", "32 inch", "43 inch", "55 inch", "65 inch")),
    "bed": ("size", ("twin", "twin xl", "full", "queen", "king", "california king")),
    "finish": ("color", ("walnut", "oak", "espresso finish", "white wash", "black metal",
        "natural wood", "grey oak", "cherry")),
    "fabric": ("color", ("charcoal fabric", "light grey fabric", "navy velvet", "beige linen",
        "green velvet", "cognac leather", "black leather")),
    "rug_size": ("size", ("2 ft x 3 ft", "4 ft x 6 ft", "5 ft x 7 ft", "8 ft x 10 ft",
        "9 ft x 12 ft", "runner 2 ft x 8 ft")),
    "waist": ("size", ("28w x 30l", "30w x 30l", "32w x 32l", "34w x 32l", "36w x 32l",
        "38w x 34l", "40w x 30l")),
    "band": ("band size", ("32b", "34b", "34c", "36c", "36d", "38d")),
    "lens": ("color", ("polarized black", "mirrored blue", "gradient brown", "clear lens",
        "green tint")),
    "power": ("style", ("1000 lumens", "1500 lumens", "2000 lumens", "3000 lumens")),
    "wattage": ("style", ("20 watt", "40 watt", "60 watt", "100 watt")),
    "dimension": ("size", ("12 x 12 inch", "16 x 20 inch", "18 x 24 inch", "24 x 36 inch")),
    "set": ("style", ("set of 2", "set of 4", "set of 6")),
}
# fmt: on
"""Shared pools of customization options, referenced by key from :data:`PRODUCT_TYPES`."""


@dataclass(frozen=True)
class ProductType:
    """One kind of product (one upstream search query).

    Attributes:
        query: upstream ``query`` (the product-type search term, lower case).
        category: upstream ``category`` (one of :data:`CATEGORIES`).
        path: upstream ``product_category`` breadcrumb, segments joined by ``" › "``.
        noun: head noun of titles and instructions (e.g. ``"shampoo"``).
        attributes: attribute phrases products of this type may carry.
        descriptors: words that make titles varied (materials, styles, variants).
        options: keys of :data:`OPTION_POOLS` this type offers (at most one per option name).
        price: ``(low, high)`` dollar range of prices.
    """

    query: str
    category: str
    path: str
    noun: str
    attributes: tuple[str, ...]
    descriptors: tuple[str, ...]
    options: tuple[str, ...]
    price: tuple[float, float]


def _t(
    category: str,
    query: str,
    path: str,
    noun: str,
    attributes: str,
    descriptors: str,
    options: str,
    low: float,
    high: float,
) -> ProductType:
    """Compact constructor: ``|``-separated lists, ``" > "`` in paths becomes ``" › "``."""
    return ProductType(
        query=query,
        category=category,
        path=path.replace(" > ", " › "),
        noun=noun,
        attributes=tuple(attributes.split("|")),
        descriptors=tuple(descriptors.split("|")),
        options=tuple(options.split("|")) if options else (),
        price=(low, high),
    )


_B, _E, _F, _D, _H = CATEGORIES

# fmt: off
PRODUCT_TYPES: tuple[ProductType, ...] = (
    _t(_B, "shampoo", "Beauty & Personal Care > Hair Care > Shampoo & Conditioner > Shampoos",
       "shampoo", "sulfate free|paraben free|natural ingredients|dry hair|hair growth|"
       "color treated|tea tree|argan oil|cruelty free|dandruff",
       "moisturizing|clarifying|volumizing|repair|daily|herbal", "fluid|scent", 6.5, 34.0),
    _t(_B, "face moisturizer", "Beauty & Personal Care > Skin Care > Face > Creams & Moisturizers",
       "moisturizer", "hyaluronic acid|fragrance free|sensitive skin|oil free|anti aging|"
       "dermatologist tested|vitamin c|non comedogenic|fine lines",
       "hydrating|night|daily|gel|whipped|barrier", "weight|pack", 9.0, 58.0),
    _t(_B, "lipstick", "Beauty & Personal Care > Makeup > Lips > Lipstick", "lipstick",
       "long lasting|cruelty free|vegan|highly pigmented|matte finish|" "paraben free|easy apply",
       "velvet|satin|creamy|liquid|bold", "shade|pack", 5.0, 28.0),
    _t(_B, "foundation", "Beauty & Personal Care > Makeup > Face > Foundation", "foundation",
       "long lasting|oil free|full coverage|sensitive skin|spf 30|lightweight|" "cruelty free",
       "liquid|powder|serum|matte|dewy", "shade", 7.0, 45.0),
    _t(_B, "nail polish", "Beauty & Personal Care > Foot, Hand & Nail Care > Nail Polish",
       "nail polish", "long lasting|quick dry|non toxic|easy apply|high gloss|vegan",
       "gel|glitter|neon|pastel|chrome", "color|pack", 3.5, 19.0),
    _t(_B, "body wash", "Beauty & Personal Care > Skin Care > Body > Body Washes", "body wash",
       "natural ingredients|sensitive skin|sulfate free|dry skin|paraben free|" "essential oils",
       "foaming|creamy|exfoliating|refreshing|nourishing", "fluid|scent|pack", 4.0, 26.0),
    _t(_B, "perfume", "Beauty & Personal Care > Fragrance > Women's > Eau de Parfum", "perfume",
       "long lasting|travel size|cruelty free|alcohol free|gift set",
       "floral|oriental|fresh|woody|fruity", "fluid", 12.0, 98.0),
    _t(_B, "hair dryer", "Beauty & Personal Care > Hair Care > Styling Tools > Hair Dryers",
       "hair dryer", "fast drying|low noise|ionic technology|travel size|heat protection|"
       "easy carry", "ionic|compact|professional|ceramic|foldable", "color", 19.0, 129.0),
    _t(_B, "toothpaste", "Beauty & Personal Care > Oral Care > Toothpaste", "toothpaste",
       "fluoride free|sensitive teeth|teeth whitening|natural ingredients|" "fresh breath",
       "whitening|herbal|charcoal|mint|enamel", "weight|pack", 2.5, 18.0),
    _t(_B, "makeup brush set", "Beauty & Personal Care > Tools & Accessories > Makeup Brushes",
       "makeup brush set", "synthetic hair|cruelty free|easy clean|travel case|high quality",
       "professional|kabuki|eyeshadow|foundation|blending", "color", 8.0, 39.0),
    _t(_E, "wireless earbuds",
       "Electronics > Headphones, Earbuds & Accessories > Earbud Headphones", "earbuds",
       "noise cancelling|water resistant|long battery life|wireless charging|"
       "hands free|fast charging|bluetooth 5.3", "true wireless|sport|bass|mini|open ear", "color",
       15.0, 199.0),
    _t(_E, "phone charger", "Electronics > Cell Phones & Accessories > Chargers & Power Adapters",
       "charger", "fast charging|high speed|usb c|compact size|overheat protection|"
       "wall mounted", "dual port|gan|travel|car|wireless", "connector|pack", 8.0, 49.0),
    _t(_E, "hdmi cable",
       "Electronics > Accessories & Supplies > Audio & Video Accessories > Cables > HDMI Cables",
       "hdmi cable", "high speed|gold plated|4k ultra hd|braided nylon|plug and play|"
       "high definition", "8k|braided|flat|slim|angled", "length_ft|pack", 5.0, 29.0),
    _t(_E, "smart tv", "Electronics > Television & Video > Televisions", "tv",
       "4k ultra hd|high definition|wall mounted|dolby vision|voice control|" "hdr",
       "smart|qled|oled|led|frameless", "screen", 129.0, 999.0),
    _t(_E, "memory card", "Electronics > Computers & Accessories > Memory Cards > Micro SD Cards",
       "memory card", "high speed|water resistant|4k video|shock proof|full hd",
       "micro sd|sdxc|extreme|pro|endurance", "storage|pack", 6.0, 89.0),
    _t(_E, "bluetooth speaker", "Electronics > Portable Audio & Video > Portable Speakers",
       "speaker", "water resistant|long battery life|easy carry|high definition|"
       "deep bass|hands free", "portable|outdoor|mini|rugged|party", "color", 18.0, 159.0),
    _t(_E, "wireless mouse",
       "Electronics > Computers & Accessories > Keyboards, Mice & Accessories > Mice", "mouse",
       "plug and play|long battery life|silent click|ergonomic design|" "easy carry",
       "ergonomic|vertical|slim|gaming|travel", "color", 9.0, 69.0),
    _t(_E, "security camera",
       "Electronics > Camera & Photo > Video Surveillance > Surveillance Cameras",
       "security camera", "night vision|motion detection|easy install|two way audio|"
       "water resistant|1080p hd", "outdoor|indoor|wireless|dome|solar", "color|pack", 24.0,
       189.0),
    _t(_E, "usb flash drive",
       "Electronics > Computers & Accessories > Data Storage > USB Flash Drives", "flash drive",
       "high speed|plug and play|metal casing|usb 3.0|easy carry",
       "mini|swivel|dual|keychain|rugged", "storage|pack", 5.0, 79.0),
    _t(_E, "laptop stand", "Electronics > Computers & Accessories > Laptop Accessories > Stands",
       "laptop stand", "height adjustable|aluminum alloy|easy assemble|heat dissipation|"
       "non slip|foldable design", "ergonomic|portable|riser|desktop|vented", "color", 12.0, 59.0),
    _t(_F, "men's t-shirt", "Clothing, Shoes & Jewelry > Men > Clothing > Shirts > T-Shirts",
       "t-shirt", "machine wash|cotton blend|short sleeve|regular fit|moisture wicking|" "tagless",
       "crew neck|v-neck|graphic|pocket|performance", "apparel_size|color", 9.0, 29.0),
    _t(_F, "women's dress", "Clothing, Shoes & Jewelry > Women > Clothing > Dresses", "dress",
       "machine wash|long sleeve|high waist|polyester spandex|button closure|" "elastic waist",
       "maxi|midi|wrap|bodycon|floral", "apparel_size|color", 19.0, 69.0),
    _t(_F, "running shoes", "Clothing, Shoes & Jewelry > Men > Shoes > Athletic > Running",
       "running shoes", "rubber sole|non slip|lightweight|breathable mesh|arch support|lace up",
       "trail|road|cushioned|stability|minimalist", "shoe_size|color", 29.0, 139.0),
    _t(_F, "men's jeans", "Clothing, Shoes & Jewelry > Men > Clothing > Jeans", "jeans",
       "machine wash|button closure|stretch fabric|straight leg|relaxed fit|" "zipper fly",
       "slim fit|bootcut|classic|athletic|tapered", "waist|color", 24.0, 79.0),
    _t(_F, "women's sneakers", "Clothing, Shoes & Jewelry > Women > Shoes > Fashion Sneakers",
       "sneakers", "rubber sole|memory foam|slip on|lightweight|breathable mesh|non slip",
       "platform|canvas|low top|high top|walking", "shoe_size|color", 25.0, 99.0),
    _t(_F, "hoodie", "Clothing, Shoes & Jewelry > Men > Clothing > Fashion Hoodies & Sweatshirts",
       "hoodie", "machine wash|fleece lined|drawstring closure|long sleeve|"
       "kangaroo pocket|cotton blend", "pullover|zip up|oversized|heavyweight|athletic",
       "apparel_size|color", 18.0, 59.0),
    _t(_F, "sports bra", "Clothing, Shoes & Jewelry > Women > Clothing > Active > Sports Bras",
       "sports bra", "moisture wicking|removable padding|high impact|hand wash|"
       "racerback design", "seamless|longline|wireless|padded|cross back", "band|color", 12.0,
       45.0),
    _t(_F, "sunglasses", "Clothing, Shoes & Jewelry > Men > Accessories > Sunglasses & Eyewear",
       "sunglasses", "uv protection|polarized lenses|lightweight frame|scratch resistant|"
       "case included", "aviator|wayfarer|round|sport|oversized", "lens", 11.0, 89.0),
    _t(_F, "women's leggings", "Clothing, Shoes & Jewelry > Women > Clothing > Leggings",
       "leggings", "high waist|tummy control|squat proof|moisture wicking|"
       "four way stretch|hand wash", "yoga|workout|capri|fleece|pocket", "apparel_size|color",
       12.0, 42.0),
    _t(_F, "winter boots", "Clothing, Shoes & Jewelry > Women > Shoes > Boots > Snow Boots",
       "boots", "waterproof|faux fur|rubber sole|non slip|warm lining|ankle strap",
       "snow|hiking|mid calf|lace up|chelsea", "shoe_size|color", 35.0, 149.0),
    _t(_D, "ground coffee", "Grocery & Gourmet Food > Beverages > Coffee > Ground Coffee",
       "ground coffee", "fair trade|usda organic|single origin|non gmo|low acid|kosher",
       "arabica|colombian|breakfast blend|sumatra|house blend", "roast|weight", 6.0, 32.0),
    _t(_D, "green tea", "Grocery & Gourmet Food > Beverages > Tea > Green", "green tea",
       "usda organic|caffeine free|non gmo|individually wrapped|gluten free|" "kosher",
       "jasmine|sencha|matcha|loose leaf|ginger", "pack|count", 4.0, 24.0),
    _t(_D, "protein bar", "Grocery & Gourmet Food > Snack Foods > Bars > Protein Bars",
       "protein bars", "gluten free|low sugar|high protein|keto friendly|non gmo|plant based",
       "crunchy|chewy|whey|vegan|layered", "flavor|pack", 9.0, 39.0),
    _t(_D, "potato chips", "Grocery & Gourmet Food > Snack Foods > Chips & Crisps > Potato",
       "potato chips", "gluten free|kettle cooked|non gmo|no artificial flavors|low sodium",
       "kettle|thin crisp|wavy|baked|ridged", "flavor|pack", 3.0, 29.0),
    _t(_D, "olive oil", "Grocery & Gourmet Food > Pantry Staples > Cooking Oils > Olive",
       "olive oil", "extra virgin|cold pressed|usda organic|non gmo|single origin|kosher",
       "italian|greek|spanish|california|unfiltered", "fluid|pack", 7.0, 45.0),
    _t(_D, "dark chocolate", "Grocery & Gourmet Food > Candy & Chocolate > Chocolate Bars",
       "chocolate bar", "fair trade|dairy free|low sugar|usda organic|gluten free|vegan",
       "bittersweet|single origin|sea salt|almond|artisan", "pack|weight", 3.0, 30.0),
    _t(_D, "dried fruit", "Grocery & Gourmet Food > Dried Fruits & Vegetables > Dried Fruits",
       "dried fruit", "no sugar added|usda organic|non gmo|gluten free|resealable bag",
       "mango|apricot|cranberry|mixed|fig", "weight|pack", 5.0, 34.0),
    _t(_D, "pasta", "Grocery & Gourmet Food > Pantry Staples > Pasta & Noodles > Dried Pasta",
       "pasta", "gluten free|non gmo|high protein|whole grain|usda organic|kosher",
       "penne|spaghetti|fusilli|rigatoni|lentil", "weight|pack", 2.0, 22.0),
    _t(_D, "hot sauce", "Grocery & Gourmet Food > Condiments & Salad Dressings > Hot Sauce",
       "hot sauce", "gluten free|no artificial flavors|small batch|low sodium|vegan",
       "habanero|chipotle|ghost pepper|jalapeno|sriracha", "fluid|pack", 4.0, 24.0),
    _t(_D, "vitamin gummies",
       "Grocery & Gourmet Food > Health > Vitamins & Dietary Supplements > Gummies", "gummies",
       "gluten free|non gmo|sugar free|vegan|gelatin free|immune support",
       "multivitamin|vitamin d|elderberry|biotin|probiotic", "count|flavor", 7.0, 35.0),
    _t(_H, "office chair", "Home & Kitchen > Furniture > Home Office Furniture > Desk Chairs",
       "office chair", "lumbar support|height adjustable|easy assemble|mesh back|heavy duty|"
       "swivel wheels", "ergonomic|executive|task|gaming|high back", "color", 59.0, 349.0),
    _t(_H, "bookshelf", "Home & Kitchen > Furniture > Living Room Furniture > Bookcases",
       "bookshelf", "easy assemble|space saving|engineered wood|heavy duty|wall mounted|"
       "storage space", "5 tier|ladder|corner|industrial|cube", "finish", 35.0, 229.0),
    _t(_H, "coffee table",
       "Home & Kitchen > Furniture > Living Room Furniture > Tables > Coffee Tables",
       "coffee table", "easy assemble|storage space|solid wood|metal frame|lift top|"
       "living room", "rustic|round|mid century|glass top|farmhouse", "finish", 49.0, 299.0),
    _t(_H, "mattress", "Home & Kitchen > Furniture > Bedroom Furniture > Mattresses", "mattress",
       "memory foam|medium firm|pressure relief|cooling gel|certipur us|" "bed in a box",
       "hybrid|innerspring|latex|pillow top|gel", "bed", 129.0, 899.0),
    _t(_H, "area rug",
       "Home & Kitchen > Home Décor Products > Area Rugs, Runners & Pads > Area Rugs", "area rug",
       "non slip|machine washable|stain resistant|non shedding|living room|" "high pile",
       "boho|moroccan|shag|vintage|geometric", "rug_size|color", 25.0, 259.0),
    _t(_H, "sofa", "Home & Kitchen > Furniture > Living Room Furniture > Sofas & Couches", "sofa",
       "easy assemble|solid wood|living room|high density foam|" "removable cushions|space saving",
       "loveseat|sectional|futon|tufted|modular", "fabric", 199.0, 999.0),
    _t(_H, "floor lamp", "Home & Kitchen > Lighting > Floor Lamps", "floor lamp",
       "dimmable light|energy saving|living room|remote control|easy assemble|" "led bulb",
       "arc|tripod|torchiere|reading|industrial", "power|color", 29.0, 159.0),
    _t(_H, "bed sheets",
       "Home & Kitchen > Bedding > Sheets & Pillowcases > Sheet & Pillowcase Sets", "sheet set",
       "deep pocket|machine washable|cooling|wrinkle free|egyptian cotton|" "hypoallergenic",
       "bamboo|microfiber|percale|sateen|linen", "bed|color", 19.0, 119.0),
    _t(_H, "wall art", "Home & Kitchen > Wall Art > Posters & Prints", "wall art",
       "ready to hang|living room|high definition|wood frame|waterproof canvas",
       "canvas|abstract|botanical|landscape|framed", "dimension|set", 14.0, 89.0),
    _t(_H, "dining chair", "Home & Kitchen > Furniture > Kitchen & Dining Room Furniture > Chairs",
       "dining chair", "easy assemble|solid wood|dining room|metal legs|upholstered seat|"
       "heavy duty", "modern|farmhouse|velvet|wishbone|side", "set|finish", 45.0, 279.0),
)
# fmt: on
"""Every product type of the generated catalogue (50 types across the 5 categories)."""

BRAND_SYLLABLES: tuple[tuple[str, ...], tuple[str, ...]] = (
    (
        "lu",
        "ver",
        "mo",
        "ka",
        "zen",
        "ori",
        "sol",
        "bel",
        "tra",
        "nox",
        "vi",
        "pura",
        "ar",
        "elo",
        "quin",
        "dar",
        "sel",
        "myr",
        "teva",
        "cor",
    ),
    (
        "mora",
        "dia",
        "lix",
        "tano",
        "vista",
        "ra",
        "ion",
        "ella",
        "bright",
        "wood",
        "ly",
        "nest",
        "field",
        "ora",
        "peak",
        "mint",
        "lane",
        "crest",
        "vale",
        "ton",
    ),
)
"""Syllables combined into fictional brand names (400 possible brands)."""

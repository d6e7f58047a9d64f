"""Upstream-format WebShop files for the loader tests (a helper module, not a conftest, so
that it never shadows another directory's ``conftest`` on ``sys.path``)."""

from __future__ import annotations

import json
from pathlib import Path


def write_upstream_files(folder: Path) -> tuple[Path, Path, Path]:
    """Two products and three human instructions in upstream's file formats."""
    products = [
        {
            "asin": "B000000001",
            "name": "Aqua Tea Tree Shampoo",
            "query": "Shampoo ",
            "category": "beauty",
            "product_category": "Beauty › Hair Care › Shampoos",
            "small_description": "Gentle daily shampoo.",
            "full_description": "With tea tree.",
            "pricing": "$12.99",
            "images": ["http://img/1.jpg"],
            "customization_options": {
                "Size": [
                    {"value": "8 Fl Oz", "image": None},
                    {"value": "16 Fl Oz/Pack", "image": None},
                ]
            },
        },
        {
            "asin": "B000000002",
            "name": "Oak Bookshelf",
            "query": "bookshelf",
            "category": "furniture",
            "product_category": "Home › Furniture › Bookcases",
            "small_description": ["Sturdy.", "Five shelves."],
            "full_description": "",
            "pricing": "$40.00 - $60.00",
            "images": [],
            "customization_options": None,
        },
        {"asin": "nan", "name": "skipped"},
    ]
    attributes = {"B000000001": {"attributes": ["tea tree", "sulfate free"]}}
    instructions = {
        "B000000001": [
            {
                "instruction": "i need a tea tree shampoo.",
                "instruction_attributes": ["tea tree"],
                "instruction_options": ["8 fl oz"],
            },
            {
                "instruction": "no attributes",
                "instruction_attributes": [],
                "instruction_options": [],
            },
        ],
        "B000000002": [
            {
                "instruction": "find an oak bookshelf",
                "instruction_attributes": ["oak"],
                "instruction_options": [],
            },
        ],
    }
    paths = folder / "items.json", folder / "human.json", folder / "attrs.json"
    for path, data in zip(paths, (products, instructions, attributes)):
        path.write_text(json.dumps(data))
    return paths

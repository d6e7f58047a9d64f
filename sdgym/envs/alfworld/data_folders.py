"""Which game folders each split plays when ALFWorld reads games from disk (``data_path``).

``data_path`` may be:

* the official ``json_2.1.1`` folder (or a folder holding it), whose ``train/``,
  ``valid_seen/`` and ``valid_unseen/`` sub-folders become the splits as alfworld's
  ``base_config.yaml`` maps them (``data_path`` -> ``train``, ``eval_id_data_path`` ->
  ``valid_seen`` = ``val``, ``eval_ood_data_path`` -> ``valid_unseen`` = ``test``);
  ``sdgym-alfworld-generate``'s own split folders (``train/``, ``val_seen/``, ``val_unseen/``,
  ``easy/``) are read the same way;
* any other folder of game folders, played by every split;
* a dict ``{split: folder}``.

A path that does not exist, or a split folder whose every game is unchecked (``"solvable":
null``), is an error naming it; unchecked games next to playable ones are skipped with one
warning that counts them.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from sdgym.envs.alfworld.game_io import find_game_folders
from sdgym.envs.alfworld.splits import SPLITS, canonical_split

OFFICIAL_ROOT = "json_2.1.1"
SPLIT_FOLDERS: dict[str, tuple[str, ...]] = {
    "train": ("train",),
    "val_seen": ("valid_seen", "val_seen"),
    "val_unseen": ("valid_unseen", "val_unseen"),
    "easy": ("easy",),
}
"""sdgym split -> folder names that hold it (upstream's name first)."""


def split_roots(data_path: str | Path | dict[str, str | Path]) -> dict[str, Path]:
    """The folder each split reads (splits without one are left out)."""
    if isinstance(data_path, dict):
        roots = {canonical_split(split): Path(path) for split, path in data_path.items()}
    else:
        root = Path(data_path)
        if not root.is_dir():
            raise FileNotFoundError(f"ALFWorld data_path {root} is not a folder")
        if (root / OFFICIAL_ROOT).is_dir():
            root = root / OFFICIAL_ROOT
        roots = {}
        for split, names in SPLIT_FOLDERS.items():
            name = next((name for name in names if (root / name).is_dir()), None)
            if name is not None:
                roots[split] = root / name
        if not roots:
            roots = dict.fromkeys(SPLITS, root)
    for split, path in roots.items():
        if not path.is_dir():
            raise FileNotFoundError(f"ALFWorld data_path for split {split!r}: no folder {path}")
    return roots


def split_folders(data_path: str | Path | dict[str, str | Path]) -> dict[str, list[Path]]:
    """The playable game folders of each split, for :class:`~.env.ALFWorldEnv`."""
    roots = split_roots(data_path)
    found = {path: find_game_folders(path) for path in set(roots.values())}
    for path, games in sorted(found.items()):
        if games.unchecked and not games.folders:
            raise ValueError(
                f'ALFWorld data_path {path}: all {games.unchecked} games have "solvable": null '
                "(not yet checked by alfworld's solver), so there is nothing to play"
            )
        if games.unchecked:
            warnings.warn(
                f"ALFWorld data_path {path}: skipped {games.unchecked} games with "
                f'"solvable": null (not yet checked by alfworld\'s solver); '
                f"{len(games.folders)} playable",
                stacklevel=3,
            )
    return {split: found[path].folders for split, path in roots.items()}

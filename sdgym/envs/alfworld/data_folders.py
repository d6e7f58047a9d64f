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

A dict's keys may be sdgym's split names or upstream's (``valid_seen``, ``valid_unseen``); its
values ``str`` or ``pathlib.Path``. Games with ``"solvable": null`` (written by
``alfworld-generate`` before its solver runs) are checked once by the planner and the verdict
cached (:mod:`.verdicts`); the solvable ones are played, and one warning counts them. A path that
does not exist, or a split folder with no playable game, is an error naming it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from sdgym.envs.alfworld.game_io import find_game_folders
from sdgym.envs.alfworld.splits import SPLITS, canonical_split
from sdgym.envs.alfworld.verdicts import is_solvable

OFFICIAL_ROOT = "json_2.1.1"
SPLIT_FOLDERS: dict[str, tuple[str, ...]] = {
    "train": ("train",),
    "val_seen": ("valid_seen", "val_seen"),
    "val_unseen": ("valid_unseen", "val_unseen"),
    "easy": ("easy",),
}
"""sdgym split -> folder names that hold it (upstream's name first)."""
UPSTREAM_NAMES: dict[str, str] = {name: split for split, names in SPLIT_FOLDERS.items()
                                  for name in names}
"""A folder or upstream split name (``valid_seen``) -> the sdgym split it holds."""


def split_roots(data_path: str | Path | dict[str, str | Path]) -> dict[str, Path]:
    """The folder each split reads (splits without one are left out)."""
    if isinstance(data_path, dict):
        roots = {canonical_split(UPSTREAM_NAMES.get(split, split)): Path(path)
                 for split, path in data_path.items()}
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
    playable: dict[Path, list[Path]] = {}
    for path, games in sorted(found.items()):
        checked = [folder for folder in games.unchecked if is_solvable(folder)]
        playable[path] = sorted([*games.folders, *checked])
        if games.unchecked and not playable[path]:
            raise ValueError(
                f'ALFWorld data_path {path}: none of its {len(games.unchecked)} games with '
                '"solvable": null could be solved by the planner, so there is nothing to play')
        if games.unchecked:
            warnings.warn(
                f'ALFWorld data_path {path}: checked {len(games.unchecked)} games with "solvable": '
                f"null by planning them (verdicts cached): {len(checked)} solvable, "
                f"{len(games.unchecked) - len(checked)} not; {len(playable[path])} playable",
                stacklevel=3,
            )
    return {split: playable[path] for split, path in roots.items()}

"""WebShop (Yao et al. 2022) for sdgym: ``gym.make("sdgym/WebShop-v0")``.

Modules, one job each:

- :mod:`~sdgym.envs.webshop.taxonomy` -- product types, attributes, options, prices (data);
- :mod:`~sdgym.envs.webshop.generator` -- a seeded catalogue in upstream's raw file formats;
- :mod:`~sdgym.envs.webshop.loaders` -- upstream files (or generated data) -> :class:`Catalog`;
- :mod:`~sdgym.envs.webshop.goals` -- goals from instructions: price ceilings and splits;
- :mod:`~sdgym.envs.webshop.catalog` -- the generated catalogue by size, memoised and cached;
- :mod:`~sdgym.envs.webshop.search` -- product search through :mod:`sdgym.retrieval` (top 50);
- :mod:`~sdgym.envs.webshop.reward` -- WebShop's purchase reward, factor by factor;
- :mod:`~sdgym.envs.webshop.state`, :mod:`~sdgym.envs.webshop.pages`,
  :mod:`~sdgym.envs.webshop.engine` -- session state, pages and their renderings, transitions;
- :mod:`~sdgym.envs.webshop.expert` -- the privileged expert (plan from any state);
- :mod:`~sdgym.envs.webshop.env` -- :class:`WebShopEnv`, the Gymnasium environment.
"""

from sdgym.envs.webshop.schema import Catalog

__all__ = ["Catalog"]

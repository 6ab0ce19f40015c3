"""The benchmark dataset: the server's seed (server.seed) for two tenants, built once into
.keygraph/bench/<key>/ (the items as a pickle, the seeded stores) and reused.

The cache key is the sizes, the rng seed and the spec (which fixes the items' layout). A
change to the seed's code does not rebuild the cache by itself, as a rebuild takes minutes:
pass `--rebuild` (or delete .keygraph/bench) to seed afresh. Each run works on a copy of the
store, so its writes never reach the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import pickle
import shutil
from dataclasses import astuple, dataclass, replace
from pathlib import Path
from typing import Literal

from generated.table import TABLE
from keygraph.plan import Item
from keygraph.stores.embedded.schema import BODY_FORMAT
from keygraph.stores.embedded.store import EmbeddedStore
from server.seed.tenant import SeedSizes, build_items, seed

TENANTS = ("acme", "globex")
"""Every tenant holds a full dataset; the queries run as the first."""
RNG_SEED = 20261122
ROOT = Path(__file__).resolve().parents[1]
CACHE_ROOT = ROOT / ".keygraph" / "bench"
SPEC = ROOT / "access_patterns.toml"
EMBEDDED_FILE = "keygraph.sqlite3"
ITEMS_FILE = "items.pickle"


Profile = Literal["full", "dynamodb-local", "quick"]


def bench_sizes(profile: Profile) -> SeedSizes:
    """full: the issue's sizes, groups of up to 150 members (so some reach 100).
    dynamodb-local: a tenth of the users, orders, groups and shops (the same orders per user,
    groups per user and members per group, and the same org tree), since DynamoDB Local
    takes writes at tens of items a second on this machine. quick: a small dataset of the
    same shape for smoke runs."""
    if profile == "quick":
        return SeedSizes(
            users=20, orders=80, groups=4, org_nodes=40, org_depth=3, shops=200, max_members=10
        )
    full = replace(SeedSizes.bench(), max_members=150)
    if profile == "full":
        return full
    return replace(full, users=200, orders=2000, groups=20, shops=2000)


def cache_key(sizes: SeedSizes, rng_seed: int) -> str:
    hasher = hashlib.sha256(repr((TENANTS, rng_seed, astuple(sizes))).encode())
    hasher.update(SPEC.read_bytes())
    return hasher.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Dataset:
    sizes: SeedSizes
    rng_seed: int
    items: dict[str, list[Item]]
    """Every seeded item, by tenant."""
    key: str

    @property
    def cache_dir(self) -> Path:
        return CACHE_ROOT / self.key

    @property
    def items_file(self) -> Path:
        return self.cache_dir / ITEMS_FILE


def load_dataset(profile: Profile, rebuild: bool = False) -> Dataset:
    """The dataset's items, built by the seed's own builder or read from the cache;
    `rebuild` drops the cached items and stores first."""
    sizes = bench_sizes(profile)
    key = cache_key(sizes, RNG_SEED)
    if rebuild:
        shutil.rmtree(CACHE_ROOT / key, ignore_errors=True)
    path = CACHE_ROOT / key / ITEMS_FILE
    if path.is_file():
        items = load_items(path)
    else:
        items = {tenant: build_items(tenant, sizes, RNG_SEED) for tenant in TENANTS}
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL))
        partial.rename(path)
    return Dataset(sizes, RNG_SEED, items, key)


def load_items(path: Path) -> dict[str, list[Item]]:
    """The items pickled by load_dataset (a file this harness wrote itself)."""
    items: dict[str, list[Item]] = pickle.loads(path.read_bytes())
    return items


async def _seed_embedded(path: Path, dataset: Dataset, progress: bool) -> None:
    store = EmbeddedStore(TABLE, path=path)
    try:
        for tenant in TENANTS:
            await seed(store, tenant, dataset.sizes, dataset.rng_seed, progress)
    finally:
        await store.close()


def embedded_cache(dataset: Dataset, progress: bool) -> Path:
    """The directory holding the seeded embedded store file, built on first use (one per
    format of stored bodies)."""
    name = "embedded-" + hashlib.sha256(BODY_FORMAT.encode()).hexdigest()[:8]
    done = dataset.cache_dir / name
    if (done / EMBEDDED_FILE).is_file():
        return done
    partial = dataset.cache_dir / f"{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    asyncio.run(_seed_embedded(partial / EMBEDDED_FILE, dataset, progress))
    partial.rename(done)
    return done


def working_copy(source: Path, target: Path) -> Path:
    """A fresh copy of a cached store directory for one run to write into."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
    return target

"""What an answer of `keygraph serve` reports in its `extensions`: its cost
(cost_report.py), the points it did not use given back to its tenant's budget, and in dev
mode (Served.dev) its store calls and waves and how its document was found
(document_cache.py)."""

from __future__ import annotations

from typing import Any

from keygraph.api.shape import Estimate, count_objects

from .cost_report import cost_report, with_budget
from .learnt import Learnt
from .served import Served


def reported(
    served: Served,
    learnt: Learnt,
    tenant: str,
    estimate: Estimate | None,
    charged: bool,
    data: Any,
    found: str | None,
    parted: int = 0,
) -> dict[str, Any]:
    """The extensions of an answer for `tenant` whose operation was estimated so (None:
    before its cost was known), `charged` to the budget when it admitted it, and answered
    `data`, besides `parted` objects in its parts (parted.py); `found`: how its document
    was (None: it was not)."""
    objects = 0 if estimate is None or data is None else count_objects(data, estimate.shape)
    objects += parted
    store, meter = learnt.store, learnt.meter
    cost = cost_report(
        0 if estimate is None else estimate.cost,
        served.max_cost,
        objects,
        store.calls,
        0.0 if meter is None else meter.read_units,
        0.0 if meter is None else meter.write_units,
    )
    if served.budget is not None:
        unused = estimate.cost - objects if charged and estimate is not None else None
        cost = with_budget(cost, served.budget, tenant, unused)
    extensions: dict[str, Any] = {"cost": cost}
    if found is not None:
        served.documents.count(found)
    if served.dev:
        extensions["storeCalls"] = store.calls
        extensions["storeWaves"] = store.waves
        if found is not None:
            extensions["documentCache"] = {"request": found, **served.documents.report()}
    return extensions

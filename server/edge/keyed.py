"""A POST's Idempotency-Key on its way through the request: nothing is written for it until
the operation is admitted (parsed, validated, its variables coerced, within the limits and
its tenant's budget) and about to run. Both execution paths then ask `before_run`
(edge/fast_path.py, and graphql/executor.py under Strawberry's view): a query runs as if it
had no key, a mutation claims the key's record first (edge/idempotency.py)."""

from __future__ import annotations

from graphql import OperationType

from server.edge.idempotency import Answer, Claimed, Ledger, Refused, Writes


class Keyed:
    """The Idempotency-Key of one request: the record's name (idempotency_key.py), the
    request's digest, and what claiming the record gave (`outcome`, None until a mutation
    claims it)."""

    def __init__(self, ledger: Ledger, tenant: str, name: str, request: str) -> None:
        self.ledger = ledger
        self.tenant = tenant
        self.name = name
        self.request = request
        self.writes = Writes()
        self.outcome: Claimed | Answer | Refused | None = None

    async def before_run(self, operation: OperationType) -> bool:
        """Whether the admitted operation runs: any but a mutation does, as if it had no
        key; a mutation once it holds the key's record. Else the endpoint answers the
        outcome (the kept answer, a refusal) and the operation does not run."""
        if operation is not OperationType.MUTATION:
            return True
        if self.outcome is None:
            self.outcome = await self.ledger.claim(self.tenant, self.name, self.request)
        return isinstance(self.outcome, Claimed)

    @property
    def claimed(self) -> Claimed | None:
        """The claim the request holds, if it holds one."""
        return self.outcome if isinstance(self.outcome, Claimed) else None

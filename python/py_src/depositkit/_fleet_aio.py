"""``AsyncDepositFleet``: fleet mode (``docs/fleet.md``) for asyncio.

Its calls are awaitables the library completes on the caller's event loop: owners, commands
and the event log are tasks of the fleet's own runtime (no thread waits for them); joining and
leaving, which start and stop the member's deposit clients, run once on the library's blocking
pool. Cancelling an await drops the call: a command already queued stays queued (its holder may
still run it), a read is abandoned and the caller's cursor did not move, so nothing is lost.
"""

from __future__ import annotations

import typing
from types import TracebackType
from typing import Any, AsyncIterator, Callable, Literal, Optional, Tuple

from ._native import DepositAddresses, DepositFleet, FleetEvent
from .exceptions import DepositSDKError

if typing.TYPE_CHECKING:
    from typing_extensions import Self

    from ._native import _DestinationLike

__all__ = ["AsyncDepositFleet"]


class AsyncDepositFleet:
    """``DepositFleet`` for asyncio: the same keywords, errors and semantics, with the calls
    that reach the database awaited::

        fleet = await depositkit.AsyncDepositFleet.join(
            "postgres://app:secret@db.internal/deposits",
            destination={"chain_id": depositkit.CHAIN.BASE}, services_url=url)
        async with fleet:
            owner = await fleet.add_owner("0x5b38da6a701c568545dcfcb03fcb875f56beddc4")
            result = await fleet.request(owner, "sweep", deposit_id="...")
            async for event in fleet.iter_events(saved_cursor):
                ...                                 # every owner's events, in order

    ``join`` is the constructor (it connects and starts the member's clients). Callbacks
    (``subscribe``) run on a library thread, as for ``DepositFleet``; ``sync`` is the
    ``DepositFleet`` itself, for its plain properties and anything else.
    """

    def __init__(self, fleet: DepositFleet) -> None:
        """Wraps a member joined by ``AsyncDepositFleet.join`` (use that)."""
        self._fleet = fleet

    @classmethod
    async def join(
        cls,
        database_url: str,
        *,
        destination: _DestinationLike,
        name: Optional[str] = None,
        max_connections: int = 8,
        lease_ttl: float = 10.0,
        renew_every: float = 3.0,
        **options: Any,
    ) -> "AsyncDepositFleet":
        """``DepositFleet(database_url, destination=..., ...)``, awaited: connects and joins
        the fleet. The member's awaited calls share its pool (``max_connections``), plus one
        listening connection once ``events`` waits. Same errors as ``DepositFleet()``."""
        fleet = await DepositFleet._join_async(
            database_url,
            destination=destination,
            name=name,
            max_connections=max_connections,
            lease_ttl=lease_ttl,
            renew_every=renew_every,
            **options,
        )
        return cls(fleet)

    @property
    def sync(self) -> DepositFleet:
        """The ``DepositFleet`` under this one (the same member)."""
        return self._fleet

    @property
    def node_id(self) -> str:
        """This member's id (a row of ``dk_nodes``)."""
        return self._fleet.node_id

    @property
    def database_url(self) -> str:
        """The database URL, its password replaced by ``***``."""
        return self._fleet.database_url

    @property
    def running_owners(self) -> list[str]:
        """The owners whose clients run in this process now, sorted (empty once left)."""
        return self._fleet.running_owners

    @property
    def left(self) -> bool:
        """Whether this member left the fleet (``leave()``)."""
        return self._fleet.left

    async def deposit_addresses(self, owner: str) -> Optional[DepositAddresses]:
        """``DepositFleet.deposit_addresses``, awaited: ``None`` until a client of ``owner``
        started once."""
        return await self._fleet._deposit_addresses_async(owner)

    async def owners(self) -> list[str]:
        """``DepositFleet.owners``, awaited."""
        return await self._fleet._owners_async()

    async def add_owner(self, owner: str, *, destination: Optional[_DestinationLike] = None) -> str:
        """``DepositFleet.add_owner``, awaited: the owner, lower-case."""
        return await self._fleet._add_owner_async(owner, destination=destination)

    async def remove_owner(self, owner: str) -> None:
        """``DepositFleet.remove_owner``, awaited."""
        await self._fleet._remove_owner_async(owner)

    async def request(
        self,
        owner: str,
        command: Literal["sweep", "refund", "recover", "set_destination"],
        *,
        deposit_id: Optional[str] = None,
        reason: Optional[str] = None,
        destination: Optional[_DestinationLike] = None,
        timeout: float = 30.0,
    ) -> Any:
        """``DepositFleet.request``, awaited. Cancelled, the command stays queued (its holder
        may still run it)."""
        return await self._fleet._request_async(
            owner, command, deposit_id=deposit_id, reason=reason, destination=destination, timeout=timeout
        )

    async def events(
        self, cursor: Optional[str] = None, max_events: int = 500, timeout: float = 5.0
    ) -> Tuple[list[FleetEvent], str]:
        """``DepositFleet.events``, awaited: the next events after ``cursor`` and the cursor to
        pass next. The listening connection is kept between calls."""
        return await self._fleet._events_async(cursor, max_events, timeout)

    async def iter_events(self, cursor: Optional[str] = None, *, max_events: int = 500) -> AsyncIterator[FleetEvent]:
        """Every event of the log after ``cursor`` (``None``: from the start), in order, as it
        comes; ends once the member left. Save ``event.cursor`` once an event is handled: it is
        where to resume. ``async for event in fleet.iter_events(saved): ...``"""
        while not self._fleet.left:
            try:
                batch, cursor = await self.events(cursor, max_events, 1.0)
            except DepositSDKError:
                if self._fleet.left:
                    return
                raise
            for event in batch:
                yield event

    def subscribe(self, callback: Callable[[FleetEvent], object], cursor: Optional[str] = None) -> int:
        """``DepositFleet.subscribe``: the callback runs on a library thread (use
        ``loop.call_soon_threadsafe`` to reach the loop)."""
        return self._fleet.subscribe(callback, cursor)

    def unsubscribe(self, id: int) -> bool:
        """``DepositFleet.unsubscribe``."""
        return self._fleet.unsubscribe(id)

    async def leave(self) -> None:
        """``DepositFleet.leave``, awaited: stops the callbacks and the clients, hands the
        owners to the others at once. A second call does nothing."""
        await self._fleet._leave_async()

    async def __aenter__(self) -> Self:
        self._fleet.__enter__()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Literal[False]:
        await self.leave()
        return False

    def __repr__(self) -> str:
        return "Async" + repr(self._fleet)

"""The asyncio faces: :class:`AsyncUserRpcClient` and :class:`AsyncDepositClient`.

They have the methods of ``UserRpcClient`` and ``DepositClient``: those that do network I/O or
wait are coroutines here; those that only read or change the client's state (properties,
``status``, ``set_destination``, ``subscribe`` …) are the same plain methods. Arguments, results
and exceptions are the synchronous ones'.

**Never blocking the loop.** An awaited call returns an ``asyncio.Future`` created on the running
loop, which depositkit's runtime completes (through a wake-up pipe the loop watches, once per batch
of answers): no thread per call, no executor, no thread waiting. Each call is a future of the Rust
core run as a task of its runtime (two worker threads for the whole process); its blocking HTTP
runs on the runtime's bounded blocking pool (at most 64 requests at once; more queue), as for the
synchronous clients. ``events()`` and ``next_event()`` wait on a queue the client's event lane
fills: no thread per wait either. Works under asyncio, anyio (asyncio backend) and uvloop; trio is
not supported (no asyncio loop to complete futures on).

**Cancellation.** Cancelling an await (``task.cancel()``, ``asyncio.wait_for``/``timeout``, an
anyio cancel scope) stops the wait at once: ``CancelledError`` is raised in the awaiting task.
What was already started is never undone half way and never repeated:

- a lookup not yet sent is dropped; one on the wire finishes and its answer is discarded;
- ``sweep``, ``refund``, ``recover_funds``: once the call was admitted the client's serial
  executor owns the work, which finishes in the background and is reported as events
  (``events()``, callbacks, ``events_since``) exactly once, with its result in
  ``sweep_result()`` / ``refund_result()``. Asking again for a deposit already credited is
  refused (``NotFoundError`` naming the transaction); nothing is sent twice;
- ``initialize``, ``poll_now`` and the funding calls (``fund_from_wallet`` …) run to their end in
  the background: the client ends ``ready`` (or ``error``), the poll's detections are reported,
  a transfer already sent is confirmed and then detected like any deposit;
- reads (``can_refund``, ``stuck_funds``, the history) are abandoned.

**Timeouts.** Each call is limited by the client's ``call_timeout_ms`` as the synchronous one is
(``DepositTimeoutError``; a sweep that times out goes on, as above).

**Ctrl-C.** ``asyncio.run`` turns SIGINT into cancelling the main task, so an await in progress
ends with ``CancelledError`` then ``KeyboardInterrupt``, as above; no wait holds the GIL, and
depositkit's threads block SIGINT, so the signal always reaches the interpreter.

**Fork.** A client belongs to the process that created it: in a forked child each of its calls
raises ``InternalError``. New clients created in the child work (the runtime and the pools are
per process).
"""

from __future__ import annotations

import asyncio
import typing
from types import TracebackType
from typing import Any, AsyncIterator, Callable, Iterable, List, Literal, Mapping, Optional, Tuple, Union

from ._deposit import DepositEvent
from ._native import (
    CallbackSigner,
    DepositAddresses,
    DepositClient,
    DepositLifecycleEvent,
    DetectedDeposit,
    FundingBalance,
    FundingTransferResult,
    Notification,
    OnrampOrder,
    RecoveryResult,
    RefundEligibility,
    RefundResult,
    SweepResult,
    TokenTransactionsResponse,
    TransactionsResponse,
    UATransaction,
    User,
    UserRpcClient,
)
from .exceptions import DepositSDKError

if typing.TYPE_CHECKING:
    from typing_extensions import Self

    from ._native import _DestinationDict, _DestinationLike, _EvmProviderCallable, _RefundReasonName

__all__ = ["AsyncDepositClient", "AsyncUserRpcClient"]


class AsyncUserRpcClient:
    """``UserRpcClient`` for asyncio: the same constructor, properties and errors, with
    ``get_user_info``, ``get_user_info_by_identity``, ``is_project_user`` and
    ``get_users_info`` (one JSON-RPC batch) as coroutines::

        async with depositkit.AsyncUserRpcClient(url, project_id, server_key) as client:
            users = await asyncio.gather(*(client.get_user_info(u, t) for u, t in pairs))
            same = await client.get_users_info(pairs)   # one request; exceptions as items

    Thousands of lookups may be awaited at once on one loop, with no thread per call: at most
    64 are on the wire at a time (the core runtime's blocking pool), the rest queue; each caller
    awaits its own.
    """

    def __init__(
        self,
        base_url: str,
        project_id: str,
        server_key: str,
        *,
        timeout: Optional[float] = 10.0,
        max_retries: Optional[int] = 3,
        user_agent: Optional[str] = None,
    ) -> None:
        self._client = UserRpcClient(
            base_url, project_id, server_key, timeout=timeout, max_retries=max_retries, user_agent=user_agent
        )

    @property
    def base_url(self) -> str:
        """The URL requests are POSTed to, as given."""
        return self._client.base_url

    @property
    def project_id(self) -> str:
        """The project id the client authenticates as."""
        return self._client.project_id

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._client.closed

    async def get_user_info(self, uuid: str, token: str) -> User:
        """``UserRpcClient.get_user_info``, awaited."""
        return await self._client._get_user_info_async(uuid, token)

    async def get_user_info_by_identity(self, provider: str, uid: str) -> User:
        """``UserRpcClient.get_user_info_by_identity``, awaited."""
        return await self._client._get_user_info_by_identity_async(provider, uid)

    async def is_project_user(self, chain: str, address: str) -> bool:
        """``UserRpcClient.is_project_user``, awaited."""
        return await self._client._is_project_user_async(chain, address)

    async def get_users_info(self, requests: Iterable[Tuple[str, str]]) -> List[Union[User, DepositSDKError]]:
        """``UserRpcClient.get_users_info`` (one JSON-RPC batch), awaited: one ``User`` or
        exception instance per request, in request order."""
        return await self._client._get_users_info_async(requests)

    def close(self) -> None:
        """``UserRpcClient.close``: releases the connections; calls in flight finish."""
        self._client.close()

    async def aclose(self) -> None:
        """``close()``, awaitable (it does not block)."""
        self._client.close()

    async def __aenter__(self) -> Self:
        self._client.__enter__()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Literal[False]:
        self._client.close()
        return False

    def __repr__(self) -> str:
        return "<depositkit.Async" + repr(self._client)[len("<depositkit.") :]


class AsyncDepositClient:
    """``DepositClient`` for asyncio: the same constructor (owner, destination, every option as
    a keyword; ``docs/options.md``) and errors. The calls that do I/O or wait are coroutines —
    ``initialize``, ``poll_now``, ``sweep``, ``refund``, ``can_refund``, ``stuck_funds``,
    ``recover_funds``, ``get_transactions``, ``get_token_transactions``, ``get_transaction``,
    ``connect_evm_wallet``, ``evm_accounts``, ``prompt_evm_account_selection``,
    ``connect_solana_wallet``, ``get_wallet_balances``, ``fund_from_wallet``, ``next_event``,
    ``aclose`` —; the rest are the synchronous client's plain methods and properties, which only
    read or change its state (``status``, ``deposit_addresses``, ``set_destination``,
    ``start_watching``, ``pending_deposits``, ``events_since``, ``subscribe`` …; ``sync``
    is the ``DepositClient`` itself, for anything else)::

        async with depositkit.AsyncDepositClient(owner, {"chain_id": CHAIN.ARBITRUM},
                                                 services_url=url) as client:
            await client.initialize()
            client.start_watching()
            async for event in client.events():
                ...

    Events: ``events()`` yields every event from the client's creation on, in order, and ends
    once the client is closed and every event was taken; ``next_event(timeout)`` takes one.
    They are buffered up to ``event_queue_capacity`` (default 1024; the oldest is then dropped
    and counted in ``dropped_events``). Callbacks (``on_deposit_event=``, ``subscribe``) still
    run on a library thread, as for ``DepositClient``.
    """

    def __init__(
        self,
        owner_address: str,
        destination: _DestinationLike,
        *,
        on_deposit_event: Optional[Callable[[DepositLifecycleEvent], object]] = None,
        signer: Optional[CallbackSigner] = None,
        **options: Any,
    ) -> None:
        self._client = DepositClient(
            owner_address, destination, on_deposit_event=on_deposit_event, signer=signer, **options
        )
        self._inbox = self._client._event_inbox()

    @property
    def sync(self) -> DepositClient:
        """The synchronous ``DepositClient`` under this one (the same client and state)."""
        return self._client

    # --- awaited ------------------------------------------------------------------------------

    async def initialize(self) -> DepositAddresses:
        """``DepositClient.initialize``, awaited."""
        return await self._client._initialize_async()

    async def poll_now(self) -> list[DepositLifecycleEvent]:
        """``DepositClient.poll_now``, awaited."""
        return await self._client._poll_now_async()

    async def sweep(self, deposit_id: str) -> SweepResult:
        """``DepositClient.sweep``, awaited. Cancelled, the sweep goes on (see the module)."""
        return await self._client._sweep_async(deposit_id)

    async def refund(self, deposit_id: str, reason: _RefundReasonName = "user_requested") -> RefundResult:
        """``DepositClient.refund``, awaited. Cancelled, the refund goes on (see the module)."""
        return await self._client._refund_async(deposit_id, reason)

    async def can_refund(self, deposit_id: str) -> RefundEligibility:
        """``DepositClient.can_refund``, awaited."""
        return await self._client._can_refund_async(deposit_id)

    async def stuck_funds(self) -> list[DetectedDeposit]:
        """``DepositClient.stuck_funds``, awaited."""
        return await self._client._stuck_funds_async()

    async def recover_funds(self) -> list[RecoveryResult]:
        """``DepositClient.recover_funds``, awaited."""
        return await self._client._recover_funds_async()

    async def get_transactions(self, page: Optional[int] = None, page_size: Optional[int] = None) -> TransactionsResponse:
        """``DepositClient.get_transactions``, awaited."""
        return await self._client._get_transactions_async(page, page_size)

    async def get_token_transactions(
        self, chain_id: int, address: str, *, page_token: Optional[str] = None, page_size: Optional[int] = None
    ) -> TokenTransactionsResponse:
        """``DepositClient.get_token_transactions``, awaited."""
        return await self._client._get_token_transactions_async(
            chain_id, address, page_token=page_token, page_size=page_size
        )

    async def get_transaction(self, transaction_id: str) -> UATransaction:
        """``DepositClient.get_transaction``, awaited."""
        return await self._client._get_transaction_async(transaction_id)

    async def connect_evm_wallet(self) -> str:
        """``DepositClient.connect_evm_wallet``, awaited."""
        return await self._client._connect_evm_wallet_async()

    async def evm_accounts(self) -> list[str]:
        """``DepositClient.evm_accounts``, awaited."""
        return await self._client._evm_accounts_async()

    async def prompt_evm_account_selection(self) -> list[str]:
        """``DepositClient.prompt_evm_account_selection``, awaited."""
        return await self._client._prompt_evm_account_selection_async()

    async def connect_solana_wallet(self) -> str:
        """``DepositClient.connect_solana_wallet``, awaited."""
        return await self._client._connect_solana_wallet_async()

    async def get_wallet_balances(self) -> list[FundingBalance]:
        """``DepositClient.get_wallet_balances``, awaited. The providers are called on a library
        thread (never on the event loop): a provider must not await the loop it serves."""
        return await self._client._get_wallet_balances_async()

    async def fund_from_wallet(self, balance: FundingBalance, raw_amount: Optional[int] = None) -> FundingTransferResult:
        """``DepositClient.fund_from_wallet``, awaited. Cancelled, a transfer already sent is
        not undone; the watcher detects it like any deposit."""
        return await self._client._fund_from_wallet_async(balance, raw_amount)

    async def next_event(self, timeout: Optional[float] = None) -> Optional[DepositEvent]:
        """The next event, waiting at most ``timeout`` seconds (``None``: until one comes).

        Returns:
            The event; ``None`` on timeout, or once the client is closed and every event was
            taken. An event that arrives as the wait is cancelled stays queued for the next one.
        """
        if timeout is None:
            return await self._inbox.next()
        try:
            return await asyncio.wait_for(self._inbox.next(), timeout)
        except asyncio.TimeoutError:
            return None

    async def events(self) -> AsyncIterator[DepositEvent]:
        """Every event, in order, as it comes; ends once the client is closed and every event
        was taken. ``async for event in client.events(): ...``"""
        while True:
            event = await self._inbox.next()
            if event is None:
                return
            yield event

    async def aclose(self) -> None:
        """``DepositClient.close`` (up to 5 s: the event lane delivers what is queued), awaited;
        ``events()`` ends after the events it queued."""
        await self._client._close_async()

    async def __aenter__(self) -> Self:
        self._client.__enter__()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> Literal[False]:
        await self.aclose()
        return False

    # --- state: the synchronous client's own ---------------------------------------------------

    @property
    def status(self) -> str:
        """``DepositClient.status``."""
        return self._client.status

    @property
    def closed(self) -> bool:
        """``DepositClient.closed``."""
        return self._client.closed

    @property
    def owner_address(self) -> str:
        """``DepositClient.owner_address``."""
        return self._client.owner_address

    @property
    def deposit_addresses(self) -> DepositAddresses:
        """``DepositClient.deposit_addresses``."""
        return self._client.deposit_addresses

    @property
    def account_id(self) -> Optional[str]:
        """``DepositClient.account_id``."""
        return self._client.account_id

    @property
    def is_watching(self) -> bool:
        """``DepositClient.is_watching``."""
        return self._client.is_watching

    @property
    def dropped_events(self) -> int:
        """Events dropped from ``events()``'s buffer because it was full."""
        return self._inbox.dropped

    @property
    def last_event_id(self) -> int:
        """``DepositClient.last_event_id``."""
        return self._client.last_event_id

    @property
    def last_onramp_order(self) -> Optional[OnrampOrder]:
        """``DepositClient.last_onramp_order``."""
        return self._client.last_onramp_order

    def set_destination(
        self,
        destination: Optional[_DestinationLike] = None,
        /,
        *,
        chain_id: Optional[int] = None,
        address: Optional[str] = None,
        token: Optional[str] = None,
    ) -> _DestinationDict:
        """``DepositClient.set_destination``."""
        if destination is not None:
            return self._client.set_destination(destination)
        return self._client.set_destination(chain_id=chain_id, address=address, token=token)

    def get_destination(self) -> _DestinationDict:
        """``DepositClient.get_destination``."""
        return self._client.get_destination()

    def start_watching(self) -> None:
        """``DepositClient.start_watching``: polls every ``polling_interval_ms`` on the core's
        runtime; the events come through ``events()``."""
        self._client.start_watching()

    def stop_watching(self) -> None:
        """``DepositClient.stop_watching``."""
        self._client.stop_watching()

    def pending_deposits(self) -> list[DetectedDeposit]:
        """``DepositClient.pending_deposits``."""
        return self._client.pending_deposits()

    def sweep_result(self, deposit_id: str) -> Optional[SweepResult]:
        """``DepositClient.sweep_result``."""
        return self._client.sweep_result(deposit_id)

    def refund_result(self, deposit_id: str) -> Optional[RefundResult]:
        """``DepositClient.refund_result``."""
        return self._client.refund_result(deposit_id)

    def events_since(self, cursor: Optional[int] = None, limit: Optional[int] = None) -> List[Tuple[int, DepositEvent]]:
        """``DepositClient.events_since``: the event log after ``cursor``."""
        return self._client.events_since(cursor, limit)

    def deposit_history(self, deposit_id: str) -> List[Tuple[int, DepositEvent]]:
        """``DepositClient.deposit_history``."""
        return self._client.deposit_history(deposit_id)

    def notifications(self) -> list[Notification]:
        """``DepositClient.notifications``."""
        return self._client.notifications()

    def dismiss_notification(self, deposit_id: str) -> bool:
        """``DepositClient.dismiss_notification``."""
        return self._client.dismiss_notification(deposit_id)

    def subscribe(self, callback: Callable[[DepositEvent], object]) -> int:
        """``DepositClient.subscribe``: ``callback`` runs on a library thread, not the loop."""
        return self._client.subscribe(callback)

    def unsubscribe(self, id: int) -> bool:
        """``DepositClient.unsubscribe``."""
        return self._client.unsubscribe(id)

    def set_evm_wallet(self, provider: Union[str, _EvmProviderCallable], address: Optional[str] = None) -> None:
        """``DepositClient.set_evm_wallet``."""
        self._client.set_evm_wallet(provider, address)

    def set_solana_wallet(self, provider: Callable[[str, Any], Any], address: Optional[str] = None) -> None:
        """``DepositClient.set_solana_wallet``."""
        self._client.set_solana_wallet(provider, address)

    def open_onramp(self, amount: Optional[Union[float, int]] = None) -> str:
        """``DepositClient.open_onramp``."""
        return self._client.open_onramp(amount)

    def handle_onramp_message(self, message: Union[Mapping[str, Any], str]) -> bool:
        """``DepositClient.handle_onramp_message``."""
        return self._client.handle_onramp_message(message)

    def __repr__(self) -> str:
        return "<depositkit.Async" + repr(self._client)[len("<depositkit.") :]

"""Pure-Python helpers of the deposit client: :class:`DestinationConfig`, the ``DepositEvent``
union."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Union

from ._native import (
    DepositLifecycleEvent,
    ErrorEvent,
    OnrampCompleteEvent,
    OnrampEvent,
    RecoveryEvent,
    RefundEvent,
    StatusChangedEvent,
)

__all__ = ["DepositEvent", "DestinationConfig"]


@dataclasses.dataclass(frozen=True)
class DestinationConfig:
    """Where swept deposits go (spec §2 ``DestinationConfig``), for ``DepositClient(destination=...)``
    and ``DepositClient.set_destination()``. A plain dict with the same keys works too.

    Attributes:
        chain_id: one of the destination chains: ``CHAIN.ETHEREUM``, ``BASE``, ``ARBITRUM``,
            ``BNB`` or ``SOLANA``.
        address: the receiving address; ``None`` means the owner address (EVM chains only). A
            Solana address is kept exactly as given.
        token: the delivered token (a ``TokenType`` or its symbol); ``None`` means USDC. It must
            be deliverable on the chain (``is_supported_destination_token``).

    The client checks the values; this class only holds them.

    >>> DestinationConfig(42161).to_dict()
    {'chainId': 42161}
    >>> DestinationConfig(101, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "USDC").to_dict()["address"]
    'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'
    """

    chain_id: int
    address: Optional[str] = None
    token: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        """The spec's record, camelCase, without the fields left to their defaults."""
        out: dict[str, Any] = {"chainId": int(self.chain_id)}
        if self.address is not None:
            out["address"] = self.address
        if self.token is not None:
            out["token"] = str(self.token)
        return out


DepositEvent = Union[
    DepositLifecycleEvent,
    StatusChangedEvent,
    ErrorEvent,
    RefundEvent,
    RecoveryEvent,
    OnrampEvent,
    OnrampCompleteEvent,
]
"""Any event of a ``DepositClient``: tell them apart by ``event.type`` (``"deposit:lifecycle"``,
``"status:change"``, ``"error"``, ``"refund:update"``, ``"recovery:result"``,
``"onramp:<name>"`` such as ``"onramp:order_created"``, ``"onramp:complete"``) or
``isinstance``."""

"""What the mixins of ``GraphOperations`` call on it, declared once for them.

``RelationWalks`` and ``PathSearch`` run templates and keep what they read per version
of the data; ``GraphOperations`` (and a backend) provide these, and its own methods
come first in its order, so the stubs here are never what runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from middleware.kg.terms import Term

if TYPE_CHECKING:
    from middleware.kg.ordered_rows import Ordering


class VersionedTransport:
    """The transport and the data's version, as a mixin sees them."""

    # whether ``version`` changes with every change of the data (a store that owns its
    # data); only then is what was read kept for later calls
    versions_every_change: bool = False

    @property
    def version(self) -> int:
        raise NotImplementedError  # from GraphOperations

    def _select(
        self, template: str, order: Ordering | None = None, /, **bindings: object
    ) -> list[dict[str, Term]]:
        raise NotImplementedError  # the transport, from GraphOperations

    def refresh(self) -> bool:
        raise NotImplementedError  # from GraphOperations

    def _common_bindings(self) -> dict[str, object]:
        raise NotImplementedError  # from GraphOperations
